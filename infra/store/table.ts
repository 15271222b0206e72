import { isMadeJsonText } from './json-text.ts';
import { StoreError } from './errors.ts';

/**
 * Table definitions: the single declaration of every projection table, from which both
 * adapters take their allow-lists of identifiers, validate rows and check the schema their
 * migrations produced. A definition lists columns with logical types, the natural key and
 * the version column; upserts keep, per natural key, the row with the highest version.
 */

/**
 * Logical column types. Times are `int64` epoch milliseconds (ClickHouse 18.16 has no
 * DateTime64); `json` is a string holding JSON text (arrays, feature maps), stored as text
 * in both stores so they agree byte for byte.
 */
export type LogicalType = 'string' | 'int64' | 'float64' | 'bool' | 'json';

/** A column's type; a trailing `?` makes it nullable, e.g. `'float64?'`. */
export type ColumnSpec = LogicalType | `${LogicalType}?`;

type JsOf<T extends LogicalType> = T extends 'string' | 'json'
  ? string
  : T extends 'int64' | 'float64'
    ? number
    : boolean;

type JsOfSpec<S extends ColumnSpec> = S extends `${infer T extends LogicalType}?` ? JsOf<T> | null : S extends LogicalType ? JsOf<S> : never;

export interface Column {
  readonly name: string;
  readonly type: LogicalType;
  readonly nullable: boolean;
}

export interface TableDef<Cols extends Record<string, ColumnSpec> = Record<string, ColumnSpec>> {
  readonly name: string;
  /** Columns in declaration order, which is also their order in the stores. */
  readonly columns: readonly Column[];
  readonly columnsByName: ReadonlyMap<string, Column>;
  readonly key: readonly string[];
  readonly version: string;
  /**
   * Whether DuckDB keeps a primary-key index of the key (ClickHouse's sparse sorting key is
   * always kept). DuckDB holds that index in memory, about 66 bytes a key, which a week of
   * outcomes alone would fill its memory limit with: a table that grows with history and is
   * never read by key goes without one, and its upserts join each batch against the table.
   */
  readonly keyIndex: boolean;
  /** The column specs as declared; they carry the row type (RowOf). */
  readonly specs: Cols;
}

/** The row a table stores, as JavaScript values. */
export type RowOf<D extends TableDef> = { [K in keyof D['specs']]: JsOfSpec<D['specs'][K]> };

export type TableRegistry = Readonly<Record<string, TableDef>>;

/** Names must be plain lower-case identifiers so they need no quoting rules of their own. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const LOGICAL_TYPES: ReadonlySet<string> = new Set(['string', 'int64', 'float64', 'bool', 'json']);

export function isPlainIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

export function defineTable<const Cols extends Record<string, ColumnSpec>>(spec: {
  name: string;
  columns: Cols;
  key: readonly (keyof Cols & string)[];
  version: keyof Cols & string;
  keyIndex?: boolean;
}): TableDef<Cols> {
  const fail = (why: string): never => {
    throw new Error(`table definition ${spec.name}: ${why}`);
  };
  if (!isPlainIdentifier(spec.name)) fail('name must match ' + IDENTIFIER.source);
  const columns: Column[] = Object.entries(spec.columns).map(([name, type]) => {
    if (!isPlainIdentifier(name)) fail(`column ${name} must match ${IDENTIFIER.source}`);
    const nullable = type.endsWith('?');
    const base = nullable ? type.slice(0, -1) : type;
    if (!LOGICAL_TYPES.has(base)) fail(`column ${name} has unknown type ${type}`);
    return Object.freeze({ name, type: base as LogicalType, nullable });
  });
  const byName = new Map(columns.map((c) => [c.name, c]));
  if (spec.key.length === 0) fail('needs at least one key column');
  for (const k of spec.key) {
    const col = byName.get(k) ?? fail(`key column ${k} is not a column`);
    // ClickHouse cannot sort by a Nullable column and a null key would never conflict in DuckDB.
    if (col.nullable) fail(`key column ${k} must not be nullable`);
  }
  const version = byName.get(spec.version) ?? fail(`version column ${spec.version} is not a column`);
  if (version.type !== 'int64' || version.nullable) fail('version column must be a non-nullable int64');
  if (spec.key.includes(spec.version)) fail('the version column cannot be part of the key');
  return Object.freeze({
    name: spec.name,
    columns: Object.freeze(columns),
    columnsByName: byName,
    key: Object.freeze([...spec.key]),
    version: spec.version,
    keyIndex: spec.keyIndex ?? true,
    specs: spec.columns,
  });
}

/** A registry keyed by table name, so the names callers pass can be checked against it. */
export function defineTables<const Defs extends readonly TableDef[]>(
  ...defs: Defs
): { readonly [D in Defs[number] as D['name']]: D } {
  const registry: Record<string, TableDef> = {};
  for (const def of defs) {
    if (registry[def.name]) throw new Error(`table ${def.name} is defined twice`);
    registry[def.name] = def;
  }
  return Object.freeze(registry) as { readonly [D in Defs[number] as D['name']]: D };
}

/** The definition of `name`, refusing any name outside the registry. */
export function tableOf(registry: TableRegistry, name: string): TableDef {
  const def = Object.hasOwn(registry, name) ? registry[name] : undefined;
  if (!def) throw new StoreError('STORE_UNKNOWN_IDENTIFIER', `unknown table ${JSON.stringify(name)}`);
  return def;
}

/** The column `name` of a table, refusing any name outside its definition. */
export function columnOf(def: TableDef, name: string): Column {
  const col = def.columnsByName.get(name);
  if (!col) {
    throw new StoreError('STORE_UNKNOWN_IDENTIFIER', `unknown column ${JSON.stringify(name)} of table ${def.name}`);
  }
  return col;
}

/** A string both stores hold exactly: well-formed UTF-16, so it encodes to UTF-8 and back unchanged. */
function isStorableString(value: string): boolean {
  // String.prototype.isWellFormed is in Node 20, not yet in the ES2022 library types.
  return (value as string & { isWellFormed(): boolean }).isWellFormed();
}

export function assertStorableString(value: string, where: string): void {
  if (!isStorableString(value)) {
    throw new StoreError('STORE_INVALID_VALUE', `${where}: string contains a lone surrogate and has no UTF-8 form`);
  }
}

export function assertInt64(value: number, where: string): void {
  if (!Number.isSafeInteger(value)) {
    throw new StoreError('STORE_INVALID_VALUE', `${where}: ${value} is not an integer JavaScript holds exactly`);
  }
}

export function assertFinite(value: number, where: string): void {
  if (!Number.isFinite(value)) throw new StoreError('STORE_INVALID_VALUE', `${where}: ${value} is not a finite number`);
}

/** Names a cell in an error message. */
function cellName(def: TableDef, row: number, col: Column): string {
  return `${def.name}[${row}].${col.name}`;
}

/** Refuses a value its column cannot hold; the cell is named only for an error. */
function checkValue(def: TableDef, row: number, col: Column, value: unknown): void {
  if (value === null) {
    if (!col.nullable) throw new StoreError('STORE_INVALID_VALUE', `${cellName(def, row, col)}: null in a non-nullable column`);
    return;
  }
  switch (col.type) {
    case 'string':
    case 'json':
      if (typeof value !== 'string') break;
      if (!isStorableString(value)) assertStorableString(value, cellName(def, row, col));
      if (col.type === 'json' && !isMadeJsonText(value)) {
        try {
          JSON.parse(value);
        } catch {
          throw new StoreError('STORE_INVALID_VALUE', `${cellName(def, row, col)}: not valid JSON text`);
        }
      }
      return;
    case 'int64':
      if (typeof value !== 'number') break;
      if (!Number.isSafeInteger(value)) assertInt64(value, cellName(def, row, col));
      return;
    case 'float64':
      if (typeof value !== 'number') break;
      if (!Number.isFinite(value)) assertFinite(value, cellName(def, row, col));
      return;
    case 'bool':
      if (typeof value !== 'boolean') break;
      return;
  }
  throw new StoreError('STORE_INVALID_VALUE', `${cellName(def, row, col)}: expected ${col.type}, got ${typeof value}`);
}

/**
 * Rows that passed validateRows, with the definition they passed against. A row is checked
 * on its way by the projection runner, the batched writer and the store; rows are not changed
 * once built, so the later checks of the same row object are skipped (a JSON column was parsed
 * three times per row).
 */
const validRows = new WeakMap<object, TableDef>();

/**
 * Checks rows against a definition before anything is sent: every key must be a column
 * (the allow-list), every column present (null where nullable) and every value of its type.
 */
export function validateRows(def: TableDef, rows: readonly object[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Record<string, unknown>;
    if (validRows.get(row) === def) continue;
    for (const key of Object.keys(row)) columnOf(def, key);
    for (const col of def.columns) {
      if (!Object.hasOwn(row, col.name)) throw new StoreError('STORE_INVALID_VALUE', `${cellName(def, i, col)}: missing`);
      checkValue(def, i, col, row[col.name]);
    }
    validRows.set(row, def);
  }
}

/** The natural key of a row as one string, for de-duplicating within a batch. */
export function naturalKey(def: TableDef, row: Record<string, unknown>): string {
  return def.key.length === 1 ? String(row[def.key[0]]) : JSON.stringify(def.key.map((k) => row[k]));
}
