import { defineTable, type RowOf } from '../infra/store/table.ts';

// Declared in presenters/, the lowest layer that reads token rows; projections/tables.ts lists it with the other tables.

/** Token metadata as of its latest ingest.tokens event (schemas/records.ts TokenMeta). */
export const tokens = defineTable({
  name: 'tokens',
  columns: {
    token_id: 'string',
    ts: 'int64',
    symbol: 'string',
    name: 'string',
    chain: 'string',
    address: 'string',
    logo_url: 'string?',
    status: 'string',
    narrative: 'string',
    source_url: 'string?',
  },
  key: ['token_id'],
  // A later metadata event replaces an earlier one; event time orders them.
  version: 'ts',
});
export type TokenRow = RowOf<typeof tokens>;
