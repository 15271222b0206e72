#!/usr/bin/env node
// Entry point of the `tqa` CLI: registers the TypeScript loader, then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
// A command that has returned is done: a handle still open (a client the stop gave up on at
// its deadline) must not keep the process alive. Unref'd, so it never holds the process itself.
setTimeout(() => process.exit(), 5_000).unref();
