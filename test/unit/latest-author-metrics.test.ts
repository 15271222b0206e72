import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LatestAuthorMetrics } from '../../api/services/latest-author-metrics.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { authorMetrics } from '../../projections/read-models/authors.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { AuthorMetricsRow } from '../../projections/tables/social.ts';
import { metricsRow } from '../contract/read-models-social.contract.ts';

const D0 = 1_767_225_600_000;
const H = 3_600_000;

const version = (authorId: string, handle: string, n: number, ts: number): AuthorMetricsRow => ({ ...metricsRow(n, ts, 0.5), author_id: authorId, handle });

describe('LatestAuthorMetrics', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let now = 0;
  let statements = 0;
  let authors: LatestAuthorMetrics;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    now = 0;
    statements = 0;
    const counted: ReadStore = {
      query: (statement, options) => {
        statements++;
        return store.query(statement, options);
      },
    };
    authors = new LatestAuthorMetrics({ store: counted, now: () => now });
  });

  afterEach(async () => {
    await store.close();
  });

  it('answers the latest version from memory within the refresh interval, then the newer one', async () => {
    await store.upsert('author_metrics', [version('a1', 'Alice', 1, D0), version('a1', 'Alice', 2, D0 + H)]);
    expect(await authors.find('@ALICE')).toMatchObject({ authorId: 'a1', version: 2 });
    const loaded = statements;
    expect(await authors.find('a1')).toMatchObject({ version: 2 });
    expect(statements).toBe(loaded);

    await store.upsert('author_metrics', [version('a1', 'Alice', 3, D0 + 2 * H)]);
    now = 999;
    expect(await authors.find('alice')).toMatchObject({ version: 2 });
    now = 1_000;
    expect(await authors.find('alice')).toMatchObject({ version: 3 });
  });

  it('keeps the latest when a version of an earlier hour is projected late', async () => {
    await store.upsert('author_metrics', [version('a1', 'Alice', 2, D0 + H)]);
    await authors.find('alice');
    await store.upsert('author_metrics', [version('a1', 'Alice', 1, D0), version('a2', 'Bob', 1, D0)]);
    now = 1_000;
    expect(await authors.find('alice')).toMatchObject({ version: 2 });
    const before = statements;
    expect(await authors.find('@bob')).toMatchObject({ authorId: 'a2', version: 1 });
    expect(statements).toBe(before);
  });

  it('asks the store for a time asked and for a name it does not hold, so a new author shows at once', async () => {
    await store.upsert('author_metrics', [version('a1', 'Alice', 1, D0), version('a1', 'Alice', 2, D0 + H)]);
    await authors.find('alice');
    expect(await authors.find('alice', D0 + H - 1)).toMatchObject({ version: 1 });
    await store.upsert('author_metrics', [version('a3', 'Carol', 1, D0)]);
    expect(await authors.find('@carol')).toMatchObject({ authorId: 'a3' });
    expect(await authors.find('@nobody')).toBeNull();
    expect(await authors.find('@')).toBeNull();
  });

  it('given a name that is one author’s id and another’s handle, picks as the store does: the newest, then the lowest id', async () => {
    await store.upsert('author_metrics', [version('bob', 'Robert', 1, D0), version('a2', 'Bob', 1, D0), version('zed', 'BOB', 1, D0)]);
    expect(await authors.find('bob')).toMatchObject({ authorId: 'a2', handle: 'Bob' });
    expect(await authors.find('bob')).toEqual(await authorMetrics(store, 'bob'));
    await store.upsert('author_metrics', [version('zed', 'BOB', 2, D0 + H)]);
    now = 1_000;
    expect(await authors.find('bob')).toMatchObject({ authorId: 'zed', version: 2 });
    expect(await authors.find('bob')).toEqual(await authorMetrics(store, 'bob'));
  });
});
