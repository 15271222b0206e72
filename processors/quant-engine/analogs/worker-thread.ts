import { parentPort } from 'node:worker_threads';
import { analogsStateFromColumns, queryAnalogs, type AnalogsState } from './analogs.ts';
import type { WorkerReply, WorkerRequest } from './worker.ts';

/** The body of the analogs worker thread: holds one index and answers queries one at a time. */

if (!parentPort) throw new Error('worker-thread.ts runs only as a worker thread (see worker.ts)');
const port = parentPort;
let state: AnalogsState | null = null;

port.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    if (request.type === 'load') {
      state = analogsStateFromColumns(request.columns);
      reply = { id: request.id, ok: true, result: null };
    } else {
      if (!state) throw new Error('no index loaded');
      reply = { id: request.id, ok: true, result: queryAnalogs(state, request.query, request.k) };
    }
  } catch (err) {
    reply = { id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
