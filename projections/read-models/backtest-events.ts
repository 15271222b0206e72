/**
 * A done backtest run's events travel in parts (research.backtest-events), apart from the rest
 * of its result (the done event on research.backtest-runs): however many events a run has, no
 * record passes the log's size limit (Kafka's default is 1 MB). The result without its events
 * ends with `"events_parts":N`; joining puts the parts' events back where that field is, as
 * text, so a large result is never parsed to be stored or served.
 */

/** The most bytes of events one part holds: a quarter of Kafka's default record limit. */
export const EVENTS_PART_BYTES = 256 * 1024;

const PARTS_FIELD = /,"events_parts":(\d+)\}$/;

/** The result as JSON without its events (naming how many parts they fill), and the parts, each a JSON array. */
export function splitEvents<R extends { events: readonly unknown[] }>(result: R, maxBytes = EVENTS_PART_BYTES): { rest: string; parts: string[] } {
  const { events, ...rest } = result;
  const parts: string[] = [];
  let part: string[] = [];
  let bytes = 2;
  for (const event of events) {
    const text = JSON.stringify(event);
    const size = Buffer.byteLength(text) + 1;
    if (part.length > 0 && bytes + size > maxBytes) {
      parts.push(`[${part.join(',')}]`);
      part = [];
      bytes = 2;
    }
    part.push(text);
    bytes += size;
  }
  parts.push(`[${part.join(',')}]`);
  return { rest: `${JSON.stringify(rest).slice(0, -1)},"events_parts":${parts.length}}`, parts };
}

/** How many parts a stored result's events fill; null for a result that holds its events itself (recorded before parts). */
export function eventsPartsOf(result: string): number | null {
  const match = PARTS_FIELD.exec(result);
  return match === null ? null : Number(match[1]);
}

/** The whole result from `rest` and its parts looked up by place; null while one of them is missing. */
export function joinedResult(rest: string, parts: number, partAt: (part: number) => string | undefined): string | null {
  const found = Array.from({ length: parts }, (_, part) => partAt(part));
  return found.every((part) => part !== undefined) ? joinEvents(rest, found) : null;
}

/** The whole result: `rest` with the parts' events (in part order) in place of its parts count. */
export function joinEvents(rest: string, parts: readonly string[]): string {
  const events = parts.map((part) => part.slice(1, -1)).filter((inner) => inner.length > 0);
  return rest.replace(PARTS_FIELD, `,"events":[${events.join(',')}]}`);
}
