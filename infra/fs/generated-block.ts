/**
 * Generated parts of hand-written docs: the text between `<!-- NAME:begin -->` and
 * `<!-- NAME:end -->` is replaced by a generator and compared with it by a test.
 */
export function replaceBlock(text: string, name: string, content: string): string {
  const begin = `<!-- ${name}:begin -->\n`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(begin);
  const to = from < 0 ? -1 : text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no ${begin.trim()} … ${end} markers`);
  return text.slice(0, from + begin.length) + content + text.slice(to);
}

/** The content of the named block, or undefined without its markers. */
export function readBlock(text: string, name: string): string | undefined {
  const begin = `<!-- ${name}:begin -->\n`;
  const from = text.indexOf(begin);
  const to = from < 0 ? -1 : text.indexOf(`<!-- ${name}:end -->`, from);
  return from < 0 || to < 0 ? undefined : text.slice(from + begin.length, to);
}
