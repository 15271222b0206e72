import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import { catalogueTopic } from '../../schemas/catalogue.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';

/** Buffers (Avro bytes fields) print as base64 so every line stays valid JSON. */
function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)
      ? { base64: Buffer.from((v as { data: number[] }).data).toString('base64') }
      : v,
  );
}

export const dumpCommand: CliCommand = {
  name: 'dump',
  summary: 'print the decoded records of a topic as JSON lines',
  usage: 'tqa dump TOPIC [--from-beginning] [--max N] [--partition P] [--json]',
  async run(args, { config, logger, stdout }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        'from-beginning': { type: 'boolean', default: false },
        max: { type: 'string' },
        partition: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const topic = positionals[0];
    if (!topic || !catalogueTopic(topic)) throw new UsageError(`name a topic of the catalogue (see tqa topics)`);
    const max = values.max === undefined ? Infinity : Number(values.max);
    if (!(max >= 0)) throw new UsageError('--max takes a number');
    const { log, codec, close } = await openLogServices(config, logger);
    try {
      const [starts, ends] = await Promise.all([log.startOffsets(topic), log.endOffsets(topic)]);
      const partitions = ends
        .filter((p) => values.partition === undefined || p.partition === Number(values.partition))
        .sort((a, b) => a.partition - b.partition);
      let printed = 0;
      for (const { partition, offset: end } of partitions) {
        // Without --from-beginning: the newest records of each partition, --max of them (10 by default).
        const start = starts.find((s) => s.partition === partition)?.offset ?? 0;
        let from = values['from-beginning'] ? start : Math.max(start, end - (Number.isFinite(max) ? max : 10));
        while (from < end && printed < max) {
          const records = await log.read(topic, partition, from, Math.min(1000, max - printed));
          if (records.length === 0) break;
          for (const r of records) {
            let value: unknown = null;
            let error: string | undefined;
            if (r.value) {
              try {
                value = await codec.decode(topic, r.value);
              } catch (err) {
                error = (err as Error).message;
              }
            }
            const line = { topic, partition, offset: r.offset, key: r.key, time: new Date(r.timestamp).toISOString(), value, ...(error ? { error } : {}) };
            stdout.write((values.json ? toJson(line) : `${partition}@${r.offset} ${r.key ?? ''} ${line.time} ${toJson(value ?? error)}`) + '\n');
            printed++;
          }
          from = records.at(-1)!.offset + 1;
        }
      }
      return 0;
    } finally {
      await close();
    }
  },
};
