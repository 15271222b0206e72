import { defineTable, type RowOf } from '../../infra/store/table.ts';

/**
 * API keys as of their latest control.keys event (schemas/records/control-keys.ts). Only
 * the sha256 of a key is kept; `scopes` is a JSON array. A revoke is a later version of
 * the same row with `revoked_at` set, so a replay keeps the revocation.
 */
export const apiKeys = defineTable({
  name: 'api_keys',
  columns: {
    key_id: 'string',
    ts: 'int64',
    hash: 'string',
    name: 'string',
    plan: 'string',
    scopes: 'json',
    created_at: 'int64',
    revoked_at: 'int64?',
    team_id: 'string?',
  },
  key: ['key_id'],
  version: 'ts',
});
export type ApiKeyRow = RowOf<typeof apiKeys>;

/** Teams by id (control.teams): keys of a team see the manual cohorts shared with it. */
export const teams = defineTable({
  name: 'teams',
  columns: {
    team_id: 'string',
    ts: 'int64',
    name: 'string',
  },
  key: ['team_id'],
  version: 'ts',
});
export type TeamRow = RowOf<typeof teams>;
