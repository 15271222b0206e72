import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO_KEY_FILE } from '../../api/demo-key.ts';
import { STREAM_EVENTS } from '../../api/schemas/meta.ts';
import { connectStream, StreamClientError, type StreamEventFrame, type StreamNotice } from '../../stream/client/stream-client.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';

const USAGE = `tqa stream --events ${STREAM_EVENTS.join('|')}[,…] [--tokens '$SYMBOL,tk_…'] [--key KEY] [--api URL] [--resume CURSOR] [--json]`;

/**
 * Prints the live events of a running service through the exported stream client: one line
 * per event, or one JSON object per line with --json. The key comes from --key, else
 * TQA_API_KEY, else the demo key of the data dir. Runs until SIGINT/SIGTERM (exit 0, the
 * last cursor on stderr) or until the key is refused, revoked or loses the stream (exit 1).
 */
export const streamCommand: CliCommand = {
  name: 'stream',
  summary: 'print live events from the WebSocket stream of a running service',
  usage: USAGE,
  async run(args, { config, stdout, stderr }) {
    const { values } = parseArgs({
      args,
      options: {
        events: { type: 'string' },
        tokens: { type: 'string' },
        key: { type: 'string' },
        api: { type: 'string' },
        resume: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const events = list(values.events);
    if (events.length === 0) throw new UsageError('--events is required');
    const unknown = events.filter((e) => !(STREAM_EVENTS as readonly string[]).includes(e));
    if (unknown.length > 0) throw new UsageError(`unknown event ${unknown.join(', ')}; events are ${STREAM_EVENTS.join(', ')}`);
    const key = values.key ?? process.env.TQA_API_KEY ?? (await demoKey(config.TQA_DATA_DIR));
    if (key === null) throw new UsageError(`no key: pass --key, set TQA_API_KEY, or start the service once to get ${join(config.TQA_DATA_DIR, DEMO_KEY_FILE)}`);

    const print = (frame: StreamEventFrame) =>
      stdout.write(values.json ? JSON.stringify(frame) + '\n' : `${frame.created_at}  ${frame.event}  ${frame.id}  ${JSON.stringify(frame.data)}\n`);
    const client = connectStream({
      api: values.api ?? `http://localhost:${config.PORT}`,
      key,
      subscriptions: [{ events, tokens: list(values.tokens) }],
      resume: values.resume,
      onEvent: print,
      onNotice: (notice) => stderr.write(describe(notice) + '\n'),
    });
    const stop = () => void client.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      await client.done;
      if (client.cursor !== null) stderr.write(`stopped; resume with --resume ${client.cursor}\n`);
      return 0;
    } catch (err) {
      if (!(err instanceof StreamClientError)) throw err;
      stderr.write(`${err.message}\n`);
      return 1;
    } finally {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
    }
  },
};

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

async function demoKey(dataDir: string): Promise<string | null> {
  try {
    return (await readFile(join(dataDir, DEMO_KEY_FILE), 'utf8')).trim() || null;
  } catch {
    return null;
  }
}

function describe(notice: StreamNotice): string {
  switch (notice.kind) {
    case 'connected':
      return `connected to ${notice.url} (${notice.connectionId})`;
    case 'subscribed':
      return `subscribed to ${notice.events.join(', ')} (${notice.subscriptionId})${notice.resumed ? ', resuming' : ''}`;
    case 'reconnecting':
      return `${notice.reason}; reconnecting in ${notice.inMs} ms`;
    case 'resume_refused':
      return `${notice.message}; continuing from now`;
    case 'warning':
    case 'error':
      return `${notice.code}: ${notice.message}`;
  }
}
