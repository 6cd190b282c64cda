// Checking a magic shelf's rule JSON (behaviors.md §3) before it is stored. The evaluator (opds/magic-shelf-rules.ts)
// skips what it cannot understand, as Grimmory does; a save is stricter: JSON that is not a rule group, an unknown
// field or operator, values that are objects, and trees too deep or too large are refused. Rules the web UI leaves
// half-filled (no field or no operator chosen yet) are allowed: they match nothing and are skipped, as in Grimmory.

/** RuleField JSON names (enums.md). */
export const RULE_FIELDS: ReadonlySet<string> = new Set([
  'library', 'shelf', 'title', 'subtitle', 'authors', 'categories', 'publisher', 'publishedDate', 'seriesName', 'seriesNumber',
  'seriesTotal', 'pageCount', 'language', 'isbn13', 'isbn10', 'amazonRating', 'amazonReviewCount', 'goodreadsRating',
  'goodreadsReviewCount', 'hardcoverRating', 'hardcoverReviewCount', 'ranobedbRating', 'personalRating', 'fileType', 'fileSize',
  'readStatus', 'dateFinished', 'lastReadTime', 'metadataScore', 'moods', 'tags', 'genre', 'ageRating', 'contentRating', 'addedOn',
  'lubimyczytacRating', 'description', 'narrator', 'audibleRating', 'audibleReviewCount', 'abridged', 'audiobookDuration',
  'audiobookCodec', 'audiobookChapterCount', 'audiobookBitrate', 'isPhysical', 'seriesStatus', 'seriesGaps', 'seriesPosition',
  'readingProgress', 'metadataPresence',
]);

/** RuleOperator JSON names (enums.md). */
export const RULE_OPERATORS: ReadonlySet<string> = new Set([
  'equals', 'not_equals', 'contains', 'does_not_contain', 'starts_with', 'ends_with', 'greater_than', 'greater_than_equal_to',
  'less_than', 'less_than_equal_to', 'in_between', 'is_empty', 'is_not_empty', 'includes_any', 'excludes_all', 'includes_all',
  'within_last', 'older_than', 'this_period',
]);

/** JoinType JSON names. */
const JOINS: ReadonlySet<string> = new Set(['and', 'or']);

export const MAGIC_SHELF_LIMITS = {
  /** Characters of filterJson; what the web UI builds is a few hundred. */
  json: 256 * 1024,
  /** Nested groups below the root (the evaluator stops looking at 32). */
  depth: 16,
  /** Rules and groups in the whole tree. */
  nodes: 1000,
  /** Items of one list value, and characters of one text value. */
  listItems: 1000,
  text: 4000,
} as const;

const MAX_PROBLEMS = 20;

type Node = Record<string, unknown>;

function isObject(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const blank = (value: unknown): boolean => value === undefined || value === null || value === '';

class Walk {
  readonly problems: string[] = [];
  nodes = 0;

  add(path: string, message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(`${path}: ${message}`);
  }

  scalar(path: string, value: unknown): void {
    if (value === null || typeof value === 'boolean') return;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) this.add(path, 'must be a finite number');
      return;
    }
    if (typeof value === 'string') {
      if (value.length > MAGIC_SHELF_LIMITS.text) this.add(path, `is longer than ${MAGIC_SHELF_LIMITS.text} characters`);
      return;
    }
    this.add(path, 'must be text, a number, a boolean or a list of those');
  }

  value(path: string, value: unknown): void {
    if (value === undefined) return;
    if (!Array.isArray(value)) return this.scalar(path, value);
    if (value.length > MAGIC_SHELF_LIMITS.listItems) return this.add(path, `has more than ${MAGIC_SHELF_LIMITS.listItems} items`);
    value.forEach((item, i) => this.scalar(`${path}[${i}]`, item));
  }

  name(path: string, value: unknown, known: ReadonlySet<string>, what: string): void {
    if (blank(value)) return;
    if (typeof value !== 'string') return this.add(path, `must be a ${what} name`);
    if (!known.has(value)) this.add(path, `unknown ${what} '${value.slice(0, 64)}'`);
  }

  rule(path: string, rule: Node): void {
    this.name(`${path}.field`, rule.field, RULE_FIELDS, 'field');
    this.name(`${path}.operator`, rule.operator, RULE_OPERATORS, 'operator');
    for (const key of ['value', 'valueStart', 'valueEnd'] as const) this.value(`${path}.${key}`, rule[key]);
  }

  group(path: string, group: Node, depth: number): void {
    if (depth > MAGIC_SHELF_LIMITS.depth) return this.add(path, `groups are nested deeper than ${MAGIC_SHELF_LIMITS.depth} levels`);
    if (!blank(group.join) && !(typeof group.join === 'string' && JOINS.has(group.join))) this.add(`${path}.join`, "must be 'and' or 'or'");
    if (!blank(group.name) && typeof group.name !== 'string') this.add(`${path}.name`, 'must be text');
    if (group.rules === undefined || group.rules === null) return;
    if (!Array.isArray(group.rules)) return this.add(`${path}.rules`, 'must be a list');
    for (const [i, child] of group.rules.entries()) {
      const at = `${path}.rules[${i}]`;
      if (++this.nodes > MAGIC_SHELF_LIMITS.nodes) return this.add(path, `more than ${MAGIC_SHELF_LIMITS.nodes} rules`);
      if (!isObject(child)) {
        this.add(at, 'must be a rule or a group object');
        continue;
      }
      if (child.type === 'group') this.group(at, child, depth + 1);
      else this.rule(at, child);
    }
  }
}

/** What is wrong with a filterJson, each as `<path>: <problem>`; empty when it may be stored. */
export function magicShelfRuleProblems(filterJson: string): string[] {
  if (filterJson.length > MAGIC_SHELF_LIMITS.json) return [`is longer than ${MAGIC_SHELF_LIMITS.json} characters`];
  let root: unknown;
  try {
    root = JSON.parse(filterJson);
  } catch (error) {
    return [`is not valid JSON (${(error as Error).message.slice(0, 120)})`];
  }
  if (!isObject(root)) return ['must be a rule group object'];
  const walk = new Walk();
  if (!blank(root.type) && root.type !== 'group') walk.add('$.type', "must be 'group'");
  walk.group('$', root, 0);
  return walk.problems;
}
