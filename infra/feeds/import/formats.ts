import type { z } from 'zod';
import { TOPICS } from '../../../schemas/catalogue.ts';
import {
  CHAINS,
  MarketTickSchema,
  PostSchema,
  TokenMetaSchema,
  type MarketTick,
  type Post,
  type TokenMeta,
} from '../../../schemas/records.ts';
import { addressFamily, normaliseAddress, parseTokenRef } from '../../../schemas/token-ref.ts';
import { parseIsoTime, unixToMs } from '../time.ts';

/**
 * What each import kind accepts, and how a row (a JSON object, or CSV cells by header)
 * becomes a record. Field names may be written camelCase (as in the records) or snake_case.
 * Values are checked by the record's zod schema after a few file-level conversions: times
 * from ISO-8601 or unix seconds/ms, CSV cells to numbers and lists, absent optional fields
 * to their defaults. docs/feeds.md documents the formats for users.
 */

export const IMPORT_KINDS = ['posts', 'market', 'tokens'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

type FieldType = 'string' | 'int' | 'number' | 'time' | 'list';

interface FieldSpec {
  name: string;
  type: FieldType;
  /** Value when the field is absent (or an empty CSV cell); required if undefined. */
  absent?: null | [] | string;
}

type ImportRecord = Post | MarketTick | TokenMeta;

interface KindSpec<T extends ImportRecord> {
  topic: string;
  fields: FieldSpec[];
  schema: z.ZodType<T>;
  keyField: string;
  key(record: T): string;
  /** Rules beyond the record schema, on the converted row (whatever its types turned out to be). */
  check(row: Record<string, unknown>): Issue[];
}

interface Issue {
  path: PropertyKey[];
  reason: string;
}

export interface FieldError {
  field: string;
  reason: string;
}

export type RowResult =
  | { ok: true; topic: string; key: string; value: ImportRecord; ts: number }
  | { ok: false; errors: FieldError[]; key: string | null; ts: number | null };

const posts: KindSpec<Post> = {
  topic: TOPICS.posts.name,
  fields: [
    { name: 'postId', type: 'string' },
    { name: 'authorId', type: 'string' },
    { name: 'authorHandle', type: 'string' },
    { name: 'authorFollowers', type: 'int', absent: null },
    { name: 'ts', type: 'time' },
    { name: 'kind', type: 'string' },
    { name: 'tokenRefs', type: 'list', absent: [] },
    { name: 'likes', type: 'int' },
    { name: 'replies', type: 'int' },
    { name: 'reposts', type: 'int' },
    { name: 'views', type: 'int', absent: null },
    { name: 'text', type: 'string', absent: null },
    { name: 'narrativeHints', type: 'list', absent: [] },
  ],
  schema: PostSchema,
  keyField: 'postId',
  key: (p) => p.postId,
  check: (row) =>
    Array.isArray(row.tokenRefs)
      ? row.tokenRefs.flatMap((ref: unknown, index) => {
          const parsed = typeof ref === 'string' ? parseTokenRef(ref) : null;
          return parsed && !parsed.ok ? [{ path: ['tokenRefs', index], reason: parsed.error }] : [];
        })
      : [],
};

const market: KindSpec<MarketTick> = {
  topic: TOPICS.market.name,
  fields: [
    { name: 'tokenId', type: 'string' },
    { name: 'ts', type: 'time' },
    { name: 'priceUsd', type: 'number' },
    { name: 'volumeUsd', type: 'number' },
    { name: 'liquidityUsd', type: 'number' },
    { name: 'marketCapUsd', type: 'number' },
    { name: 'trades', type: 'int' },
  ],
  schema: MarketTickSchema,
  keyField: 'tokenId',
  key: (m) => m.tokenId,
  check: () => [],
};

const tokens: KindSpec<TokenMeta> = {
  topic: TOPICS.tokens.name,
  fields: [
    { name: 'tokenId', type: 'string' },
    { name: 'ts', type: 'time' },
    { name: 'symbol', type: 'string' },
    { name: 'name', type: 'string' },
    { name: 'chain', type: 'string' },
    { name: 'address', type: 'string' },
    { name: 'logoUrl', type: 'string', absent: null },
    { name: 'status', type: 'string', absent: 'active' },
    { name: 'narrative', type: 'string' },
    { name: 'sourceUrl', type: 'string', absent: null },
  ],
  schema: TokenMetaSchema,
  keyField: 'tokenId',
  key: (t) => t.tokenId,
  check: (row) => {
    const chain = CHAINS.find((c) => c === row.chain);
    if (!chain || typeof row.address !== 'string') return [];
    if (normaliseAddress(row.address, addressFamily(chain)) !== null) return [];
    const reason =
      chain === 'solana' ? 'not a solana address (32-44 base58 characters)' : `not a ${chain} address (0x followed by 40 hex digits)`;
    return [{ path: ['address'], reason }];
  },
};

/** The field names of a kind, as records spell them. */
export function kindFields(kind: ImportKind): { name: string; required: boolean }[] {
  return specOf(kind).fields.map((f) => ({ name: f.name, required: f.absent === undefined }));
}

function specOf(kind: ImportKind): KindSpec<Post> | KindSpec<MarketTick> | KindSpec<TokenMeta> {
  return kind === 'posts' ? posts : kind === 'market' ? market : tokens;
}

/** `post_id` and `postId` both name the field postId. */
export function fieldName(written: string): string {
  return written.trim().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Where a value came from, for conversions that differ: typed JSON or text cells. */
export type Origin = 'json' | 'csv';

/**
 * Converts one row to a record of `kind` or to the list of what is wrong with it.
 * `row` maps field names as written in the file to values; problems are reported under
 * the names as written.
 */
export function convertRow(kind: ImportKind, row: Map<string, unknown>, origin: Origin): RowResult {
  switch (kind) {
    case 'posts':
      return convertWith(posts, row, origin);
    case 'market':
      return convertWith(market, row, origin);
    case 'tokens':
      return convertWith(tokens, row, origin);
  }
}

function convertWith<T extends ImportRecord>(spec: KindSpec<T>, row: Map<string, unknown>, origin: Origin): RowResult {
  const errors: FieldError[] = [];
  const byName = new Map<string, { written: string; value: unknown }>();
  for (const [written, value] of row) {
    const name = fieldName(written);
    if (byName.has(name)) errors.push({ field: written, reason: `duplicates field ${byName.get(name)?.written}` });
    else byName.set(name, { written, value });
  }
  const shown = (name: string): string => byName.get(name)?.written ?? name;
  const known = new Set(spec.fields.map((f) => f.name));
  for (const [name, { written }] of byName) {
    if (!known.has(name)) errors.push({ field: written, reason: 'unknown field' });
  }

  const candidate: Record<string, unknown> = {};
  for (const field of spec.fields) {
    const entry = byName.get(field.name);
    const blank = entry === undefined || (origin === 'csv' && entry.value === '');
    if (blank) {
      if (field.absent === undefined) errors.push({ field: shown(field.name), reason: 'missing' });
      else candidate[field.name] = field.absent;
      continue;
    }
    const converted = convertValue(field.type, entry.value, origin);
    if ('error' in converted) errors.push({ field: entry.written, reason: converted.error });
    else candidate[field.name] = converted.value;
  }

  const keyValue = candidate[spec.keyField];
  const key = typeof keyValue === 'string' ? keyValue : null;
  const ts = typeof candidate.ts === 'number' ? candidate.ts : null;

  // Every problem of the row is reported, once per field (or list item); fields that
  // failed conversion are not checked again.
  const converted = new Set(errors.map((e) => fieldName(e.field)));
  const reported = new Set<string>();
  const parsed = spec.schema.safeParse(candidate);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path, reason: i.message }));
  for (const { path, reason } of [...issues, ...spec.check(candidate)]) {
    const field = path.length > 0 ? issuePath(path, shown) : '(row)';
    if (converted.has(String(path[0])) || reported.has(field)) continue;
    reported.add(field);
    errors.push({ field, reason });
  }
  if (!parsed.success || errors.length > 0) return { ok: false, errors, key, ts };
  const value = parsed.data;
  return { ok: true, topic: spec.topic, key: spec.key(value), value, ts: value.ts };
}

function issuePath(path: PropertyKey[], shown: (name: string) => string): string {
  const [head, ...rest] = path;
  return shown(String(head)) + rest.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

function convertValue(type: FieldType, raw: unknown, origin: Origin): { value: unknown } | { error: string } {
  switch (type) {
    case 'time':
      return convertTime(raw);
    case 'int':
    case 'number':
      if (origin === 'json' || typeof raw !== 'string') return { value: raw };
      if (!(type === 'int' ? INTEGER : NUMBER).test(raw)) {
        return { error: `expected ${type === 'int' ? 'a whole number' : 'a number'}, got "${raw}"` };
      }
      return { value: Number(raw) };
    case 'list':
      if (origin === 'json' || typeof raw !== 'string') return { value: raw };
      return { value: raw.split(';').map((s) => s.trim()).filter((s) => s.length > 0) };
    case 'string':
      return { value: raw };
  }
}

const TIME_HINT = 'expected ISO-8601 with an offset (2025-01-31T12:00:00Z) or unix seconds or milliseconds';
const MIN_TIME = Date.UTC(2009, 0, 1);
const MAX_TIME = Date.UTC(2100, 0, 1);

function convertTime(raw: unknown): { value: number } | { error: string } {
  let ms: number | null;
  if (typeof raw === 'number') ms = unixToMs(raw);
  else if (typeof raw === 'string') ms = NUMBER.test(raw.trim()) ? unixToMs(Number(raw.trim())) : parseIsoTime(raw.trim());
  else return { error: `${TIME_HINT}, got ${raw === null ? 'null' : typeof raw}` };
  if (ms === null) return { error: `invalid time ${JSON.stringify(raw)}: ${TIME_HINT}` };
  if (ms < MIN_TIME || ms >= MAX_TIME) {
    return { error: `time ${JSON.stringify(raw)} is outside 2009-2100 (seconds given as milliseconds or the reverse?)` };
  }
  return { value: ms };
}
