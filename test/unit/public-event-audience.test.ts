import { describe, expect, it } from 'vitest';
import { reachesKey } from '../../schemas/records.ts';

describe('who a public event reaches (webhooks and the stream ask the same)', () => {
  it('reaches every key unless it is a manual cohort\'s, then its owner and, when shared, its team only', () => {
    const everyone = { ownerKeyId: null, teamId: null };
    const kept = { ownerKeyId: 'key_owner', teamId: null };
    const shared = { ownerKeyId: 'key_owner', teamId: 'team_desk' };
    const cases: [typeof everyone | typeof kept | typeof shared, string, string | null, boolean][] = [
      [everyone, 'key_any', null, true],
      [everyone, 'key_any', 'team_other', true],
      [kept, 'key_owner', null, true],
      [kept, 'key_mate', 'team_desk', false],
      [shared, 'key_owner', 'team_desk', true],
      [shared, 'key_mate', 'team_desk', true],
      [shared, 'key_rival', 'team_other', false],
      [shared, 'key_loner', null, false],
    ];
    for (const [event, keyId, teamId, expected] of cases) expect(reachesKey(event, keyId, teamId), `${keyId}/${teamId}`).toBe(expected);
  });
});
