import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import { IMPORT_KINDS } from '../../infra/feeds/import/formats.ts';
import { describe, formatOf, IMPORT_FORMATS, ImportFileError, importFile } from '../../infra/feeds/import/importer.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { Progress } from '../progress.ts';

const USAGE = `tqa ingest FILE --kind posts|market|tokens [--format ndjson|csv]
    Import an NDJSON (.ndjson, .jsonl) or CSV (.csv) file; formats in docs/feeds.md.
    Valid rows go to their topic; each invalid row is reported here with its line and
    sent to ops.dead-letters. Exit code 0 only if every row was accepted.`;

/** Files at least this large get a progress display. */
const PROGRESS_MIN_BYTES = 1024 * 1024;

export const ingestCommand: CliCommand = {
  name: 'ingest',
  summary: 'import posts, market ticks or token metadata from an NDJSON or CSV file',
  usage: USAGE,
  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(args);
    if (positionals.length !== 1) throw new UsageError('ingest takes exactly one FILE');
    const kind = oneOf(IMPORT_KINDS, values.kind, '--kind');
    const format = values.format === undefined ? undefined : oneOf(IMPORT_FORMATS, values.format, '--format');
    const path = positionals[0];
    if (!format && !formatOf(path)) throw new UsageError(`cannot tell the format of ${path}: name it .ndjson, .jsonl or .csv, or give --format`);

    const services = await openLogServices(ctx.config, ctx.logger);
    let progress: Progress | undefined;
    try {
      const result = await importFile({
        path,
        kind,
        format,
        log: services.log,
        codec: services.codec,
        now: () => Date.now(),
        onReject: (r) => {
          const line = `${path}:${r.line}: ${describe(r.errors)}`;
          if (progress) progress.log(line);
          else ctx.stderr.write(line + '\n');
        },
        onProgress: (p) => {
          if (!progress && p.totalBytes >= PROGRESS_MIN_BYTES) {
            progress = new Progress({ stream: ctx.stderr, label: `ingest ${kind}`, unit: 'rows' });
          }
          progress?.update(p.rows, p.totalBytes > 0 ? p.bytesRead / p.totalBytes : null);
        },
      });
      progress?.finish();
      ctx.stdout.write(
        `${path}: ${result.rows} rows, ${result.accepted} accepted, ${result.rejected} rejected` +
          (result.rejected > 0 ? ' (sent to ops.dead-letters)' : '') +
          '\n',
      );
      return result.rejected === 0 ? 0 : 1;
    } catch (err) {
      if (!(err instanceof ImportFileError)) throw err;
      ctx.stderr.write(`${path}: ${err.message}\n`);
      return 1;
    } finally {
      await services.close();
    }
  },
};

function parseCommandLine(args: string[]) {
  try {
    return parseArgs({
      args,
      options: { kind: { type: 'string' }, format: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function oneOf<T extends string>(allowed: readonly T[], value: string | undefined, flag: string): T {
  const found = allowed.find((a) => a === value);
  if (!found) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}${value === undefined ? '' : `, got "${value}"`}`);
  return found;
}
