/** How the console's pages show the values they share. */

/** A score 0–100 with one decimal; a dash for null (the API says why elsewhere). */
export const score = (v: number | null) => (v === null ? '–' : v.toFixed(1));

/** A link to a token's page by its symbol; a dash for a record without a token. */
export function TokenLink({ token }: { token: { id: string; symbol: string } | null }) {
  return token === null ? <>–</> : <a href={`#/token/${token.id}`}>{token.symbol}</a>;
}
