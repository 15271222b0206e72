import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import avro from 'avsc';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { ProcessLock } from '../fs/process-lock.ts';
import type { SchemaRegistryClient } from '../../schemas/registry-port.ts';

interface Entry {
  id: number;
  subject: string;
  schema: string;
}

/**
 * The embedded mode's schema registry: one JSON file in the data dir, shared safely by
 * every process on the machine. Like a Confluent registry it gives the same id to the
 * same schema and refuses a new version that cannot read data written with the previous.
 */
export class LocalSchemaRegistry implements SchemaRegistryClient {
  private entries: Entry[] = [];
  private readonly file: string;
  private lock: ProcessLock | undefined;

  constructor(private readonly dataDir: string) {
    this.file = join(dataDir, 'schema-registry.json');
  }

  async register(subject: string, schema: string): Promise<number> {
    const canonical = canonicalise(schema);
    const known = this.entries.find((e) => e.subject === subject && e.schema === canonical);
    if (known) return known.id;
    return (await this.getLock()).withLock(async () => {
      await this.reload();
      const existing = this.entries.find((e) => e.subject === subject && e.schema === canonical);
      if (existing) return existing.id;
      const latest = this.entries.filter((e) => e.subject === subject).at(-1);
      if (latest) assertBackwardCompatible(subject, canonical, latest.schema);
      const sameSchema = this.entries.find((e) => e.schema === canonical);
      const id = sameSchema?.id ?? Math.max(0, ...this.entries.map((e) => e.id)) + 1;
      this.entries.push({ id, subject, schema: canonical });
      await writeFileAtomic(this.file, JSON.stringify({ schemas: this.entries }, null, 1));
      return id;
    });
  }

  async schemaById(id: number): Promise<string> {
    let entry = this.entries.find((e) => e.id === id);
    if (!entry) {
      await this.reload();
      entry = this.entries.find((e) => e.id === id);
    }
    if (!entry) throw new Error(`schema id ${id} is not in the local registry`);
    return entry.schema;
  }

  private async getLock(): Promise<ProcessLock> {
    await mkdir(this.dataDir, { recursive: true });
    this.lock ??= new ProcessLock(this.dataDir);
    return this.lock;
  }

  private async reload(): Promise<void> {
    try {
      this.entries = (JSON.parse(await readFile(this.file, 'utf8')) as { schemas: Entry[] }).schemas;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

function canonicalise(schema: string): string {
  return JSON.stringify(JSON.parse(schema));
}

/** Backward compatible: a reader with the new schema can decode records written with the old. */
export function assertBackwardCompatible(subject: string, next: string, previous: string): void {
  const reader = avro.Type.forSchema(JSON.parse(next));
  const writer = avro.Type.forSchema(JSON.parse(previous));
  try {
    reader.createResolver(writer);
  } catch (err) {
    throw new Error(`schema for ${subject} is not backward compatible: ${(err as Error).message}`);
  }
}
