// Parser of the file-naming pattern language (Grimmory's library `fileNamingPattern` / `upload_file_pattern`).
//
//   pattern     := (optional | placeholder | text)*
//   optional    := '<' body ('|' body)? '>'        a block holds no '<' or '>' (blocks do not nest)
//   placeholder := '{' name (':' modifier)? '}'    name has no '}' or ':'; modifier has no '}'
//
// A '<' or '{' that does not start a well-formed block or placeholder is plain text. Only the first '|' of a block
// separates the fallback; later ones are text of the fallback.

export const PLACEHOLDERS = [
  'authors', 'title', 'subtitle', 'year', 'series', 'seriesIndex', 'language', 'publisher', 'isbn', 'currentFilename', 'extension',
] as const;
export type PlaceholderName = (typeof PLACEHOLDERS)[number];

export const MODIFIERS = ['first', 'sort', 'initial', 'upper', 'lower'] as const;
export type Modifier = (typeof MODIFIERS)[number];

export interface TextNode {
  type: 'text';
  text: string;
}

export interface PlaceholderNode {
  type: 'placeholder';
  name: string;
  /** Null when the placeholder has no `:modifier`. */
  modifier: string | null;
  /** The placeholder as written, e.g. `{authors:sort}` (unknown placeholders are kept as written). */
  raw: string;
}

export type InlineNode = TextNode | PlaceholderNode;

export interface OptionalNode {
  type: 'optional';
  primary: InlineNode[];
  /** Null when the block has no `|`; an empty list for `<{x}|>`. */
  fallback: InlineNode[] | null;
  raw: string;
}

export type PatternNode = InlineNode | OptionalNode;

export interface ParsedPattern {
  source: string;
  nodes: PatternNode[];
}

const BLOCK = /<([^<>]*)>/y;
const PLACEHOLDER = /\{([^}:]+)(?::([^}]+))?\}/y;

function pushText(nodes: InlineNode[] | PatternNode[], text: string): void {
  if (text === '') return;
  const last = nodes[nodes.length - 1];
  if (last?.type === 'text') last.text += text;
  else nodes.push({ type: 'text', text });
}

/** Text with placeholders (no blocks): the inside of a block, or the text between blocks. */
export function parseInline(source: string): InlineNode[] {
  const nodes: InlineNode[] = [];
  let i = 0;
  let textStart = 0;
  while (i < source.length) {
    const brace = source.indexOf('{', i);
    if (brace === -1) break;
    PLACEHOLDER.lastIndex = brace;
    const m = PLACEHOLDER.exec(source);
    if (!m) {
      i = brace + 1;
      continue;
    }
    pushText(nodes, source.slice(textStart, brace));
    nodes.push({ type: 'placeholder', name: m[1] as string, modifier: m[2] ?? null, raw: m[0] });
    i = textStart = brace + m[0].length;
  }
  pushText(nodes, source.slice(textStart));
  return nodes;
}

export function parsePattern(source: string): ParsedPattern {
  const nodes: PatternNode[] = [];
  let i = 0;
  let textStart = 0;
  const flushText = (end: number): void => {
    for (const node of parseInline(source.slice(textStart, end))) {
      if (node.type === 'text') pushText(nodes, node.text);
      else nodes.push(node);
    }
  };
  while (i < source.length) {
    const open = source.indexOf('<', i);
    if (open === -1) break;
    BLOCK.lastIndex = open;
    const m = BLOCK.exec(source);
    if (!m) {
      i = open + 1;
      continue;
    }
    flushText(open);
    const body = m[1] as string;
    const bar = body.indexOf('|');
    nodes.push({
      type: 'optional',
      primary: parseInline(bar === -1 ? body : body.slice(0, bar)),
      fallback: bar === -1 ? null : parseInline(body.slice(bar + 1)),
      raw: m[0],
    });
    i = textStart = open + m[0].length;
  }
  flushText(source.length);
  return { source, nodes };
}

/** Every placeholder of a pattern, in order, including those inside blocks. */
export function placeholdersOf(parsed: ParsedPattern): PlaceholderNode[] {
  const out: PlaceholderNode[] = [];
  for (const node of parsed.nodes) {
    if (node.type === 'placeholder') out.push(node);
    else if (node.type === 'optional') {
      for (const n of [...node.primary, ...(node.fallback ?? [])]) if (n.type === 'placeholder') out.push(n);
    }
  }
  return out;
}

/** Placeholder names and modifiers the language does not know (they are not errors: unknown names stay literal). */
export function unknownParts(source: string): { placeholders: string[]; modifiers: string[] } {
  const all = placeholdersOf(parsePattern(source));
  const placeholders = [...new Set(all.filter((p) => !(PLACEHOLDERS as readonly string[]).includes(p.name)).map((p) => p.raw))];
  const modifiers = [...new Set(all.filter((p) => p.modifier !== null && !(MODIFIERS as readonly string[]).includes(p.modifier)).map((p) => p.modifier as string))];
  return { placeholders, modifiers };
}
