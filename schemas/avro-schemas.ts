import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordTypeName } from './records.ts';

const AVRO_DIR = join(import.meta.dirname, 'avro');

/** Every version of a record type's Avro schema, oldest first (files v1.avsc, v2.avsc, ...). */
export function schemaVersions(type: RecordTypeName): string[] {
  const dir = join(AVRO_DIR, type);
  return readdirSync(dir)
    .filter((f) => /^v\d+\.avsc$/.test(f))
    .sort((a, b) => Number(a.slice(1, -5)) - Number(b.slice(1, -5)))
    .map((f) => JSON.stringify(JSON.parse(readFileSync(join(dir, f), 'utf8'))));
}

/** The schema new records of this type are written with: its latest version. */
export function currentSchema(type: RecordTypeName): string {
  const versions = schemaVersions(type);
  const latest = versions.at(-1);
  if (!latest) throw new Error(`no Avro schema for ${type}`);
  return latest;
}
