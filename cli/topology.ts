import { PROCESSORS } from '../processors/index.ts';
import { PROJECTIONS } from '../projections/index.ts';
import { GROUP_ID as RESEARCH_GROUP } from '../research/runner/backtest-runner.ts';
import { CATALOGUE, TOPICS } from '../schemas/catalogue.ts';
import { GROUP_ID as WEBHOOKS_GROUP } from '../webhooks/delivery/dispatcher.ts';

/**
 * The service's topology as Kafka Streams' `Topology#describe()` prints one: every node that
 * reads or writes the log, with its consumer group, its tasks, the topics it reads and writes
 * and their keys. Built from the processors' and projections' own declarations, so the picture
 * in the README and docs/architecture.md (`tqa topology --update-docs`) cannot drift from the code.
 */
/** How a node runs: it only writes; one task; a task per partition; or each instance tails the log without a group. */
type Tasks = 'writers' | 'single' | 'partition' | 'tail';

export interface TopologyNode {
  name: string;
  /** The consumer group; null for a writer only, or a reader that tails without a group. */
  group: string | null;
  tasks: Tasks;
  /** What the full description adds after its tasks, with its own leading separator. */
  note?: string;
  /** Nodes whose outputs this one reads only as far as their committed progress (a watermark join). */
  waitsFor: readonly string[];
  inputs: readonly string[];
  outputs: readonly string[];
}

/** Who writes the topics no processor writes: the feeds, the operator's CLI and the API. */
const WRITERS: readonly TopologyNode[] = [
  { name: 'feeds role, tqa ingest', group: null, tasks: 'writers', waitsFor: [], inputs: [], outputs: [TOPICS.posts.name, TOPICS.market.name, TOPICS.tokens.name] },
  { name: 'tqa keys, tqa teams, tqa cohorts', group: null, tasks: 'writers', waitsFor: [], inputs: [], outputs: [TOPICS.keys.name, TOPICS.teams.name, TOPICS.cohortCommands.name] },
  { name: 'api role (webhook and backtest writes)', group: null, tasks: 'writers', waitsFor: [], inputs: [], outputs: [TOPICS.webhooks.name, TOPICS.backtests.name] },
];

/** The roles that consume the log outside the processors' runtime. */
const ROLES: readonly TopologyNode[] = [
  {
    name: 'webhooks role',
    group: WEBHOOKS_GROUP,
    tasks: 'single',
    waitsFor: [],
    inputs: [TOPICS.publicEvents.name, TOPICS.webhooks.name],
    outputs: [TOPICS.webhookDeliveries.name],
  },
  {
    name: 'research role',
    group: RESEARCH_GROUP,
    tasks: 'single',
    note: '; reads history from the store',
    waitsFor: [],
    inputs: [TOPICS.backtests.name],
    outputs: [TOPICS.backtestRuns.name, TOPICS.backtestEvents.name, TOPICS.eventStudies.name],
  },
  {
    name: 'stream role',
    group: null,
    tasks: 'tail',
    waitsFor: [],
    inputs: [TOPICS.publicEvents.name],
    outputs: [TOPICS.streamPresence.name],
  },
];

export function topologyNodes(): TopologyNode[] {
  const processors = PROCESSORS.map<TopologyNode>((p) => ({
    name: p.name,
    group: p.name,
    tasks: p.parallelism,
    note: p.parallelism === 'single' ? ' over every partition, merged in event time' : undefined,
    waitsFor: (p.upstreams ?? []).map((u) => u.name),
    inputs: p.inputs,
    outputs: [...p.outputs, TOPICS.deadLetters.name],
  }));
  return [...WRITERS, ...processors, ...ROLES];
}

/** How each form of the topology names a node's tasks. */
const TASK_TEXT: Record<Tasks, { full: string; brief: string }> = {
  writers: { full: 'writers', brief: '' },
  single: { full: 'one task', brief: ' (one task)' },
  partition: { full: 'a task per partition', brief: ' (task per partition)' },
  tail: { full: 'each instance tails from the end', brief: ' (no group, tails the end)' },
};

const TOPIC_BY_NAME = new Map(CATALOGUE.map((t) => [t.name, t]));

function topicLine(name: string): string {
  const topic = TOPIC_BY_NAME.get(name);
  if (!topic) throw new Error(`topology names ${name}, which is not in the topic catalogue`);
  const compacted = topic.cleanupPolicy === 'compact' ? ', compacted' : '';
  return `${name.padEnd(26)} [${topic.key}] ×${topic.partitions}${compacted}`;
}

/** The topology in full: a block per node with each topic's key and partitions, then the projections. */
export function describeTopology(): string {
  const lines: string[] = ['Topologies (×N: partitions; [key]):'];
  for (const node of topologyNodes()) {
    const group = node.group === null ? '' : ` · group ${node.group}`;
    lines.push(`  ${node.name}${group} · ${TASK_TEXT[node.tasks].full}${node.note ?? ''}`);
    if (node.waitsFor.length > 0) lines.push(`    waits for: ${node.waitsFor.join(', ')} (reads their outputs only up to their committed progress)`);
    for (const input of node.inputs) lines.push(`    <-- ${topicLine(input)}`);
    for (const output of node.outputs) lines.push(`    --> ${topicLine(output)}`);
  }
  lines.push('  projections · group projection.<name> each · batched idempotent upserts into the store');
  const width = Math.max(...PROJECTIONS.map((p) => p.name.length));
  for (const p of PROJECTIONS) {
    lines.push(`    ${p.name.padEnd(width)}  <-- ${p.topics.join(', ')}  ==> ${p.tables.join(', ')}`);
  }
  return lines.join('\n') + '\n';
}

/** A topic's key in a word: `token` for "token id", `token|slug` for "token id, or narrative slug". */
function shortKey(key: string): string {
  return key
    .split(/,? or /)
    .map((k) => k.replace(/ id$/, '').split(' ').pop())
    .join('|');
}

function wrap(prefix: string, items: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = prefix;
  for (const item of items) {
    if (line.length > prefix.length && line.length + 1 + item.length > width) {
      lines.push(line);
      line = ' '.repeat(prefix.length) + item;
    } else line = line.length > prefix.length ? `${line} ${item}` : line + item;
  }
  lines.push(line);
  return lines;
}

/**
 * The topology in brief, for the README: a node per line pair, each topic as `name[key]`;
 * dead letters and the projections' tables are left to the full description.
 */
export function summarizeTopology(width = 100): string {
  const keyed = (name: string) => `${name}[${shortKey(TOPIC_BY_NAME.get(name)!.key)}]`;
  const lines: string[] = [];
  for (const node of topologyNodes()) {
    const tasks = TASK_TEXT[node.tasks].brief;
    const waits = node.waitsFor.length > 0 ? `, after ${node.waitsFor.join(' + ')}` : '';
    lines.push(`${node.name}${tasks}${waits}`);
    if (node.inputs.length > 0) lines.push(...wrap('   <- ', node.inputs.map(keyed), width));
    const outputs = node.outputs.filter((t) => t !== TOPICS.deadLetters.name).map(keyed);
    if (outputs.length > 0) lines.push(...wrap('   -> ', outputs, width));
  }
  lines.push('projections (a group each)');
  lines.push(...wrap('   <- ', [...new Set(PROJECTIONS.flatMap((p) => p.topics))].map(keyed), width));
  lines.push('   => store (DuckDB | ClickHouse) => read models => api role');
  return lines.join('\n') + '\n';
}

/** A generated block of a doc (infra/fs/generated-block.ts). */
export interface GeneratedBlock {
  file: string;
  name: string;
  content: string;
}

/** The blocks `tqa topology --update-docs` writes, paths relative to the project root. */
export function topologyBlocks(): GeneratedBlock[] {
  return [
    { file: 'README.md', name: 'topology-brief', content: '```text\n' + summarizeTopology() + '```\n' },
    { file: 'docs/architecture.md', name: 'topology', content: '```text\n' + describeTopology() + '```\n' },
  ];
}

