// The terminal review of `bindery bookdrop import`: one file at a time, accept, edit or skip it, then confirm.
// The state machine is a pure reducer (tested on its own); the ink view only draws it and feeds it keys. Node runs
// TypeScript by stripping types, which leaves JSX alone, so the view is written with React.createElement.
import type * as Ink from 'ink';
import type { Instance } from 'ink';
import type * as ReactNamespace from 'react';
import type { ReactElement } from 'react';
import type { DropMetadata } from '../core/bookdrop/bookdrop-metadata.ts';

export interface ReviewItem {
  id: number;
  fileName: string;
  fileSize: number | null;
  metadata: DropMetadata;
}

export type Decision = 'accept' | 'skip';

export const EDIT_FIELDS = [
  ['title', 'Title'],
  ['authors', 'Authors'],
  ['seriesName', 'Series'],
  ['seriesNumber', 'Series #'],
  ['publisher', 'Publisher'],
  ['publishedDate', 'Published'],
] as const;
export type EditField = (typeof EDIT_FIELDS)[number][0];

export interface ReviewState {
  items: ReviewItem[];
  decisions: (Decision | undefined)[];
  /** Files whose metadata was edited here (their edits go with the import). */
  edited: boolean[];
  index: number;
  mode: 'review' | 'edit' | 'confirm' | 'done';
  edit: { field: number; values: Record<EditField, string> } | undefined;
  /** How the review ended: import the accepted files, or nothing. */
  outcome: 'import' | 'cancel' | undefined;
}

/** What ink reports for a key press (the parts the review uses). */
export interface KeyPress {
  input: string;
  return?: boolean;
  escape?: boolean;
  tab?: boolean;
  shift?: boolean;
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
}

export function initialReview(items: ReviewItem[]): ReviewState {
  return { items, decisions: items.map(() => undefined), edited: items.map(() => false), index: 0, mode: items.length === 0 ? 'done' : 'review', edit: undefined, outcome: items.length === 0 ? 'cancel' : undefined };
}

function fieldText(meta: DropMetadata, field: EditField): string {
  const value = meta[field];
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined ? '' : String(value);
}

/** Edited text back into metadata; a value that does not read (a series number that is not one) is left out. */
export function applyEdits(meta: DropMetadata, values: Record<EditField, string>): DropMetadata {
  const out: DropMetadata = { ...meta };
  const text = (v: string): string | undefined => (v.trim() === '' ? undefined : v.trim());
  const set = <K extends keyof DropMetadata>(key: K, value: DropMetadata[K] | undefined): void => {
    if (value === undefined) delete out[key];
    else out[key] = value;
  };
  set('title', text(values.title));
  const authors = values.authors.split(',').map((a) => a.trim()).filter((a) => a !== '');
  set('authors', authors.length > 0 ? authors : undefined);
  set('seriesName', text(values.seriesName));
  const number = Number(values.seriesNumber.trim());
  set('seriesNumber', values.seriesNumber.trim() !== '' && Number.isFinite(number) ? number : undefined);
  set('publisher', text(values.publisher));
  const date = values.publishedDate.trim();
  set('publishedDate', /^\d{4}$/.test(date) ? `${date}-01-01` : /^\d{4}-\d{2}-\d{2}$/.test(date) ? date : undefined);
  return out;
}

function advance(state: ReviewState, decision: Decision): ReviewState {
  const decisions = [...state.decisions];
  decisions[state.index] = decision;
  const next = state.index + 1;
  return next >= state.items.length ? { ...state, decisions, mode: 'confirm' } : { ...state, decisions, index: next };
}

function startEdit(state: ReviewState): ReviewState {
  const meta = (state.items[state.index] as ReviewItem).metadata;
  const values = Object.fromEntries(EDIT_FIELDS.map(([field]) => [field, fieldText(meta, field)])) as Record<EditField, string>;
  return { ...state, mode: 'edit', edit: { field: 0, values } };
}

function reduceEdit(state: ReviewState, key: KeyPress): ReviewState {
  const edit = state.edit as NonNullable<ReviewState['edit']>;
  if (key.escape) return { ...state, mode: 'review', edit: undefined };
  if (key.return) {
    const items = [...state.items];
    const item = items[state.index] as ReviewItem;
    items[state.index] = { ...item, metadata: applyEdits(item.metadata, edit.values) };
    const edited = [...state.edited];
    edited[state.index] = true;
    return { ...state, items, edited, mode: 'review', edit: undefined };
  }
  const count = EDIT_FIELDS.length;
  if (key.downArrow || (key.tab && !key.shift)) return { ...state, edit: { ...edit, field: (edit.field + 1) % count } };
  if (key.upArrow || (key.tab && key.shift)) return { ...state, edit: { ...edit, field: (edit.field + count - 1) % count } };
  const name = (EDIT_FIELDS[edit.field] as (typeof EDIT_FIELDS)[number])[0];
  const current = edit.values[name];
  if (key.backspace || key.delete) return { ...state, edit: { ...edit, values: { ...edit.values, [name]: Array.from(current).slice(0, -1).join('') } } };
  if (key.ctrl && key.input === 'u') return { ...state, edit: { ...edit, values: { ...edit.values, [name]: '' } } };
  // eslint-disable-next-line no-control-regex -- keys that are control characters are not text
  if (key.input && !key.ctrl && !/[\x00-\x1f\x7f]/.test(key.input)) return { ...state, edit: { ...edit, values: { ...edit.values, [name]: current + key.input } } };
  return state;
}

export function reviewReducer(state: ReviewState, key: KeyPress): ReviewState {
  if (state.mode === 'done') return state;
  if (state.mode === 'edit') return reduceEdit(state, key);
  if (state.mode === 'confirm') {
    if (key.input === 'y' || key.input === 'Y' || key.return) {
      const any = state.decisions.some((d) => d === 'accept');
      return { ...state, mode: 'done', outcome: any ? 'import' : 'cancel' };
    }
    if (key.input === 'n' || key.input === 'N' || key.escape || key.input === 'q') return { ...state, mode: 'done', outcome: 'cancel' };
    if (key.input === 'b' || key.leftArrow) return { ...state, mode: 'review', index: state.items.length - 1 };
    return state;
  }
  // review
  if (key.input === 'a' || key.return) return advance(state, 'accept');
  if (key.input === 's' || key.rightArrow) return advance(state, 'skip');
  if (key.input === 'e') return startEdit(state);
  if ((key.input === 'b' || key.leftArrow) && state.index > 0) return { ...state, index: state.index - 1 };
  if (key.input === 'A') {
    const decisions = state.decisions.map((d, i) => (i >= state.index ? 'accept' : d));
    return { ...state, decisions, mode: 'confirm' };
  }
  if (key.input === 'q' || key.escape) {
    const decisions = state.decisions.map((d, i) => (i >= state.index ? d ?? 'skip' : d));
    return { ...state, decisions, mode: 'confirm' };
  }
  return state;
}

export interface ReviewResult {
  outcome: 'import' | 'cancel';
  accepted: { id: number; metadata: DropMetadata; edited: boolean }[];
}

export function reviewResult(state: ReviewState): ReviewResult {
  if (state.outcome !== 'import') return { outcome: 'cancel', accepted: [] };
  return {
    outcome: 'import',
    accepted: state.items.flatMap((item, i) => (state.decisions[i] === 'accept' ? [{ id: item.id, metadata: item.metadata, edited: state.edited[i] ?? false }] : [])),
  };
}

function size(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export interface ReviewViewOptions {
  libraryName: string;
  /** Where a file would go with this metadata (relative to the library folder). */
  targetOf: (item: ReviewItem) => string;
}

type InkModule = typeof Ink;
type ReactModule = typeof ReactNamespace;

function reviewApp(React: ReactModule, ink: InkModule, items: ReviewItem[], view: ReviewViewOptions, onDone: (result: ReviewResult) => void): () => ReactElement {
  const h = React.createElement;
  const { Box, Text, useApp, useInput } = ink;
  return function BookdropReview(): ReactElement {
    const [state, setState] = React.useState(() => initialReview(items));
    const app = useApp();
    useInput((input, key) => {
      setState((s) => reviewReducer(s, { input, ...key }));
    });
    React.useEffect(() => {
      if (state.mode !== 'done') return;
      onDone(reviewResult(state));
      app.exit();
    }, [state, app]);

    const total = state.items.length;
    if (state.mode === 'done') {
      const accepted = state.decisions.filter((d) => d === 'accept').length;
      return h(Text, null, state.outcome === 'import' ? `Importing ${accepted} file${accepted === 1 ? '' : 's'} into ${view.libraryName}…` : 'Nothing imported.');
    }
    if (state.mode === 'confirm') {
      const accepted = state.decisions.filter((d) => d === 'accept').length;
      return h(
        Box,
        { flexDirection: 'column' },
        h(Text, { bold: true }, `${accepted} of ${total} accepted, ${total - accepted} skipped.`),
        h(Text, null, `Import ${accepted} file${accepted === 1 ? '' : 's'} into ${view.libraryName}? [y]es  [n]o  [b]ack`),
      );
    }
    const item = state.items[state.index] as ReviewItem;
    const meta = item.metadata;
    const decision = state.decisions[state.index];
    const line = (label: string, value: string): ReactElement => h(Text, { key: label }, h(Text, { dimColor: true }, `${label.padEnd(10)} `), value);
    const series = meta.seriesName ? `${meta.seriesName}${meta.seriesNumber !== undefined ? ` #${meta.seriesNumber}` : ''}` : '';
    const body =
      state.mode === 'edit' && state.edit
        ? EDIT_FIELDS.map(([field, label], i) => {
            const active = i === (state.edit as NonNullable<ReviewState['edit']>).field;
            return h(Text, { key: field, ...(active ? { color: 'cyan' } : {}) }, `${active ? '›' : ' '} ${label.padEnd(10)} ${(state.edit as NonNullable<ReviewState['edit']>).values[field]}${active ? '▏' : ''}`);
          })
        : [
            line('Title', meta.title ?? ''),
            line('Authors', (meta.authors ?? []).join(', ')),
            line('Series', series),
            line('Publisher', meta.publisher ?? ''),
            line('Published', meta.publishedDate ?? ''),
            line('Goes to', view.targetOf(item)),
          ];
    const help = state.mode === 'edit' ? '↑/↓ field  type to change  Enter save  Esc cancel' : '[a]ccept  [e]dit  [s]kip  [b]ack  [A]ccept the rest  [q]uit';
    return h(
      Box,
      { flexDirection: 'column' },
      h(Text, { bold: true }, `Bookdrop ${state.index + 1}/${total}  ${item.fileName}  ${size(item.fileSize)}${decision ? `  (${decision === 'accept' ? 'accepted' : 'skipped'})` : ''}${state.edited[state.index] ? '  (edited)' : ''}`),
      ...body,
      h(Text, { dimColor: true }, help),
    );
  };
}

export interface ReviewStreams {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** Runs the review on the terminal (or the given streams) and resolves with what the user decided. */
export async function runReview(items: ReviewItem[], view: ReviewViewOptions, streams: ReviewStreams = {}): Promise<ReviewResult> {
  const [React, ink] = await Promise.all([import('react'), import('ink')]);
  let result: ReviewResult = { outcome: 'cancel', accepted: [] };
  const App = reviewApp(React, ink, items, view, (r) => (result = r));
  const instance: Instance = ink.render(React.createElement(App), {
    exitOnCtrlC: true,
    patchConsole: false,
    // The caller only starts a review on a terminal; a CI variable left in the user's shell must not hide the screens.
    interactive: true,
    ...(streams.stdin ? { stdin: streams.stdin } : {}),
    ...(streams.stdout ? { stdout: streams.stdout } : {}),
  });
  await instance.waitUntilExit();
  return result;
}
