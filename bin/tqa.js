#!/usr/bin/env node
// Entry point of the `tqa` CLI: registers the TypeScript loader, then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
