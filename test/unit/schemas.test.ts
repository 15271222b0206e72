import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertBackwardCompatible } from '../../infra/registry/local.ts';
import { schemaVersions } from '../../schemas/avro-schemas.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { RECORD_TYPES, type RecordTypeName } from '../../schemas/records.ts';
import { isNonEmptyString, isNullableFinite, isNullablePercent, nullableNumber, stringMap } from '../../schemas/records/primitives.ts';

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

describe('string maps of the quant records', () => {
  const rules = [
    { name: 'nullable finite number', value: nullableNumber, accepts: isNullableFinite },
    { name: 'nullable percent', value: z.number().min(0).max(100).nullable(), accepts: isNullablePercent },
    { name: 'non-empty string', value: z.string().min(1), accepts: isNonEmptyString },
  ];
  const values: unknown[] = [null, undefined, 0, -0, -1, 0.5, 50, 100, 100.01, -1e-9, 1e300, NaN, Infinity, -Infinity, '', 'x', 'features@1', true, {}, [], 7n];

  it('has predicates that accept exactly what their zod rules accept', () => {
    for (const { name, value, accepts } of rules) {
      for (const v of values) expect(accepts(v), `${name}: ${String(v)}`).toBe(value.safeParse(v).success);
    }
  });

  it('accepts and refuses what zod records do, with the same issues, and passes a valid map through', () => {
    const inputs: unknown[] = [
      {},
      { a: 1, b: null, c: 'x', d: '' },
      { a: 1, b: 2 },
      { a: 'x', b: '' },
      { a: NaN },
      { a: 101, b: -1 },
      Object.create(null),
      Object.assign(Object.create(null), { a: 1 }),
      { [Symbol('s')]: 1 },
      new Map([['a', 1]]),
      [1, 2],
      null,
      undefined,
      'a',
    ];
    for (const { name, value, accepts } of rules) {
      const fast = z.strictObject({ features: stringMap(value, accepts) });
      const reference = z.strictObject({ features: z.record(z.string(), value) });
      for (const [at, input] of inputs.entries()) {
        const got = fast.safeParse({ features: input });
        const want = reference.safeParse({ features: input });
        const issues = (r: typeof got) => r.error?.issues.map((i) => ({ path: i.path, message: i.message, code: i.code }));
        expect(got.success, `${name}: input ${at}`).toBe(want.success);
        expect(issues(got), `${name}: input ${at}`).toEqual(issues(want));
        if (got.success) expect(got.data.features).toBe(input);
      }
    }
  });
});
