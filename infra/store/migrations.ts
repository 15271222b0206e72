import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './errors.ts';
import type { Dialect } from './sql-literal.ts';
import type { Column, TableDef } from './table.ts';

/**
 * Versioned migrations: one folder of SQL files per store, named NNNN_what.sql and applied
 * in number order, each once. A migration is never edited after it shipped (its checksum is
 * recorded and checked); a change of schema is a new file. ClickHouse has no transactional
 * DDL, so its statements are written to be re-runnable (IF NOT EXISTS) in case a run stops
 * between two of them.
 */

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  statements: string[];
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export async function loadMigrations(dir: string, dialect: Dialect): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`migration file ${file} in ${dir} must be named like 0001_what.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations numbered ${match[1]} in ${dir}`);
    const text = await readFile(join(dir, file), 'utf8');
    migrations.push({
      version,
      name: file.slice(0, -'.sql'.length),
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text, dialect),
    });
  }
  return migrations;
}

/**
 * Splits a script on the semicolons outside quotes and comments (the ClickHouse HTTP
 * interface takes one statement per request). Quoting follows the dialect: ClickHouse
 * strings have backslash escapes, DuckDB ones do not.
 */
export function splitStatements(script: string, dialect: Dialect): string[] {
  const statements: string[] = [];
  let current = '';
  let hasCode = false;
  let i = 0;
  const push = (): void => {
    if (hasCode) statements.push(current.trim());
    current = '';
    hasCode = false;
  };
  while (i < script.length) {
    const ch = script[i];
    if (ch === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end === -1 ? script.length : end;
      continue;
    }
    if (ch === '/' && script[i + 1] === '*') {
      const end = script.indexOf('*/', i + 2);
      i = end === -1 ? script.length : end + 2;
      continue;
    }
    if (ch === ';') {
      push();
      i++;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      while (j < script.length) {
        if (script[j] === '\\' && dialect === 'clickhouse') j += 2;
        else if (script[j] === ch && script[j + 1] === ch) j += 2;
        else if (script[j] === ch) break;
        else j++;
      }
      current += script.slice(i, j + 1);
      hasCode = true;
      i = j + 1;
      continue;
    }
    current += ch;
    if (!/\s/.test(ch)) hasCode = true;
    i++;
  }
  push();
  return statements;
}

export interface LiveColumn {
  name: string;
  /** The store's own type name, compared with `expectedType` of the definition's column. */
  type: string;
}

/** What differs between a definition and the live columns of its table, as readable lines. */
export function schemaMismatches(
  def: TableDef,
  live: readonly LiveColumn[],
  expectedType: (col: Column) => string,
): string[] {
  if (live.length === 0) return [`table ${def.name} does not exist: add a migration creating it`];
  const problems: string[] = [];
  const expected = def.columns.map((c) => `${c.name} ${expectedType(c)}`);
  const actual = live.map((c) => `${c.name} ${c.type}`);
  if (expected.join(', ') !== actual.join(', ')) {
    problems.push(`table ${def.name} has columns (${actual.join(', ')}) but its definition says (${expected.join(', ')})`);
  }
  return problems;
}

export function assertNoMismatches(problems: readonly string[]): void {
  if (problems.length > 0) throw new StoreError('STORE_SCHEMA_MISMATCH', problems.join('; '));
}

export function assertUnchanged(migration: Migration, appliedChecksum: string): void {
  if (migration.checksum !== appliedChecksum) {
    throw new StoreError(
      'STORE_MIGRATION_CHANGED',
      `migration ${migration.name} was edited after it was applied; add a new migration instead`,
    );
  }
}
