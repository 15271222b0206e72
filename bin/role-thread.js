// Entry point of a role's worker thread (cli/roles/worker-thread.ts). Its code comes bundled into
// JavaScript (cli/roles/thread-code.ts); the bundles' source maps make stack traces name the sources.
import { workerData } from 'node:worker_threads';

process.setSourceMapsEnabled(true);
await import(workerData.main);
