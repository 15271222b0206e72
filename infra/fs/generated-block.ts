import { readFile, writeFile } from 'node:fs/promises';

/**
 * Generated parts of hand-written docs: the text between `<!-- NAME:begin -->` and
 * `<!-- NAME:end -->` is replaced by a generator and compared with it by a test.
 */

/** Where the named block's content starts and ends in the text; undefined without its markers. */
function bounds(text: string, name: string): { from: number; to: number } | undefined {
  const begin = `<!-- ${name}:begin -->\n`;
  const start = text.indexOf(begin);
  const to = start < 0 ? -1 : text.indexOf(`<!-- ${name}:end -->`, start);
  return start < 0 || to < 0 ? undefined : { from: start + begin.length, to };
}

export function replaceBlock(text: string, name: string, content: string): string {
  const at = bounds(text, name);
  if (!at) throw new Error(`no <!-- ${name}:begin --> … <!-- ${name}:end --> markers`);
  return text.slice(0, at.from) + content + text.slice(at.to);
}

/** The content of the named block, or undefined without its markers. */
export function readBlock(text: string, name: string): string | undefined {
  const at = bounds(text, name);
  return at && text.slice(at.from, at.to);
}

/** Replaces the named block of a file with `content`. */
export async function rewriteBlock(file: URL, name: string, content: string): Promise<void> {
  await writeFile(file, replaceBlock(await readFile(file, 'utf8'), name, content));
}
