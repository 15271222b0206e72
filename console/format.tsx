/** How the console's pages show the values they share. */

/** A score 0–100 with one decimal; a dash for null (the API says why elsewhere). */
export const score = (v: number | null) => (v === null ? '–' : v.toFixed(1));

/** A link to a token's page by its symbol; a dash for a record without a token. */
export function TokenLink({ token }: { token: { id: string; symbol: string } | null }) {
  return token === null ? <>–</> : <a href={`#/token/${token.id}`}>{token.symbol}</a>;
}

/** A fraction as a percentage with one decimal. */
export const percent = (v: number) => `${(v * 100).toFixed(1)}%`;

/** A 95% interval of a share, e.g. 41.0%–67.1%. */
export const interval = (ci: { low: number; high: number }) => `${percent(ci.low)}–${percent(ci.high)}`;

/** A duration in hours with one decimal. */
export const hours = (ms: number) => `${(ms / 3_600_000).toFixed(1)} h`;

/** A change of a fraction, signed, in percentage points. */
export const points = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} pp`;

/** A time to the minute, UTC, as the tables show it. */
export const minute = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/** A value the API gave as null: a dash and, when known, why (null never means zero). */
export function Missing({ why }: { why?: string }) {
  return (
    <span class="missing">
      –{why !== undefined && <small> {why}</small>}
    </span>
  );
}

/** A link to an author's page by handle, given with or without its @. */
export function AuthorLink({ handle }: { handle: string }) {
  const bare = handle.replace(/^@/, '');
  return <a href={`#/author/${encodeURIComponent(bare)}`}>@{bare}</a>;
}

/** A value formatted, or the dash with why when the API gave null. */
export function orMissing<T>(value: T | null, format: (v: T) => string, why?: string) {
  return value === null ? <Missing why={why} /> : format(value);
}
