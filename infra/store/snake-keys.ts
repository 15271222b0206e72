// In infra/store/ so that both of its users may import it: the projections, and processors/public-events (which builds token rows).

/** `tokenId` → `token_id`, at the type level. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

export type SnakeKeys<T> = { [K in keyof T & string as SnakeCase<K>]: T[K] };

const snakeNames = new Map<string, string>();

function snakeName(name: string): string {
  let snake = snakeNames.get(name);
  if (snake === undefined) {
    snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeNames.set(name, snake);
  }
  return snake;
}

/**
 * The record with its field names in snake_case and its values untouched: the one
 * serialisation rule between records and rows (DESIGN.md §3, rule 6).
 */
export function snakeKeys<T extends object>(record: T): SnakeKeys<T> {
  const row: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) row[snakeName(name)] = value;
  return row as SnakeKeys<T>;
}
