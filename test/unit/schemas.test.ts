import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBackwardCompatible } from '../../infra/registry/local.ts';
import { schemaVersions } from '../../schemas/avro-schemas.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { RECORD_TYPES, type RecordTypeName } from '../../schemas/records.ts';

const AVRO_DIR = join(import.meta.dirname, '../../schemas/avro');
/** SHA-256 of every released schema version; a released version never changes. */
const RELEASED = JSON.parse(readFileSync(join(AVRO_DIR, 'released.json'), 'utf8')) as Record<string, string[]>;
const fingerprint = (schema: string) => createHash('sha256').update(schema).digest('hex');
const types = Object.keys(RECORD_TYPES) as RecordTypeName[];

describe('schemas', () => {
  it('has one Avro schema folder per record type and a record type for every catalogue topic', () => {
    const folders = readdirSync(AVRO_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.sort()).toEqual([...types].sort());
    for (const topic of CATALOGUE) expect(types).toContain(topic.valueType);
  });

  it('never changes a released version: new versions are added as new files', () => {
    const current = Object.fromEntries(types.map((t) => [t, schemaVersions(t).map(fingerprint)]));
    for (const type of types) {
      const released = RELEASED[type] ?? [];
      // Each released version is still there, unchanged; a newer version may follow.
      expect(current[type].slice(0, released.length), `schemas/avro/${type}`).toEqual(released);
      expect(current[type].length, `${type}: run npm run schemas:release to record a new version`).toBe(released.length);
    }
  });

  it('keeps every version backward compatible with the one before it', () => {
    for (const type of types) {
      const versions = schemaVersions(type);
      for (let v = 1; v < versions.length; v++) {
        expect(() => assertBackwardCompatible(type, versions[v], versions[v - 1])).not.toThrow();
      }
    }
  });

  it('refuses an incompatible change, such as a new field without a default', () => {
    const v1 = schemaVersions('market-tick')[0];
    const broken = JSON.parse(v1);
    broken.fields.push({ name: 'venue', type: 'string' });
    expect(() => assertBackwardCompatible('market-tick', JSON.stringify(broken), v1)).toThrow(/not backward compatible/);
    const evolved = JSON.parse(v1);
    evolved.fields.push({ name: 'venue', type: ['null', 'string'], default: null });
    expect(() => assertBackwardCompatible('market-tick', JSON.stringify(evolved), v1)).not.toThrow();
  });

  it('validates the same fields that the Avro schema carries', () => {
    for (const type of types) {
      const avroFields = (JSON.parse(schemaVersions(type).at(-1)!) as { fields: { name: string }[] }).fields.map((f) => f.name);
      expect(Object.keys(RECORD_TYPES[type].shape).sort(), type).toEqual(avroFields.sort());
    }
  });
});
