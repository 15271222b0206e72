import { StoreError } from './errors.ts';
import {
  assertFinite,
  assertInt64,
  assertStorableString,
  columnOf,
  isPlainIdentifier,
  type LogicalType,
  type TableDef,
} from './table.ts';

/**
 * The one way values and identifiers reach SQL text. ClickHouse 18.16 has no query
 * parameters, so every statement is built with the `sql` tag below: values become literals
 * escaped for the dialect, identifiers come only from table definitions (an unknown name
 * throws while the statement is being built, before any text exists), and the static parts
 * of the template are the only raw text. Statements are dialect-neutral until rendered.
 *
 * Literal rules, per dialect:
 * - strings, ClickHouse: quoted with backslash escapes (\\ \' \0 \n \r \t \b \f, other
 *   control characters as \xHH); UTF-8 passes through.
 * - strings, DuckDB: standard SQL quoting ('' doubles a quote, backslash is an ordinary
 *   character). DuckDB's parser stops at a NUL byte, but its VARCHAR holds NUL, so a NUL is
 *   rendered as a chr(0) concatenation: 'a\0b' becomes ('a' || chr(0) || 'b').
 * - strings with a lone surrogate are refused: they have no UTF-8 form and cannot round-trip.
 * - numbers must be finite. Safe integers render as integers, everything else in exponent
 *   form (a DOUBLE literal in DuckDB, where 0.1 would be a DECIMAL). Negative numbers are
 *   parenthesised so `a-${n}` can never turn into a `--` comment. ClickHouse 18.16 refuses
 *   subnormal literals, and its text-to-double conversion is inexact there, so they are
 *   given as their bytes: reinterpretAsFloat64(unhex('...')).
 * - booleans: TRUE/FALSE in DuckDB, 1/0 in ClickHouse (18.16 has no boolean literals).
 * - arrays: [a, b], numbers all as floats when any is not an integer; null: NULL.
 */

export type Dialect = 'duckdb' | 'clickhouse';

/** A plain JavaScript value accepted as a literal. */
export type SqlValue = string | number | boolean | null | readonly SqlValue[];

/** Something the tag splices in as SQL text it rendered itself. */
export abstract class SqlFragment {
  abstract render(dialect: Dialect): string;
}

export type SqlArg = SqlValue | SqlFragment;

/** A rendered statement's columns whose JavaScript value needs the logical type (bool from ClickHouse 0/1). */
export type ResultTypes = ReadonlyMap<string, LogicalType>;

export class Sql extends SqlFragment {
  /** @internal built only by the `sql` tag */
  constructor(
    private readonly strings: readonly string[],
    private readonly args: readonly SqlArg[],
    readonly resultTypes: ResultTypes,
  ) {
    super();
  }

  render(dialect: Dialect): string {
    let text = this.strings[0];
    for (let i = 0; i < this.args.length; i++) {
      const arg = this.args[i];
      text += (arg instanceof SqlFragment ? arg.render(dialect) : renderLiteral(arg, dialect)) + this.strings[i + 1];
    }
    return text;
  }
}

/**
 * Builds a statement. Values are checked here, so a NaN or an unknown column fails at the
 * call site rather than at render time.
 */
export function sql(strings: TemplateStringsArray, ...args: SqlArg[]): Sql {
  const resultTypes = new Map<string, LogicalType>();
  for (const arg of args) {
    if (arg instanceof SqlFragment) {
      if (arg instanceof Sql || arg instanceof ColumnList) {
        for (const [name, type] of arg.resultTypes) resultTypes.set(name, type);
      }
    } else {
      checkValue(arg);
    }
  }
  return new Sql([...strings], args, resultTypes);
}

class TypedNumber extends SqlFragment {
  constructor(
    private readonly value: number,
    private readonly kind: 'int64' | 'float64',
  ) {
    super();
  }

  render(dialect: Dialect): string {
    return this.kind === 'int64' ? renderInteger(this.value) : renderFloat(this.value, dialect);
  }
}

/** An integer literal; refuses anything that is not a safe integer. */
export function int64(value: number): SqlFragment {
  assertInt64(value, 'int64 literal');
  return new TypedNumber(value, 'int64');
}

/** A floating-point literal even for integral values; refuses NaN and infinities. */
export function float64(value: number): SqlFragment {
  assertFinite(value, 'float64 literal');
  return new TypedNumber(value, 'float64');
}

export function quoteIdentifier(name: string): string {
  // Only plain lower-case names exist in definitions; double quotes work in both dialects.
  if (!isPlainIdentifier(name)) throw new StoreError('STORE_UNKNOWN_IDENTIFIER', `not an identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
}

class TableRef extends SqlFragment {
  constructor(
    private readonly def: TableDef,
    private readonly alias: string | undefined,
  ) {
    super();
  }

  render(dialect: Dialect): string {
    const alias = this.alias === undefined ? '' : ` AS ${quoteIdentifier(this.alias)}`;
    // FINAL makes ClickHouse collapse ReplacingMergeTree versions at read time, so reads see
    // only the newest row per key; DuckDB's upsert already keeps one row.
    return quoteIdentifier(this.def.name) + alias + (dialect === 'clickhouse' ? ' FINAL' : '');
  }
}

/**
 * A table to read from: only the newest version of each row is visible. In ClickHouse this
 * adds FINAL, which 18.16 accepts on the main table of a SELECT only; join other tables as
 * subqueries `(SELECT ... FROM ${table(x)})`.
 */
export function table(def: TableDef, alias?: string): SqlFragment {
  if (alias !== undefined) quoteIdentifier(alias);
  return new TableRef(def, alias);
}

class ColumnRef extends SqlFragment {
  constructor(
    private readonly name: string,
    private readonly qualifier: string | undefined,
  ) {
    super();
  }

  render(): string {
    return (this.qualifier === undefined ? '' : quoteIdentifier(this.qualifier) + '.') + quoteIdentifier(this.name);
  }
}

/** A column of a table definition; `name` may come from input, and a name outside the definition throws. */
export function column(def: TableDef, name: string, qualifier?: string): SqlFragment {
  columnOf(def, name);
  if (qualifier !== undefined) quoteIdentifier(qualifier);
  return new ColumnRef(name, qualifier);
}

class ColumnList extends SqlFragment {
  constructor(
    private readonly names: readonly string[],
    readonly resultTypes: ResultTypes,
  ) {
    super();
  }

  render(): string {
    return this.names.map(quoteIdentifier).join(', ');
  }
}

/**
 * A select list of a table's columns (all of them by default). The statement remembers
 * their logical types, so stores return them as the definition says (booleans included).
 */
export function columns(def: TableDef, names?: readonly string[]): SqlFragment {
  const picked = (names ?? def.columns.map((c) => c.name)).map((n) => columnOf(def, n));
  return new ColumnList(
    picked.map((c) => c.name),
    new Map(picked.map((c) => [c.name, c.type])),
  );
}

class ValueList extends SqlFragment {
  constructor(private readonly values: readonly SqlValue[]) {
    super();
  }

  render(dialect: Dialect): string {
    return `(${this.values.map((v) => renderLiteral(v, dialect)).join(', ')})`;
  }
}

/** A parenthesised list for IN: `token_id IN ${list(ids)}`. */
export function list(values: readonly SqlValue[]): SqlFragment {
  if (values.length === 0) throw new StoreError('STORE_INVALID_VALUE', 'an IN list needs at least one value');
  values.forEach(checkValue);
  return new ValueList(values);
}

class DialectChoice extends SqlFragment {
  constructor(private readonly choices: Readonly<Record<Dialect, Sql>>) {
    super();
  }

  render(dialect: Dialect): string {
    return this.choices[dialect].render(dialect);
  }
}

/** Text that differs between the stores, e.g. `argMax(x, v)` against `arg_max(x, v)`. */
export function byDialect(choices: Readonly<Record<Dialect, Sql>>): SqlFragment {
  return new DialectChoice(choices);
}

function checkValue(value: SqlValue): void {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') return assertStorableString(value, 'string literal');
  if (typeof value === 'number') return assertFinite(value, 'number literal');
  if (Array.isArray(value)) return value.forEach(checkValue);
  throw new StoreError('STORE_INVALID_VALUE', `cannot render ${typeof value} as a SQL literal`);
}

/** Renders one value as a literal of the dialect; throws on values the stores cannot hold. */
export function renderLiteral(value: SqlValue, dialect: Dialect): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      assertStorableString(value, 'string literal');
      return dialect === 'clickhouse' ? clickHouseString(value) : duckDbString(value);
    case 'number':
      assertFinite(value, 'number literal');
      return Number.isSafeInteger(value) && !Object.is(value, -0) ? renderInteger(value) : renderFloat(value, dialect);
    case 'boolean':
      return dialect === 'clickhouse' ? (value ? '1' : '0') : value ? 'TRUE' : 'FALSE';
    case 'object':
      if (Array.isArray(value)) return renderArray(value, dialect);
  }
  throw new StoreError('STORE_INVALID_VALUE', `cannot render ${typeof value} as a SQL literal`);
}

function renderArray(values: readonly SqlValue[], dialect: Dialect): string {
  // One JavaScript number type, but SQL arrays need one element type: ClickHouse finds no
  // common type for UInt64 and Float64. A number array with any non-integer is all floats.
  const floats = values.some((v) => typeof v === 'number' && !(Number.isSafeInteger(v) && !Object.is(v, -0)));
  const items = values.map((v) =>
    floats && typeof v === 'number' ? renderFloat(v, dialect) : renderLiteral(v, dialect),
  );
  return `[${items.join(', ')}]`;
}

function renderInteger(value: number): string {
  return value < 0 ? `(${value})` : String(value);
}

const MIN_NORMAL = 2.2250738585072014e-308;

function renderFloat(value: number, dialect: Dialect): string {
  assertFinite(value, 'number literal');
  if (Object.is(value, -0)) return '(-0e0)';
  // Without an argument toExponential gives the shortest digits that read back to the same double.
  const text = value.toExponential();
  if (dialect === 'clickhouse' && value !== 0 && Math.abs(value) < MIN_NORMAL) {
    const bits = Buffer.alloc(8);
    bits.writeDoubleLE(value);
    return `reinterpretAsFloat64(unhex('${bits.toString('hex')}'))`;
  }
  return value < 0 ? `(${text})` : text;
}

const CLICKHOUSE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function clickHouseString(value: string): string {
  const body = value.replace(/[\\'\x00-\x1f\x7f]/g, (ch) => {
    return CLICKHOUSE_ESCAPES[ch] ?? '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
  });
  return `'${body}'`;
}

function duckDbString(value: string): string {
  const quote = (part: string): string => `'${part.replaceAll("'", "''")}'`;
  if (!value.includes('\0')) return quote(value);
  return `(${value.split('\0').map(quote).join(' || chr(0) || ')})`;
}
