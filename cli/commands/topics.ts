import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import type { GroupMember } from '../../infra/log/port.ts';
import { STAGES } from '../catch-up.ts';
import type { CliCommand } from '../command.ts';

interface TopicReport {
  topic: string;
  cleanupPolicy: string;
  partitions: { partition: number; start: number; end: number }[];
  records: number;
  groups: {
    group: string;
    lag: number;
    /** Every partition's lag and the member that holds it: null when none does, or when `members` is null. */
    partitions: { partition: number; committed: number | null; lag: number; owner: string | null }[];
    /** The group's running members; null when the log cannot tell (a broker without DescribeGroups). */
    members: GroupMember[] | null;
  }[];
}

export const topicsCommand: CliCommand = {
  name: 'topics',
  summary: 'list every topic with partitions, offsets and the lag of each consumer group',
  usage: 'tqa topics [--json]',
  async run(args, { config, logger, stdout }) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    const { log, close } = await openLogServices(config, logger);
    try {
      // A broker without ListGroups (the mock) names only groups this process used: ask for the service's stages too.
      const groups = [...new Set([...(await log.listGroups()), ...STAGES.map((s) => s.group)])].sort();
      const membersOf = new Map(await Promise.all(groups.map(async (group) => [group, await log.groupMembers(group)] as const)));
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
          const members = membersOf.get(group) ?? null;
          const perPartition = partitions.map((p) => {
            const at = committed.find((c) => c.partition === p.partition)?.offset ?? null;
            const owner = members?.find((m) => m.partitions.some((held) => held.topic === spec.name && held.partition === p.partition));
            return { partition: p.partition, committed: at, lag: p.end - (at ?? p.start), owner: owner?.member ?? null };
          });
          report.groups.push({ group, lag: perPartition.reduce((s, p) => s + p.lag, 0), partitions: perPartition, members });
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
        for (const g of r.groups) {
          const lags = g.partitions.map((p) => `${p.partition}:${p.lag}`).join(' ');
          stdout.write(`  group ${g.group}: lag ${g.lag} [${lags}], ${holders(g.partitions, g.members)}\n`);
        }
      }
      return 0;
    } finally {
      await close();
    }
  },
};

/** Which member holds which partitions of the topic, in words. */
function holders(partitions: { partition: number; owner: string | null }[], members: GroupMember[] | null): string {
  if (members === null) return 'members unknown (the broker cannot describe groups)';
  const byOwner = new Map<string, number[]>();
  for (const { partition, owner } of partitions) if (owner !== null) byOwner.set(owner, [...(byOwner.get(owner) ?? []), partition]);
  if (byOwner.size === 0) return members.length === 0 ? 'no member running' : `none held by the ${members.length} member(s) running`;
  const unheld = partitions.filter((p) => p.owner === null).length;
  const held = [...byOwner].map(([owner, ids]) => `${ids.join(',')} held by ${owner}`).join('; ');
  return unheld > 0 ? `${held}; ${unheld} unheld` : held;
}
