// The Vary header: a field name added to what an answer already varies on (once; "*" already covers it). Every
// answer adds Origin (CORS) and most add Accept-Encoding (compression), from the same few headers each time: the
// results are remembered per field and header, so an answer does not build the same string again.

/** Remembered results per field; emptied when full (an answer's own Vary values are few). */
const REMEMBERED = 64;

interface Field {
  /** The header already names the field, or is "*". */
  named: RegExp;
  results: Map<string, string>;
}

const fields = new Map<string, Field>();

function fieldOf(name: string): Field {
  let field = fields.get(name);
  if (!field) fields.set(name, (field = { named: new RegExp(`(^|,)\\s*(${name.replace(/[^\w-]/g, '\\$&')}|\\*)\\s*(,|$)`, 'i'), results: new Map() }));
  return field;
}

/** `current` (the answer's Vary so far) with `name` added unless already there. */
export function addToVary(current: string | number | string[] | undefined, name: string): string {
  const text = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  if (text === '') return name;
  const field = fieldOf(name);
  let result = field.results.get(text);
  if (result === undefined) {
    result = field.named.test(text) ? text : `${text}, ${name}`;
    if (field.results.size >= REMEMBERED) field.results.clear();
    field.results.set(text, result);
  }
  return result;
}
