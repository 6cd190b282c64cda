// A streaming reader of the INSERT statements mysqldump writes: text goes in chunk by chunk (a chunk may end anywhere,
// even inside a string), rows come out as arrays of values. Strings follow MySQL's escapes; bare words are numbers,
// NULL, or hex literals. Memory is one row at a time, whatever the statement's size.
export type SqlValue = string | number | null;

export interface ParsedRow {
  table: string;
  /** The statement's column list, when it names one (`mysqldump --complete-insert`). */
  columns: string[] | null;
  values: SqlValue[];
}

const ESCAPES: Record<string, string> = { '0': '\0', n: '\n', r: '\r', t: '\t', b: '\b', Z: '\x1a' };
const HEAD = /^\s*INSERT\s+(?:IGNORE\s+)?INTO\s+`?([^`\s(]+)`?\s*(?:\(([^)]*)\))?\s*VALUES\s*$/i;
const CHARSET_INTRODUCER = /^_[a-z0-9]+$/i;

type State = 'head' | 'between' | 'value' | 'bare' | 'string' | 'escape' | 'quote' | 'separator';

export class InsertParser {
  private state: State = 'head';
  private head = '';
  private table = '';
  private columns: string[] | null = null;
  private values: SqlValue[] = [];
  private text = '';

  /** Parses a chunk; returns the rows it completed. */
  push(chunk: string): ParsedRow[] {
    const rows: ParsedRow[] = [];
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      switch (this.state) {
        case 'head': {
          // Up to and including the VALUES keyword; comments and other statements in between are skipped.
          const ch = chunk[i++] as string;
          if (ch === ';' || ch === '\n') {
            this.head = '';
            break;
          }
          this.head += ch;
          if (/VALUES$/i.test(this.head)) {
            const match = HEAD.exec(this.head);
            if (match) {
              this.table = match[1] as string;
              this.columns = match[2] ? match[2].split(',').map((c) => c.trim().replace(/^`|`$/g, '')) : null;
              this.state = 'between';
            }
            this.head = '';
          } else if (this.head.length > 4096) this.head = this.head.slice(-64);
          break;
        }
        case 'between': {
          const ch = chunk[i++] as string;
          if (ch === '(') {
            this.values = [];
            this.state = 'value';
          } else if (ch === ';') this.state = 'head';
          break;
        }
        case 'value': {
          const ch = chunk[i] as string;
          if (ch === "'") {
            this.text = '';
            this.state = 'string';
            i++;
          } else if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') i++;
          else if (ch === ')') {
            i++;
            rows.push(this.finishRow());
          } else {
            this.text = '';
            this.state = 'bare';
          }
          break;
        }
        case 'bare': {
          // A number, NULL, a hex literal, or a charset introducer before a string (`_binary '…'`).
          const start = i;
          while (i < n && chunk[i] !== ',' && chunk[i] !== ')' && chunk[i] !== "'") i++;
          this.text += chunk.slice(start, i);
          if (i === n) break;
          const ch = chunk[i] as string;
          if (ch === "'" && CHARSET_INTRODUCER.test(this.text.trim())) {
            this.text = '';
            this.state = 'string';
            i++;
            break;
          }
          this.values.push(bareValue(this.text.trim()));
          i++;
          if (ch === ')') rows.push(this.finishRow());
          else this.state = 'value';
          break;
        }
        case 'string': {
          let j = i;
          while (j < n && chunk[j] !== "'" && chunk[j] !== '\\') j++;
          this.text += chunk.slice(i, j);
          i = j;
          if (i === n) break;
          this.state = chunk[i] === '\\' ? 'escape' : 'quote';
          i++;
          break;
        }
        case 'escape': {
          const ch = chunk[i++] as string;
          // \% and \_ keep their backslash, as MySQL reads them; every other escaped character stands for itself.
          this.text += ESCAPES[ch] ?? (ch === '%' || ch === '_' ? `\\${ch}` : ch);
          this.state = 'string';
          break;
        }
        case 'quote': {
          // A closing quote, unless doubled ('') for a quote inside the string.
          if (chunk[i] === "'") {
            this.text += "'";
            i++;
            this.state = 'string';
            break;
          }
          this.values.push(this.text);
          this.text = '';
          this.state = 'separator';
          break;
        }
        case 'separator': {
          // After a string: a comma before the next value, or the tuple's end.
          const ch = chunk[i++] as string;
          if (ch === ',') this.state = 'value';
          else if (ch === ')') rows.push(this.finishRow());
          break;
        }
      }
    }
    return rows;
  }

  private finishRow(): ParsedRow {
    this.state = 'between';
    const row = { table: this.table, columns: this.columns, values: this.values };
    this.values = [];
    return row;
  }
}

function bareValue(word: string): SqlValue {
  if (/^null$/i.test(word)) return null;
  if (/^0x[0-9a-f]*$/i.test(word)) return Buffer.from(word.slice(2), 'hex').toString('utf8');
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(word)) return Number(word);
  return word;
}
