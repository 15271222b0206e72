import type { RowOf } from '../../infra/store/table.ts';
import type { TOPICS } from '../../schemas/catalogue.ts';
import type { RecordOf } from '../../schemas/records.ts';
import type { ProjectionTables } from '../tables.ts';

/**
 * A projection turns the records of some topics into rows of some store tables. It is a
 * pure function of one record: no IO, no clock, no state, so replaying the log into an
 * empty store rebuilds the same rows (DESIGN.md §3, rule 3). Decoding, validation, batching,
 * offsets and dead letters are the runner's (runner.ts).
 *
 * Adding one: a table definition in projections/tables.ts with one migration per store, a
 * small file in projections/ exporting `defineProjection({...})`, and a line in
 * projections/index.ts.
 */

type CatalogueEntry = (typeof TOPICS)[keyof typeof TOPICS];

/** A topic of the catalogue, by its log name. */
export type TopicName = CatalogueEntry['name'];

/** The decoded and validated value of a topic's records. */
export type ValueOf<N extends TopicName> = RecordOf<Extract<CatalogueEntry, { name: N }>['valueType']>;

export type TableName = keyof ProjectionTables & string;

/** One row for one table; the union over tables lets a projection write several. */
export type ProjectedRow = { [N in TableName]: { table: N; row: RowOf<ProjectionTables[N]> } }[TableName];

/** Where a record sits in the log; its value comes separately. */
export interface RecordMeta {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  /** The record's event time (epoch ms). */
  timestamp: number;
}

export interface Projection<N extends TopicName = TopicName> {
  /** Names its consumer group `projection.<name>` and the dead-letter stage. */
  readonly name: string;
  readonly topics: readonly N[];
  /** Every table toRows may write; a row for any other table is a mapping error. */
  readonly tables: readonly TableName[];
  /**
   * The rows of one record. Throwing sends the record to the dead-letter topic with the
   * message as reason. Tombstones (null values) never reach it: the store keeps the last version.
   */
  toRows(value: ValueOf<N>, meta: RecordMeta): ProjectedRow[];
  /**
   * For a projection whose tables keep one row per key, the highest version (the later on a
   * tie): the key and version of a record's rows. The runner then maps only the newest record
   * of each key in a batch, the one the store would keep; the others are still decoded and
   * validated (a record that fails goes to the dead letters), but never made into rows.
   */
  newestOf?(value: ValueOf<N>): { key: string; version: number };
}

/**
 * A projection of any topics, as the runner and the registry hold it: the value type is
 * erased (the runner validates each value against its topic's schema before calling toRows).
 */
export interface AnyProjection extends Omit<Projection, 'topics' | 'toRows' | 'newestOf'> {
  readonly topics: readonly TopicName[];
  toRows(value: never, meta: RecordMeta): ProjectedRow[];
  newestOf?(value: never): { key: string; version: number };
}

/** Identity with inference, so a projection file states its topics once and gets typed values. */
export function defineProjection<const N extends TopicName>(projection: Projection<N>): Projection<N> {
  return projection;
}
