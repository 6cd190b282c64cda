// The migrations are written once, in the types and defaults SQLite reads; on PostgreSQL this plugin turns their DDL
// into the equivalent there. It is the only place that knows the two engines' schema vocabularies differ.
import {
  ColumnDefinitionNode,
  DataTypeNode,
  GeneratedNode,
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RawNode,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/** SQLite's integer is 64-bit (sizes, epoch milliseconds); its real is a double. */
const TYPES: Partial<Record<string, DataTypeNode['dataType']>> = {
  integer: 'bigint',
  real: 'double precision',
  blob: 'bytea',
};

const SQLITE_NOW = /\(?\s*strftime\('%Y-%m-%dT%H:%M:%fZ',\s*'now'\)\s*\)?/gi;
/** The same text, ISO 8601 in UTC with milliseconds: what every timestamp column holds. */
export const POSTGRES_NOW = `(to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * `column COLLATE NOCASE` (an index expression) becomes `lower(column)`: in a database whose character type is C,
 * lower() folds ASCII letters only, exactly as SQLite's NOCASE does.
 */
const NOCASE_EXPRESSION = /([A-Za-z_][A-Za-z0-9_.]*)\s+collate\s+nocase/gi;
const BARE_NOCASE = /^\s*collate\s+nocase\s*$/i;

export function postgresDdlText(text: string): string {
  return text.replace(SQLITE_NOW, POSTGRES_NOW).replace(NOCASE_EXPRESSION, 'lower($1)');
}

class PostgresSchemaTransformer extends OperationNodeTransformer {
  protected override transformDataType(node: DataTypeNode): DataTypeNode {
    const mapped = TYPES[node.dataType];
    return mapped ? DataTypeNode.create(mapped) : node;
  }

  protected override transformColumnDefinition(node: ColumnDefinitionNode): ColumnDefinitionNode {
    const transformed = super.transformColumnDefinition(node);
    // A column-level `COLLATE NOCASE` has no PostgreSQL counterpart; the code compares such columns through lower().
    const endModifiers = transformed.endModifiers?.filter((m) => !(m.kind === 'RawNode' && BARE_NOCASE.test((m as RawNode).sqlFragments.join(''))));
    const withoutNocase = { ...transformed, endModifiers } as ColumnDefinitionNode;
    if (!node.autoIncrement) return withoutNocase;
    return ColumnDefinitionNode.cloneWith(
      { ...withoutNocase, autoIncrement: false } as ColumnDefinitionNode,
      { generated: GeneratedNode.create({ byDefault: true, identity: true }) },
    );
  }

  protected override transformRaw(node: RawNode): RawNode {
    const sqlFragments = node.sqlFragments.map(postgresDdlText);
    return super.transformRaw({ ...node, sqlFragments });
  }
}

export class PostgresSchemaPlugin implements KyselyPlugin {
  private readonly transformer = new PostgresSchemaTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node, args.queryId);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
