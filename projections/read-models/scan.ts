import type { Chain } from '../../schemas/records/primitives.ts';
import type { RuleField } from '../tables/quant.ts';
import { checkDir, checkLimit, ReadModelError, type SortDir } from './cursor.ts';
import { readerOf, type RuleFieldRow, type SnapshotSource } from './snapshot-views.ts';
import { checkRuleField } from './tokens.ts';

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

const OPS: Readonly<Record<RuleOp, (value: number, bound: number) => boolean>> = {
  '>': (v, b) => v > b,
  '>=': (v, b) => v >= b,
  '<': (v, b) => v < b,
  '<=': (v, b) => v <= b,
};

/** A rule as a test of a row, after checking it; a null field fails it. */
function ruleTest(rule: ScanRule, index: number): (row: RuleFieldRow) => boolean {
  const op = Object.hasOwn(OPS, rule.op) ? OPS[rule.op] : undefined;
  if (!op) throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].op must be one of >, >=, <, <=`);
  if (typeof rule.value !== 'number' || !Number.isFinite(rule.value)) {
    throw new ReadModelError('INVALID_ARGUMENT', `rules[${index}].value must be a finite number`);
  }
  const field: RuleField = checkRuleField(rule.field);
  const bound = rule.value;
  return (row) => {
    const value = row.values[field];
    return value !== null && op(value, bound);
  };
}

/**
 * Runs a rule set (POST /v1/quant/scan) as of `asOf` (epoch ms): against each token's latest
 * snapshot at or before it, from snapshot_history; null `asOf` (no data yet) scans nothing.
 * Tokens with no snapshot by then are not scanned; chain and narrative filters apply to
 * that snapshot. Passing tokens come in the token list's order of the sort field.
 */
export async function scan(source: SnapshotSource, query: ScanQuery, asOf: number | null): Promise<RuleFieldRow[]> {
  if (query.rules.length > MAX_SCAN_CONDITIONS) throw new ReadModelError('INVALID_ARGUMENT', `at most ${MAX_SCAN_CONDITIONS} rules`);
  const sort = checkRuleField(query.sort);
  checkDir(query.sortDir);
  checkLimit(query.limit, MAX_SCAN_LIMIT);
  const tests = query.rules.map(ruleTest);
  const chains = query.chains !== undefined && query.chains.length > 0 ? new Set<string>(query.chains) : undefined;
  if (chains !== undefined) tests.push((row) => chains.has(row.chain));
  if (query.narrative !== undefined) tests.push((row) => row.narrative === query.narrative);
  if (asOf === null) return [];
  const view = await readerOf(source).viewAsOf(asOf);
  if (view === null) return [];
  const passing: RuleFieldRow[] = [];
  for (const row of view.ordered(sort, query.sortDir)) {
    if (passing.length === query.limit) break;
    if (tests.every((passes) => passes(row))) passing.push(row);
  }
  return passing;
}
