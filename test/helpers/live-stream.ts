import { join } from 'node:path';
import { announcePresence, StreamDirectory } from '../../api/stream-presence.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { publicEvents } from '../../processors/public-events/public-events.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { Codec } from '../../schemas/codec.ts';
import { startStreamServer, STREAM_PATH } from '../../stream/server.ts';
import { silentLogger } from './runtime-fixture.ts';

/** What an API needs to point clients at the stream (`streams`), and how to stop it all. */
export interface LiveStream {
  directory: StreamDirectory;
  stop(): Promise<void>;
}

/**
 * The public-events processor, caught up with the log and left running, and the WebSocket
 * stream it feeds, announced on the log as the stream role announces itself: a quant record
 * appended to the log reaches the stream's subscribers as the service would send it.
 */
export async function startLiveStream(dir: string, log: FileEventLog, codec: Codec, store: AnalyticalStore<ProjectionTables>): Promise<LiveStream> {
  const processor = new ProcessorRuntime({ processor: publicEvents, log, codec, checkpoints: localCheckpoints(join(dir, 'state'), publicEvents), logger: silentLogger });
  void processor.start();
  await waitFor(() => processor.caughtUp(), 'the public-events processor', 240_000);
  const server = await startStreamServer({ log, codec, store, logger: silentLogger, port: 0, host: '127.0.0.1' });
  const presence = await announcePresence({ log, codec, logger: silentLogger, url: `ws://127.0.0.1:${server.port}${STREAM_PATH}` });
  return {
    directory: new StreamDirectory({ log, codec }),
    async stop() {
      await presence.stop();
      await server.stop();
      await processor.stop();
    },
  };
}
