import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { ApiWorld } from '../../helpers/api-world.ts';
import { fencedBlocks, readDoc } from '../../helpers/markdown.ts';

const run = promisify(execFile);

/** The origin the examples are written for: `npm start`'s default port. */
const DOCS_ORIGIN = 'http://localhost:8080';

/**
 * Every `sh` example of the README and docs/api.md, run as a reader would paste it, in one
 * bash session per file, against the served world. Each curl's status is checked: 2xx, or the
 * status the line ends with as `# → NNN`.
 */
const CURL_WRAPPER = [
  'set -euo pipefail',
  'curl() {',
  '  local out',
  "  out=$(command curl -sS -w '\\n%{http_code}' \"$@\")",
  "  printf '%s\\n' \"${out##*$'\\n'}\" >> \"$STATUS_LOG\"",
  "  printf '%s\\n' \"${out%$'\\n'*}\"",
  '}',
  '',
].join('\n');

/** The status each curl of the blocks must answer, in the order the shell runs them. */
function expectedStatuses(script: string): string[] {
  const expected: string[] = [];
  for (const line of script.replace(/\\\n/g, ' ').split('\n')) {
    const curls = [...line.matchAll(/(?<![\w-])curl\s/g)].length;
    if (curls === 0) continue;
    const stated = /#\s*→\s*(\d{3})\b/.exec(line)?.[1];
    for (let i = 0; i < curls; i++) expected.push(i === curls - 1 && stated ? stated : '2xx');
  }
  return expected;
}

export function docsExampleCases(world: () => ApiWorld): void {
  describe('the shell examples of the docs', () => {
    for (const file of ['README.md', 'docs/api.md']) {
      it(`${file}: every curl answers the status it shows`, async () => {
        const script = fencedBlocks(readDoc(file))
          .filter((b) => b.lang === 'sh')
          .map((b) => b.body)
          .join('\n');
        const expected = expectedStatuses(script);
        expect(expected.length, `${file} has curl examples`).toBeGreaterThan(0);

        const dir = await mkdtemp(join(tmpdir(), 'tqa-docs-'));
        try {
          await mkdir(join(dir, 'data'));
          await writeFile(join(dir, 'data', 'demo-key'), world().keys.team);
          const scriptFile = join(dir, 'examples.sh');
          await writeFile(scriptFile, CURL_WRAPPER + script.replaceAll(DOCS_ORIGIN, world().base));
          const statusLog = join(dir, 'statuses');
          await writeFile(statusLog, '');
          const result = await run('bash', [scriptFile], { cwd: dir, env: { ...process.env, STATUS_LOG: statusLog }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }).catch((err: { stderr?: string; message: string }) => {
            throw new Error(`${file}'s examples failed: ${err.stderr || err.message}`);
          });
          const answered = (await readFile(statusLog, 'utf8')).trim().split('\n');
          expect(answered.length, result.stderr).toBe(expected.length);
          answered.forEach((status, i) => {
            const want = expected[i];
            expect(want === '2xx' ? status.startsWith('2') : status === want, `curl #${i + 1} of ${file} answered ${status}, the docs show ${want}`).toBe(true);
          });
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
  });
}
