import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import type { CliCommand } from '../command.ts';

interface TopicReport {
  topic: string;
  cleanupPolicy: string;
  partitions: { partition: number; start: number; end: number }[];
  records: number;
  groups: { group: string; lag: number; partitions: { partition: number; committed: number | null; lag: number }[] }[];
}

export const topicsCommand: CliCommand = {
  name: 'topics',
  summary: 'list every topic with partitions, offsets and the lag of each consumer group',
  usage: 'tqa topics [--json]',
  async run(args, { config, logger, stdout }) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const { log, close } = await openLogServices(config, logger);
    try {
      const groups = await log.listGroups();
      const reports: TopicReport[] = [];
      for (const spec of CATALOGUE) {
        const [starts, ends] = await Promise.all([log.startOffsets(spec.name), log.endOffsets(spec.name)]);
        const partitions = ends
          .map(({ partition, offset }) => ({
            partition,
            start: starts.find((s) => s.partition === partition)?.offset ?? 0,
            end: offset,
          }))
          .sort((a, b) => a.partition - b.partition);
        const report: TopicReport = {
          topic: spec.name,
          cleanupPolicy: spec.cleanupPolicy,
          partitions,
          records: partitions.reduce((sum, p) => sum + p.end - p.start, 0),
          groups: [],
        };
        for (const group of groups) {
          const committed = await log.committedOffsets(group, spec.name);
          if (committed.length === 0) continue;
          const perPartition = partitions.map((p) => {
            const at = committed.find((c) => c.partition === p.partition)?.offset ?? null;
            return { partition: p.partition, committed: at, lag: p.end - (at ?? p.start) };
          });
          report.groups.push({ group, lag: perPartition.reduce((s, p) => s + p.lag, 0), partitions: perPartition });
        }
        reports.push(report);
      }
      if (values.json) {
        stdout.write(JSON.stringify({ mode: log.kind, topics: reports }, null, 2) + '\n');
        return 0;
      }
      stdout.write(`mode: ${log.kind}\n`);
      // What a lag counts: a processor commits only what its saved checkpoint covers, a
      // projection only what it stored, so lag 0 means the work is durably done.
      stdout.write('lag: records not yet covered by a group\'s saved state (processors) or stored rows (projections)\n');
      for (const r of reports) {
        const offsets = r.partitions.map((p) => `${p.partition}:${p.start}-${p.end}`).join(' ');
        stdout.write(`${r.topic.padEnd(22)} ${r.cleanupPolicy.padEnd(8)} partitions=${r.partitions.length} records=${r.records} [${offsets}]\n`);
        for (const g of r.groups) stdout.write(`  group ${g.group}: lag ${g.lag}\n`);
      }
      return 0;
    } finally {
      await close();
    }
  },
};
