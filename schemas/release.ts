// `npm run schemas:release`: records the fingerprint of every new schema version in
// schemas/avro/released.json. It refuses when a released version was edited: that is a
// breaking change; add a new version file instead.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaVersions } from './avro-schemas.ts';
import { RECORD_TYPES, type RecordTypeName } from './records.ts';

const file = join(import.meta.dirname, 'avro', 'released.json');
const released = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
const next: Record<string, string[]> = {};
for (const type of Object.keys(RECORD_TYPES).sort() as RecordTypeName[]) {
  const current = schemaVersions(type).map((s) => createHash('sha256').update(s).digest('hex'));
  const before = released[type] ?? [];
  const edited = before.findIndex((fp, i) => current[i] !== fp);
  if (edited >= 0) {
    process.stderr.write(`schemas/avro/${type}/v${edited + 1}.avsc was released and has changed; restore it and add a new version\n`);
    process.exit(1);
  }
  next[type] = current;
}
writeFileSync(file, JSON.stringify(next, null, 2) + '\n');
