import { byDialect, column, columns, float64, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import type { Chain } from '../../schemas/records/primitives.ts';
import { latestSnapshots, snapshotHistory } from '../tables/quant.ts';
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

/** Runs a rule set against the latest snapshot of every token (POST /v1/quant/scan). */
export async function scan(store: ReadStore, query: ScanQuery): Promise<RuleFieldRow[]> {
  const { where, orderBy } = scanClauses(latestSnapshots, query);
  const rows = await store.query<RuleFieldResult>(
    sql`SELECT ${columns(latestSnapshots, RULE_FIELD_ROW_COLUMNS)} FROM ${table(latestSnapshots)} WHERE ${where}
        ORDER BY ${orderBy} LIMIT ${int64(query.limit)}`,
  );
  return rows.map(toRuleFieldRow);
}

/**
 * The same scan as of `cutoff` (epoch ms): against each token's latest snapshot with ts at
 * or before the cutoff, from snapshot_history (the Free plan's delayed scanner). Tokens with
 * no snapshot by then are not scanned; chain and narrative filters apply to that snapshot.
 */
export async function scanAsOf(store: ReadStore, query: ScanQuery, cutoff: number): Promise<RuleFieldRow[]> {
  const { where, orderBy } = scanClauses(snapshotHistory, query);
  const tokenId = column(snapshotHistory, 'token_id');
  const ts = column(snapshotHistory, 'ts');
  // Latest row per token without window functions in ClickHouse 18.16: LIMIT 1 BY.
  const asOf = sql`SELECT ${columns(snapshotHistory, RULE_FIELD_ROW_COLUMNS)} FROM ${table(snapshotHistory)} WHERE ${ts} <= ${int64(cutoff)}
    ${byDialect({ duckdb: sql`QUALIFY row_number() OVER (PARTITION BY ${tokenId} ORDER BY ${ts} DESC) = 1`, clickhouse: sql`` })}
    ${byDialect({ duckdb: sql``, clickhouse: sql`ORDER BY ${tokenId}, ${ts} DESC LIMIT 1 BY ${tokenId}` })}`;
  const rows = await store.query<RuleFieldResult>(
    sql`SELECT ${columns(snapshotHistory, RULE_FIELD_ROW_COLUMNS)} FROM (${asOf}) AS as_of WHERE ${where} ORDER BY ${orderBy} LIMIT ${int64(query.limit)}`,
  );
  return rows.map(toRuleFieldRow);
}
