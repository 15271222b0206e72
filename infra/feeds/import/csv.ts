/**
 * CSV as in RFC 4180: comma-separated, fields optionally in double quotes, a quote inside
 * a quoted field doubled (""), and quoted fields may span lines. Nothing is trimmed.
 */

/** Splits one record into its fields; an error names what is malformed. */
export function splitCsvRecord(text: string): { ok: true; cells: string[] } | { ok: false; error: string } {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) return { ok: false, error: 'unterminated quoted field' };
        value += text.slice(i, q);
        if (text[q + 1] === '"') {
          value += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      cells.push(value);
      if (i === text.length) return { ok: true, cells };
      if (text[i] !== ',') return { ok: false, error: `unexpected character after a closing quote at column ${i + 1}` };
      i++;
    } else {
      const comma = text.indexOf(',', i);
      const value = comma < 0 ? text.slice(i) : text.slice(i, comma);
      if (value.includes('"')) return { ok: false, error: 'a quote inside an unquoted field (quote the whole field and double the quote)' };
      cells.push(value);
      if (comma < 0) return { ok: true, cells };
      i = comma + 1;
    }
  }
}

/** True while `text` ends inside an open quoted field, i.e. the record continues on the next line. */
export function endsInsideQuotes(text: string): boolean {
  let quotes = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) quotes++;
  return quotes % 2 === 1;
}
