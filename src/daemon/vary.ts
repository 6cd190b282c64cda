// The Vary header: a field name added to what an answer already varies on (once; "*" already covers it). Every
// answer adds Origin (CORS) and most add Accept-Encoding (compression), from the same few headers each time: the
// results are remembered per field and header, so an answer does not build the same string again.
import { RememberedAnswers } from '../core/remembered-answers.ts';

/** What adding the field `name` to a Vary header gives, remembered by header. */
function adderOf(name: string): (text: string) => string {
  // The header already names the field, or is "*".
  const named = new RegExp(`(^|,)\\s*(${name.replace(/[^\w-]/g, '\\$&')}|\\*)\\s*(,|$)`, 'i');
  const add = (text: string): string => (named.test(text) ? text : `${text}, ${name}`);
  const results = new RememberedAnswers<string, string>(64);
  return (text) => results.get(text, add);
}

const adders = new RememberedAnswers<string, (text: string) => string>(16);

/** `current` (the answer's Vary so far) with `name` added unless already there. */
export function addToVary(current: string | number | string[] | undefined, name: string): string {
  const text = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  if (text === '') return name;
  return adders.get(name, adderOf)(text);
}
