import { parseArgs } from 'node:util';
import { rewriteBlock } from '../../infra/fs/generated-block.ts';
import { describeTopology, summarizeTopology, topologyBlocks } from '../topology.ts';
import type { CliCommand } from '../command.ts';

const ROOT = new URL('../../', import.meta.url);

/**
 * Prints the topology from the code's own declarations (as Kafka Streams' `describe()` does),
 * or writes it into the docs' marked blocks, which a test compares with the code.
 */
export const topologyCommand: CliCommand = {
  name: 'topology',
  summary: 'print the stages, their groups, keys and topics, from the code (--update-docs writes them into the docs)',
  usage: 'tqa topology [--brief] [--update-docs]',
  async run(args, { stdout }) {
    const { values } = parseArgs({ args, options: { brief: { type: 'boolean', default: false }, 'update-docs': { type: 'boolean', default: false } } });
    if (values['update-docs']) {
      for (const block of topologyBlocks()) {
        await rewriteBlock(new URL(block.file, ROOT), block.name, block.content);
        stdout.write(`updated ${block.file}\n`);
      }
      return 0;
    }
    stdout.write(values.brief ? summarizeTopology() : describeTopology());
    return 0;
  },
};
