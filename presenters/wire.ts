/**
 * The wire form of a presented object (spec §1 rule 2): keys renamed from the camelCase of
 * the code to snake_case, values untouched. Maps whose keys are data (feature vector, model
 * versions, scores by name) already use snake_case names, which wireName leaves as they are.
 */

const names = new Map<string, string>();

/** `priceChange15m` → `price_change_15m`, `median24h` → `median_24h`; snake_case stays as is. */
export function wireName(key: string): string {
  let name = names.get(key);
  if (name === undefined) {
    name = /^[a-z][A-Za-z0-9]*$/.test(key)
      ? key
          .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
          .replace(/([a-z])(\d)/g, '$1_$2')
          .toLowerCase()
      : key;
    if (names.size < 10_000) names.set(key, name);
  }
  return name;
}

/** A deep copy of `value` with every object key renamed by wireName. */
export function toWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toWire);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== undefined) out[wireName(key)] = toWire(v);
  }
  return out;
}
