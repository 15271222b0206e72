import { column, columns, float64, int64, list, sql, type Sql } from '../../infra/store/sql-literal.ts';
import type { Chain } from '../../schemas/records/primitives.ts';
import { latestSnapshots, snapshotHistory } from '../tables/quant.ts';
import { latestHistoryAsOf } from './as-of.ts';
import { allOf, checkDir, checkLimit, known, nullsLastOrder, ReadModelError, type ReadStore, type SortDir } from './cursor.ts';
import { RULE_FIELD_ROW_COLUMNS, ruleFieldColumn, toRuleFieldRow, type RuleFieldResult, type RuleFieldRow } from './tokens.ts';

/** Spec 2.6: a scanner rule. */
export type RuleOp = '>' | '>=' | '<' | '<=';

export interface ScanRule {
  field: string;
  op: RuleOp;
  value: number;
}

export interface ScanQuery {
  /** At most MAX_SCAN_CONDITIONS; all must pass. */
  rules: readonly ScanRule[];
  sort: string;
  sortDir: SortDir;
  /** 1 to 200. */
  limit: number;
  chains?: readonly Chain[];
  narrative?: string;
}

/** Rules a request may send (spec 4.1). */
export const MAX_SCAN_RULES = 12;
/** Rules one scan may apply: a request's rules plus those of a preset (api/scan-presets.ts, at most as many). */
export const MAX_SCAN_CONDITIONS = 2 * MAX_SCAN_RULES;
export const MAX_SCAN_LIMIT = 200;

const OPS: Readonly<Record<RuleOp, Sql>> = { '>': sql`>`, '>=': sql`>=`, '<': sql`<`, '<=': sql`<=` };

type SnapshotTable = typeof latestSnapshots | typeof snapshotHistory;

function ruleCondition(def: SnapshotTable, rule: ScanRule, index: number): Sql {
  const op = Object.hasOwn(OPS, rule.op) ? OPS[rule.op] : undefined;
  if (!op) throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].op must be one of >, >=, <, <=`);
  if (typeof rule.value !== 'number' || !Number.isFinite(rule.value)) {
    throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].value must be a finite number`);
  }
  // known(): a NULL field fails the rule instead of making the whole condition NULL.
  return known(sql`${ruleFieldColumn(rule.field, def).column} ${op} ${float64(rule.value)}`);
}

/** The WHERE and ORDER BY of a scan over rows of `def`, after checking the query. */
function scanClauses(def: SnapshotTable, query: ScanQuery): { where: Sql; orderBy: Sql } {
  if (query.rules.length > MAX_SCAN_CONDITIONS) throw new ReadModelError('INVALID_ARGUMENT', `at most ${MAX_SCAN_CONDITIONS} rules`);
  const { column: sortColumn } = ruleFieldColumn(query.sort, def);
  checkDir(query.sortDir);
  checkLimit(query.limit, MAX_SCAN_LIMIT);
  const where = query.rules.map((rule, i) => ruleCondition(def, rule, i));
  if (query.chains !== undefined && query.chains.length > 0) where.push(sql`${column(def, 'chain')} IN ${list(query.chains)}`);
  if (query.narrative !== undefined) where.push(sql`${column(def, 'narrative')} = ${query.narrative}`);
  return { where: allOf(where), orderBy: nullsLastOrder(sortColumn, column(def, 'token_id'), query.sortDir) };
}

/**
 * Runs a rule set (POST /v1/quant/scan) as of `asOf` (epoch ms): against each token's latest
 * snapshot at or before it, from snapshot_history; null `asOf` (no data yet) scans nothing.
 * Tokens with no snapshot by then are not scanned; chain and narrative filters apply to
 * that snapshot.
 */
export async function scan(store: ReadStore, query: ScanQuery, asOf: number | null): Promise<RuleFieldRow[]> {
  const { where, orderBy } = scanClauses(snapshotHistory, query);
  if (asOf === null) return [];
  const asOfRows = await latestHistoryAsOf(store, RULE_FIELD_ROW_COLUMNS, asOf);
  if (asOfRows === null) return [];
  const rows = await store.query<RuleFieldResult>(
    sql`SELECT ${columns(snapshotHistory, RULE_FIELD_ROW_COLUMNS)} FROM (${asOfRows}) AS as_of WHERE ${where} ORDER BY ${orderBy} LIMIT ${int64(query.limit)}`,
  );
  return rows.map(toRuleFieldRow);
}
