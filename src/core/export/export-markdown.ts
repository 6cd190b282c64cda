// A book's highlights, notes and bookmarks as one Markdown page, for reading outside Bindery.

export interface MarkdownBook {
  title: string | null;
  authors: string[];
  seriesName: string | null;
  seriesNumber: number | null;
}

export interface MarkdownAnnotation {
  text: string;
  note: string | null;
  chapterTitle: string | null;
  color: string | null;
  createdAt: string;
}

export interface MarkdownNote {
  title: string | null;
  content: string;
  selectedText: string | null;
  chapterTitle: string | null;
  createdAt: string;
}

export interface MarkdownBookmark {
  title: string | null;
  notes: string | null;
  createdAt: string;
}

function quote(text: string): string {
  return text
    .trim()
    .split(/\r?\n/)
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
}

function day(iso: string): string {
  return iso.slice(0, 10);
}

export function bookMarkdown(book: MarkdownBook, annotations: MarkdownAnnotation[], notes: MarkdownNote[], bookmarks: MarkdownBookmark[]): string {
  const lines: string[] = [`# ${book.title ?? 'Untitled'}`, ''];
  const byline = [book.authors.join(', '), book.seriesName ? `${book.seriesName}${book.seriesNumber !== null ? ` #${book.seriesNumber}` : ''}` : ''].filter(Boolean).join(' · ');
  if (byline) lines.push(`*${byline}*`, '');
  if (annotations.length > 0) {
    lines.push('## Highlights', '');
    for (const a of annotations) {
      lines.push(quote(a.text), '');
      const where = [a.chapterTitle, day(a.createdAt)].filter(Boolean).join(', ');
      lines.push(`— ${where}`, '');
      if (a.note?.trim()) lines.push(a.note.trim(), '');
    }
  }
  if (notes.length > 0) {
    lines.push('## Notes', '');
    for (const n of notes) {
      lines.push(`### ${n.title?.trim() || n.chapterTitle || day(n.createdAt)}`, '');
      if (n.selectedText?.trim()) lines.push(quote(n.selectedText), '');
      lines.push(n.content.trim(), '');
    }
  }
  if (bookmarks.length > 0) {
    lines.push('## Bookmarks', '');
    for (const b of bookmarks) lines.push(`- ${b.title?.trim() || 'Bookmark'} (${day(b.createdAt)})${b.notes?.trim() ? `: ${b.notes.trim()}` : ''}`);
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** A file name for a book's page: its title without characters file systems refuse, and its ref to stay unique. */
export function markdownName(title: string | null, ref: number): string {
  const safe = [...(title ?? 'Untitled')]
    .map((c) => (c.charCodeAt(0) < 32 || '/\\:*?"<>|'.includes(c) ? '_' : c))
    .join('')
    .replace(/^\.+/, '_')
    .trim()
    .slice(0, 80);
  return `${safe || 'Untitled'} [${ref}].md`;
}
