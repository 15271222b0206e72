import { column, float64, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import type { Chain } from '../../schemas/records/primitives.ts';
import { latestSnapshots } from '../tables/quant.ts';
import { allOf, checkDir, checkLimit, known, nullsLastOrder, ReadModelError, type ReadStore, type SortDir } from './cursor.ts';
import { ruleFieldColumn, selectSnapshots, toTokenSnapshotRow, type SnapshotResult, type TokenSnapshotRow } from './tokens.ts';

/** Spec 2.6: a scanner rule. */
export type RuleOp = '>' | '>=' | '<' | '<=';

export interface ScanRule {
  field: string;
  op: RuleOp;
  value: number;
}

export interface ScanQuery {
  /** At most 12; all must pass. */
  rules: readonly ScanRule[];
  sort: string;
  sortDir: SortDir;
  /** 1 to 200. */
  limit: number;
  chains?: readonly Chain[];
  narrative?: string;
}

export const MAX_SCAN_RULES = 12;
export const MAX_SCAN_LIMIT = 200;

const OPS: Readonly<Record<RuleOp, Sql>> = { '>': sql`>`, '>=': sql`>=`, '<': sql`<`, '<=': sql`<=` };

function ruleCondition(rule: ScanRule, index: number): Sql {
  const op = Object.hasOwn(OPS, rule.op) ? OPS[rule.op] : undefined;
  if (!op) throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].op must be one of >, >=, <, <=`);
  if (typeof rule.value !== 'number' || !Number.isFinite(rule.value)) {
    throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].value must be a finite number`);
  }
  // known(): a NULL field fails the rule instead of making the whole condition NULL.
  return known(sql`${ruleFieldColumn(rule.field).column} ${op} ${float64(rule.value)}`);
}

/** Runs a rule set against the latest snapshot of every token (POST /v1/quant/scan). */
export async function scan(store: ReadStore, query: ScanQuery): Promise<TokenSnapshotRow[]> {
  if (query.rules.length > MAX_SCAN_RULES) throw new ReadModelError('INVALID_ARGUMENT', `at most ${MAX_SCAN_RULES} rules`);
  const { field, column: sortColumn } = ruleFieldColumn(query.sort);
  checkDir(query.sortDir);
  checkLimit(query.limit, MAX_SCAN_LIMIT);

  const where = query.rules.map(ruleCondition);
  if (query.chains !== undefined && query.chains.length > 0) where.push(sql`${column(latestSnapshots, 'chain')} IN ${list(query.chains)}`);
  if (query.narrative !== undefined) where.push(sql`${column(latestSnapshots, 'narrative')} = ${query.narrative}`);

  const rows = await store.query<SnapshotResult>(
    sql`SELECT ${selectSnapshots(field)} FROM ${table(latestSnapshots)} WHERE ${allOf(where)}
        ORDER BY ${nullsLastOrder(sortColumn, column(latestSnapshots, 'token_id'), query.sortDir)} LIMIT ${int64(query.limit)}`,
  );
  return rows.map(toTokenSnapshotRow);
}
