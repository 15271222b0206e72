/**
 * Strings in the order both stores compare them: by their UTF-8 bytes, which is code point
 * order. JavaScript's `<` compares UTF-16 code units instead, which differs where a character
 * above U+FFFF (a surrogate pair) meets one from U+E000 to U+FFFF. Read models that order or
 * page rows held in memory compare ids with this, so they agree with the SQL they stand for.
 */
export function compareText(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A code unit's rank in code point order: surrogates (halves of code points above U+FFFF) after U+E000–U+FFFF. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}
