import { Simulator } from '../../../infra/feeds/sim/engine.ts';
import type { OutputRecord } from '../../../processors/runtime/processor.ts';
import { deterministicId } from '../../../processors/runtime/runtime.ts';
import { engineWithStages } from '../../../processors/test-support.ts';
import { snapshotHistoryRow } from '../../../projections/latest-snapshots.ts';
import type { TokenRow } from '../../../presenters/tokens-table.ts';
import type { SnapshotHistoryRow } from '../../../projections/tables/quant.ts';
import { tokensProjection } from '../../../projections/tokens.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';
import type { QuantSnapshot } from '../../../schemas/records.ts';

/**
 * The history research reads, from the simulated world: the simulator's records pass through
 * the quant engine and its stages in process, and the snapshots and the token metadata become rows through
 * the projections' own row mappers (as the projections would write them, without the log).
 */

export interface SimulatedWorld {
  seed: number;
  days: number;
  tokens: number;
  authors: number;
  startMs: number;
}

export function simulatedHistory(world: SimulatedWorld): { snapshots: SnapshotHistoryRow[]; tokens: TokenRow[]; endMs: number } {
  const sim = Simulator.start({ seed: world.seed, tokens: world.tokens, authors: world.authors, startMs: world.startMs });
  const engine = engineWithStages();
  const snapshots: SnapshotHistoryRow[] = [];
  const tokens = new Map<string, TokenRow>();
  let offset = 0;
  const ctx = {
    eventTime: 0,
    watermark: 0,
    id: deterministicId,
    emit(output: OutputRecord) {
      if (output.topic === TOPICS.snapshots.name) snapshots.push(snapshotHistoryRow(output.value as QuantSnapshot));
    },
    reject(reason: string) {
      throw new Error(`the engine rejected a simulated record: ${reason}`);
    },
  };
  const end = sim.clockMs + world.days * 86_400_000;
  while (sim.clockMs < end) {
    for (const record of sim.step()) {
      if (record.topic === TOPICS.tokens.name) {
        const meta = { topic: record.topic, partition: 0, offset, key: record.key, timestamp: record.timestamp };
        for (const { row } of tokensProjection.toRows(record.value, meta)) tokens.set((row as TokenRow).token_id, row as TokenRow);
      }
      engine.process({ ...record, partition: 0, offset: offset++ }, ctx);
    }
  }
  return { snapshots, tokens: [...tokens.values()], endMs: end };
}
