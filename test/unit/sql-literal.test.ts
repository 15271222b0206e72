import { describe, expect, it } from 'vitest';
import { StoreError } from '../../infra/store/errors.ts';
import { splitStatements } from '../../infra/store/migrations.ts';
import {
  byDialect,
  column,
  columns,
  float64,
  int64,
  list,
  quoteIdentifier,
  renderLiteral,
  sql,
  table,
  type Dialect,
  type SqlValue,
} from '../../infra/store/sql-literal.ts';
import { snapshots } from '../../projections/tables.ts';
import { tokens } from '../../presenters/tokens-table.ts';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err.code;
    throw err;
  }
  return 'no error';
}

const both: Dialect[] = ['duckdb', 'clickhouse'];

describe('number literals', () => {
  it.each(both)('refuses NaN and infinities in %s', (dialect) => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(code(() => renderLiteral(bad, dialect))).toBe('STORE_INVALID_VALUE');
      expect(code(() => renderLiteral([1, bad], dialect))).toBe('STORE_INVALID_VALUE');
    }
  });

  it('refuses them while the statement is built, before any text exists', () => {
    expect(code(() => sql`SELECT ${Number.NaN}`)).toBe('STORE_INVALID_VALUE');
    expect(code(() => sql`SELECT ${[0, Number.POSITIVE_INFINITY]}`)).toBe('STORE_INVALID_VALUE');
    expect(code(() => float64(Number.NaN))).toBe('STORE_INVALID_VALUE');
    expect(code(() => list([1, Number.NaN]))).toBe('STORE_INVALID_VALUE');
  });

  it('takes only safe integers as int64', () => {
    expect(code(() => int64(1.5))).toBe('STORE_INVALID_VALUE');
    expect(code(() => int64(2 ** 53))).toBe('STORE_INVALID_VALUE');
    expect(code(() => int64(Number.NaN))).toBe('STORE_INVALID_VALUE');
    expect(sql`${int64(Number.MAX_SAFE_INTEGER)}`.render('clickhouse')).toBe('9007199254740991');
    expect(sql`${int64(Number.MIN_SAFE_INTEGER)}`.render('duckdb')).toBe('(-9007199254740991)');
  });

  it('parenthesises negative numbers so they never form a -- comment', () => {
    for (const dialect of both) {
      expect(sql`SELECT 1-${-5}, 2-${-0.5}`.render(dialect)).toBe('SELECT 1-(-5), 2-(-5e-1)');
    }
  });

  it('renders non-integers in exponent form with the shortest exact digits', () => {
    expect(renderLiteral(0.1, 'duckdb')).toBe('1e-1');
    expect(renderLiteral(1 / 3, 'clickhouse')).toBe('3.333333333333333e-1');
    expect(renderLiteral(2 ** 60, 'duckdb')).toBe('1.152921504606847e+18');
    expect(sql`${float64(1)}`.render('duckdb')).toBe('1e+0');
    expect(renderLiteral(-0, 'clickhouse')).toBe('(-0e0)');
    expect(renderLiteral(42, 'clickhouse')).toBe('42');
  });

  it('gives subnormals to ClickHouse as their bytes, which 18.16 cannot parse as text', () => {
    expect(renderLiteral(Number.MIN_VALUE, 'clickhouse')).toBe("reinterpretAsFloat64(unhex('0100000000000000'))");
    expect(renderLiteral(Number.MIN_VALUE, 'duckdb')).toBe('5e-324');
    expect(renderLiteral(2.2250738585072014e-308, 'clickhouse')).toBe('2.2250738585072014e-308');
  });
});

describe('string literals', () => {
  it('escapes ClickHouse strings with backslashes', () => {
    expect(renderLiteral("it's", 'clickhouse')).toBe("'it\\'s'");
    expect(renderLiteral('back\\slash', 'clickhouse')).toBe("'back\\\\slash'");
    expect(renderLiteral('trailing\\', 'clickhouse')).toBe("'trailing\\\\'");
    expect(renderLiteral('a\u0000b', 'clickhouse')).toBe("'a\\0b'");
    expect(renderLiteral('l1\nl2\r\t\b\f', 'clickhouse')).toBe("'l1\\nl2\\r\\t\\b\\f'");
    expect(renderLiteral('\u0001\u001f\u007f', 'clickhouse')).toBe("'\\x01\\x1f\\x7f'");
    expect(renderLiteral('😀 ü 中', 'clickhouse')).toBe("'😀 ü 中'");
  });

  it('quotes DuckDB strings the standard way, backslash being an ordinary character', () => {
    expect(renderLiteral("it's", 'duckdb')).toBe("'it''s'");
    expect(renderLiteral("''", 'duckdb')).toBe("''''''");
    expect(renderLiteral('back\\slash\\', 'duckdb')).toBe("'back\\slash\\'");
    expect(renderLiteral('l1\nl2', 'duckdb')).toBe("'l1\nl2'");
    expect(renderLiteral('😀', 'duckdb')).toBe("'😀'");
  });

  it('splices NUL bytes into DuckDB strings with chr(0), since its parser stops at NUL', () => {
    expect(renderLiteral('a\u0000b', 'duckdb')).toBe("('a' || chr(0) || 'b')");
    expect(renderLiteral('\u0000', 'duckdb')).toBe("('' || chr(0) || '')");
    expect(renderLiteral("x'\u0000", 'duckdb')).toBe("('x''' || chr(0) || '')");
    expect(renderLiteral('a\u0000b', 'duckdb')).not.toContain('\u0000');
  });

  it.each(both)('refuses lone surrogates in %s and keeps surrogate pairs', (dialect) => {
    expect(code(() => renderLiteral('\ud800', dialect))).toBe('STORE_INVALID_VALUE');
    expect(code(() => renderLiteral('x\udc00y', dialect))).toBe('STORE_INVALID_VALUE');
    expect(code(() => renderLiteral('\ude00\ud83d', dialect))).toBe('STORE_INVALID_VALUE');
    expect(renderLiteral('\ud83d\ude00', dialect)).toBe("'😀'");
  });

  it('turns injection attempts into plain literals', () => {
    const attack = "x'); DROP TABLE tokens; --";
    expect(sql`SELECT * FROM t WHERE a = ${attack}`.render('clickhouse')).toBe(
      "SELECT * FROM t WHERE a = 'x\\'); DROP TABLE tokens; --'",
    );
    expect(sql`SELECT * FROM t WHERE a = ${attack}`.render('duckdb')).toBe(
      "SELECT * FROM t WHERE a = 'x''); DROP TABLE tokens; --'",
    );
  });
});

describe('other literals', () => {
  it('renders booleans, null and arrays per dialect', () => {
    expect(renderLiteral(true, 'duckdb')).toBe('TRUE');
    expect(renderLiteral(false, 'clickhouse')).toBe('0');
    expect(renderLiteral(null, 'clickhouse')).toBe('NULL');
    expect(renderLiteral(['a', null, [1, 2]], 'duckdb')).toBe("['a', NULL, [1, 2]]");
    expect(renderLiteral([], 'clickhouse')).toBe('[]');
  });

  it('renders a number array with any non-integer entirely as floats', () => {
    expect(renderLiteral([1, 2.5, 2 ** 53 - 1], 'clickhouse')).toBe('[1e+0, 2.5e+0, 9.007199254740991e+15]');
    expect(renderLiteral([1, -0], 'duckdb')).toBe('[1e+0, (-0e0)]');
    expect(renderLiteral([1, 2], 'duckdb')).toBe('[1, 2]');
  });

  it('refuses values that are not SQL values', () => {
    for (const bad of [undefined, {}, 1n, () => 1, new Date(0)]) {
      expect(code(() => sql`SELECT ${bad as unknown as SqlValue}`)).toBe('STORE_INVALID_VALUE');
      expect(code(() => renderLiteral(bad as unknown as SqlValue, 'duckdb'))).toBe('STORE_INVALID_VALUE');
    }
  });

  it('renders IN lists and refuses an empty one', () => {
    expect(sql`x IN ${list(['a', 1, null])}`.render('duckdb')).toBe("x IN ('a', 1, NULL)");
    expect(code(() => list([]))).toBe('STORE_INVALID_VALUE');
  });
});

describe('identifiers', () => {
  it('takes table and column names only from the definitions', () => {
    expect(sql`SELECT ${column(tokens, 'symbol')} FROM ${table(tokens)}`.render('duckdb')).toBe('SELECT "symbol" FROM "tokens"');
    expect(code(() => column(tokens, 'momentum'))).toBe('STORE_UNKNOWN_IDENTIFIER');
    expect(code(() => column(tokens, 'symbol"; DROP TABLE tokens; --'))).toBe('STORE_UNKNOWN_IDENTIFIER');
    expect(code(() => column(tokens, '__proto__'))).toBe('STORE_UNKNOWN_IDENTIFIER');
    expect(code(() => columns(snapshots, ['ts', 'constructor']))).toBe('STORE_UNKNOWN_IDENTIFIER');
  });

  it('reads ClickHouse tables with FINAL and checks aliases', () => {
    expect(sql`FROM ${table(snapshots)}`.render('clickhouse')).toBe('FROM "snapshots" FINAL');
    expect(sql`FROM ${table(snapshots, 's')}`.render('clickhouse')).toBe('FROM "snapshots" AS "s" FINAL');
    expect(sql`FROM ${table(snapshots, 's')}`.render('duckdb')).toBe('FROM "snapshots" AS "s"');
    expect(sql`${column(snapshots, 'ts', 's')}`.render('duckdb')).toBe('"s"."ts"');
    expect(code(() => table(snapshots, 's" x'))).toBe('STORE_UNKNOWN_IDENTIFIER');
    expect(code(() => column(snapshots, 'ts', 'S'))).toBe('STORE_UNKNOWN_IDENTIFIER');
    expect(code(() => quoteIdentifier('a-b'))).toBe('STORE_UNKNOWN_IDENTIFIER');
  });

  it('remembers the logical types of selected columns, through nested statements', () => {
    const inner = sql`${columns(snapshots, ['token_id', 'has_market_data'])}`;
    const outer = sql`SELECT ${inner} FROM ${table(snapshots)}`;
    expect(outer.render('clickhouse')).toBe('SELECT "token_id", "has_market_data" FROM "snapshots" FINAL');
    expect([...outer.resultTypes]).toEqual([
      ['token_id', 'string'],
      ['has_market_data', 'bool'],
    ]);
  });

  it('chooses the text of the dialect being rendered', () => {
    const latest = byDialect({ duckdb: sql`arg_max(${column(snapshots, 'momentum')}, 1)`, clickhouse: sql`argMax(x, 1)` });
    expect(sql`SELECT ${latest}`.render('duckdb')).toBe('SELECT arg_max("momentum", 1)');
    expect(sql`SELECT ${latest}`.render('clickhouse')).toBe('SELECT argMax(x, 1)');
  });
});

describe('splitStatements', () => {
  it('splits on semicolons outside strings, identifiers and comments', () => {
    const script = `-- a comment; not a split
CREATE TABLE a (x String DEFAULT 'semi;colon');
/* block; comment */ SELECT "we;ird" FROM a;
;
SELECT 'it''s;' AS q`;
    expect(splitStatements(script, 'duckdb')).toEqual([
      "CREATE TABLE a (x String DEFAULT 'semi;colon')",
      'SELECT "we;ird" FROM a',
      "SELECT 'it''s;' AS q",
    ]);
  });

  it('follows each dialect\'s string escapes', () => {
    expect(splitStatements("SELECT 'a\\';b'; SELECT 2", 'clickhouse')).toEqual(["SELECT 'a\\';b'", 'SELECT 2']);
    expect(splitStatements("SELECT 'a\\'; SELECT 2", 'duckdb')).toEqual(["SELECT 'a\\'", 'SELECT 2']);
  });
});
