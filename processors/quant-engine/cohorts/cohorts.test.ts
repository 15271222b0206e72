import { describe, expect, it } from 'vitest';
import {
  CohortCommandSchema,
  CohortVersionSchema,
  ConvergenceEventSchema,
  type CohortCommand,
  type CohortVersion,
  type ConvergenceEvent,
} from '../../../schemas/records/quant-social.ts';
import type { AuthorDirectory, AuthorStanding, CrowdLookup } from '../authors/authors.ts';
import { checkpointed, expectConforms, mention, recordingEmitter } from '../authors/test-support.ts';
import {
  advanceTo,
  COHORT_EVENTS_TOPIC,
  COHORTS_TOPIC,
  createCohortsState,
  EARLY_MOVERS_ID,
  EARLY_MOVERS_SIZE,
  onCommand,
  onMention,
  TOP_RESEARCH_ID,
  type CohortsState,
} from './cohorts.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2024, 0, 1);

function standing(authorId: string, extra: Partial<AuthorStanding> = {}): AuthorStanding {
  return { authorId, handle: `h_${authorId}`, researchScore: null, confidence: null, leadTimeSamples: 0, medianLeadTimeMs: null, ...extra };
}

function directory(standings: AuthorStanding[]): AuthorDirectory {
  return {
    get: (id) => standings.find((s) => s.authorId === id),
    byHandle: (h) => standings.find((s) => s.handle.toLowerCase() === h.replace(/^@/, '').toLowerCase()),
    all: () => standings,
  };
}

const noCrowd: CrowdLookup = { uniqueAuthors1h: () => 0 };

class Harness {
  state: CohortsState = createCohortsState();
  readonly out = recordingEmitter();
  constructor(
    public authors: AuthorDirectory = directory([]),
    public crowd: CrowdLookup = noCrowd,
  ) {}
  advance(t: number): void {
    advanceTo(this.state, t, this.out, this.authors);
  }
  mention(authorId: string, tokenId: string, ts: number, handle = `h_${authorId}`): void {
    this.advance(ts);
    onMention(this.state, { ...mention(authorId, tokenId, ts), authorHandle: handle }, this.out, this.authors, this.crowd);
  }
  command(c: Partial<CohortCommand> & Pick<CohortCommand, 'action' | 'ts'>) {
    const command: CohortCommand = {
      commandId: `cmd_${c.action}_${c.ts}`,
      cohortId: 'cohort_mine',
      name: null,
      ownerKeyId: 'key_owner',
      teamId: null,
      members: [],
      ...c,
    };
    expectConforms('cohort-command', CohortCommandSchema, command);
    this.advance(command.ts);
    return onCommand(this.state, command, this.out, this.authors);
  }
  versions(cohortId?: string): CohortVersion[] {
    return this.out.values<CohortVersion>(COHORTS_TOPIC).filter((v) => cohortId === undefined || v.cohortId === cohortId);
  }
  events(): ConvergenceEvent[] {
    return this.out.values<ConvergenceEvent>(COHORT_EVENTS_TOPIC);
  }
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `au_${i}`);

describe('convergence', () => {
  it('fires exactly when max(3, 10%) distinct members mention a token within 60 minutes', () => {
    const members = ids(4);
    const h = new Harness(directory(members.map((a) => standing(a))));
    h.command({ action: 'create', name: 'Mine', members, ts: T0 });
    h.mention('au_0', 'tk_a', T0 + HOUR);
    h.mention('au_0', 'tk_a', T0 + HOUR + 5 * MIN); // the same member twice is one
    h.mention('au_1', 'tk_a', T0 + HOUR + 10 * MIN);
    h.mention('au_9', 'tk_a', T0 + HOUR + 15 * MIN); // not a member
    h.mention('au_2', 'tk_b', T0 + HOUR + 20 * MIN); // another token
    expect(h.events()).toEqual([]);
    h.mention('au_2', 'tk_a', T0 + HOUR + 30 * MIN);
    const [event] = h.events();
    expect(event).toMatchObject({
      cohortId: 'cohort_mine',
      cohortKind: 'manual',
      cohortName: 'Mine',
      cohortVersion: 1,
      ownerKeyId: 'key_owner',
      teamId: null,
      tokenId: 'tk_a',
      ts: T0 + HOUR + 30 * MIN,
      memberCount: 3,
      cohortSize: 4,
      windowMinutes: 60,
      members: ['h_au_0', 'h_au_1', 'h_au_2'],
    });
    expectConforms('convergence-event', ConvergenceEventSchema, event);
    expect(h.out.outputs.find((o) => o.topic === COHORT_EVENTS_TOPIC)).toMatchObject({ key: 'tk_a', timestamp: event.ts });
  });

  it('needs 10% of a large cohort, within the window', () => {
    const members = ids(50); // threshold 5
    const h = new Harness(directory(members.map((a) => standing(a))));
    h.command({ action: 'create', name: 'Big', members, ts: T0 });
    h.mention('au_0', 'tk_a', T0 + HOUR);
    for (let i = 1; i <= 3; i++) h.mention(`au_${i}`, 'tk_a', T0 + HOUR + 30 * MIN + i * MIN);
    // au_0's mention is exactly 60 minutes old at the fifth member's: outside the window.
    h.mention('au_4', 'tk_a', T0 + 2 * HOUR);
    expect(h.events()).toEqual([]);
    h.mention('au_5', 'tk_a', T0 + 2 * HOUR + MIN);
    expect(h.events().map((e) => [e.memberCount, e.cohortSize])).toEqual([[5, 50]]);
  });

  it('does not fire again for the same cohort and token within 6 hours', () => {
    const members = ids(3);
    const h = new Harness(directory(members.map((a) => standing(a))));
    h.command({ action: 'create', name: 'Trio', members, ts: T0 });
    const burst = (t: number, token = 'tk_a') => members.forEach((a, i) => h.mention(a, token, t + i * MIN));
    burst(T0 + HOUR);
    burst(T0 + HOUR + 10 * MIN, 'tk_b'); // another token is independent
    burst(T0 + 3 * HOUR);
    burst(T0 + 7 * HOUR - MIN); // its third mention is 1 minute short of 6h after the event
    expect(h.events().map((e) => [e.tokenId, e.ts])).toEqual([
      ['tk_a', T0 + HOUR + 2 * MIN],
      ['tk_b', T0 + HOUR + 12 * MIN],
    ]);
    h.mention('au_0', 'tk_a', T0 + 7 * HOUR + 2 * MIN);
    expect(h.events().map((e) => [e.tokenId, e.ts]).at(-1)).toEqual(['tk_a', T0 + 7 * HOUR + 2 * MIN]);
  });

  it('scores tightness, member quality and earliness', () => {
    const members = ids(3);
    const authors = directory([standing('au_0', { researchScore: 90 }), standing('au_1', { researchScore: 70 }), standing('au_2')]);
    const crowd: CrowdLookup = { uniqueAuthors1h: (t) => (t === 'tk_a' ? 8 : 3) };
    const h = new Harness(authors, crowd);
    h.command({ action: 'create', name: 'Trio', members, ts: T0 });
    members.forEach((a, i) => h.mention(a, 'tk_a', T0 + HOUR + i * 15 * MIN));
    members.forEach((a) => h.mention(a, 'tk_b', T0 + 2 * HOUR));
    const [a, b] = h.events();
    // tk_a: span 30 of 60 min → 0.5; quality (90 + 70 + 50) / 300 = 0.7; 5 outsiders of 10 → 0.5.
    expect(a.score).toBeCloseTo(100 * (0.4 * 0.5 + 0.35 * 0.7 + 0.25 * 0.5), 6);
    // tk_b: simultaneous, no outsiders.
    expect(b.score).toBeCloseTo(100 * (0.4 + 0.35 * 0.7 + 0.25), 6);
  });
});

describe('manual cohorts', () => {
  it('go through create, set_members, share and delete, one version each', () => {
    const authors = directory([standing('au_0'), standing('au_1'), standing('au_2', { handle: 'Alice' })]);
    const h = new Harness(authors);
    expect(h.command({ action: 'create', name: 'Watch', members: ['au_0', '@alice', 'ALICE', 'newbie'], teamId: null, ts: T0 })).toEqual({
      applied: true,
      version: 1,
    });
    expect(h.command({ action: 'set_members', members: ['@h_au_1', 'au_0'], ts: T0 + HOUR })).toEqual({ applied: true, version: 2 });
    expect(h.command({ action: 'share', teamId: 'team_x', ts: T0 + 2 * HOUR })).toEqual({ applied: true, version: 3 });
    expect(h.command({ action: 'delete', ts: T0 + 3 * HOUR })).toEqual({ applied: true, version: 4 });

    const versions = h.versions('cohort_mine');
    expect(versions.map((v) => [v.version, v.ts, v.teamId, v.deleted, v.commandId])).toEqual([
      [1, T0, null, false, `cmd_create_${T0}`],
      [2, T0 + HOUR, null, false, `cmd_set_members_${T0 + HOUR}`],
      [3, T0 + 2 * HOUR, 'team_x', false, `cmd_share_${T0 + 2 * HOUR}`],
      [4, T0 + 3 * HOUR, 'team_x', true, `cmd_delete_${T0 + 3 * HOUR}`],
    ]);
    expect(versions[0]).toMatchObject({ kind: 'manual', name: 'Watch', ownerKeyId: 'key_owner', rule: 'Members chosen by the owner.' });
    // Ids and handles resolve to authors; a handle never seen stays a handle; duplicates go.
    expect(versions[0].members).toEqual([
      { authorId: 'au_0', handle: 'h_au_0' },
      { authorId: 'au_2', handle: 'Alice' },
      { authorId: null, handle: 'newbie' },
    ]);
    expect(versions[1].members.map((m) => m.authorId)).toEqual(['au_1', 'au_0']);
    expect(versions[3].members).toEqual([]);
    for (const v of versions) expectConforms('cohort-version', CohortVersionSchema, v);
  });

  it('refuse changes by another key, to missing or deleted cohorts, duplicates and auto cohorts', () => {
    const h = new Harness();
    expect(h.command({ action: 'set_members', members: ['x'], ts: T0 })).toMatchObject({ applied: false, reason: expect.stringMatching(/does not exist/) });
    h.command({ action: 'create', name: 'Mine', ts: T0 });
    expect(h.command({ action: 'create', name: 'Again', ts: T0 + 1 })).toMatchObject({ applied: false, reason: expect.stringMatching(/already exists/) });
    expect(h.command({ action: 'share', teamId: 't', ownerKeyId: 'key_other', ts: T0 + 2 })).toMatchObject({
      applied: false,
      reason: expect.stringMatching(/another key/),
    });
    expect(h.command({ action: 'delete', cohortId: TOP_RESEARCH_ID, ts: T0 + 3 })).toMatchObject({ applied: false });
    h.command({ action: 'delete', ts: T0 + 4 });
    expect(h.command({ action: 'set_members', members: ['x'], ts: T0 + 5 })).toMatchObject({ applied: false });
    expect(h.versions('cohort_mine').map((v) => v.version)).toEqual([1, 2]);
  });

  it('match members by handle until the author is known, and stop converging once deleted', () => {
    const h = new Harness();
    h.command({ action: 'create', name: 'Handles', members: ['@Ann', 'bob', 'cy'], ts: T0 });
    h.mention('au_a', 'tk_a', T0 + HOUR, 'ann');
    h.mention('au_b', 'tk_a', T0 + HOUR + MIN, 'Bob');
    h.mention('au_c', 'tk_a', T0 + HOUR + 2 * MIN, 'cy');
    expect(h.events().map((e) => e.members)).toEqual([['Ann', 'bob', 'cy']]);
    h.command({ action: 'delete', ts: T0 + 2 * HOUR });
    for (const [i, handle] of ['ann', 'bob', 'cy'].entries()) h.mention(`au_${handle}`, 'tk_b', T0 + 3 * HOUR + i * MIN, handle);
    expect(h.events()).toHaveLength(1);
  });

  it('count an author listed both by id and by a new handle once', () => {
    const h = new Harness(directory(ids(3).map((a) => standing(a))));
    h.command({ action: 'create', name: 'Dup', members: ['au_0', 'renamed', 'au_1', 'au_2'], ts: T0 });
    h.mention('au_0', 'tk_a', T0 + HOUR, 'renamed');
    h.mention('au_1', 'tk_a', T0 + HOUR + MIN);
    expect(h.events()).toEqual([]);
    h.mention('au_2', 'tk_a', T0 + HOUR + 2 * MIN);
    expect(h.events().map((e) => e.memberCount)).toEqual([3]);
  });

  it('forget the window entries of members who left', () => {
    const h = new Harness(directory(ids(4).map((a) => standing(a))));
    h.command({ action: 'create', name: 'Four', members: ids(4), ts: T0 });
    h.mention('au_0', 'tk_a', T0 + HOUR);
    h.mention('au_1', 'tk_a', T0 + HOUR + MIN);
    h.command({ action: 'set_members', members: ['au_1', 'au_2', 'au_3'], ts: T0 + HOUR + 2 * MIN });
    h.mention('au_2', 'tk_a', T0 + HOUR + 3 * MIN);
    expect(h.events()).toEqual([]);
    h.mention('au_3', 'tk_a', T0 + HOUR + 4 * MIN);
    expect(h.events().map((e) => e.members)).toEqual([['h_au_1', 'h_au_2', 'h_au_3']]);
  });
});

describe('state', () => {
  it('survives a checkpoint round trip mid-stream with identical outputs', () => {
    const run = (restore: boolean) => {
      const h = new Harness(directory(ids(4).map((a) => standing(a, { researchScore: 60, confidence: 'MEDIUM' }))));
      h.command({ action: 'create', name: 'Mine', members: ['au_0', 'au_1', '@newbie'], ts: T0 });
      h.mention('au_0', 'tk_a', T0 + HOUR);
      h.mention('au_1', 'tk_a', T0 + HOUR + MIN);
      if (restore) h.state = checkpointed(h.state);
      h.mention('au_9', 'tk_a', T0 + HOUR + 2 * MIN, 'Newbie');
      h.mention('au_2', 'tk_a', T0 + HOUR + 3 * MIN);
      h.advance(T0 + 2 * DAY);
      return JSON.stringify(h.out.outputs);
    };
    const straight = run(false);
    expect(straight).toContain(COHORT_EVENTS_TOPIC);
    expect(run(true)).toBe(straight);
  });
});

describe('auto cohorts', () => {
  it('are created at the first event and recomputed at each day boundary, versioned on change only', () => {
    const standings = [
      standing('au_0', { researchScore: 80, confidence: 'HIGH' }),
      standing('au_1', { researchScore: 95, confidence: 'LOW' }),
      standing('au_2', { researchScore: 60, confidence: 'MEDIUM', leadTimeSamples: 3, medianLeadTimeMs: 2 * HOUR }),
      standing('au_3', { leadTimeSamples: 2, medianLeadTimeMs: 5 * HOUR }),
      standing('au_4', { leadTimeSamples: 5, medianLeadTimeMs: HOUR }),
      standing('au_5', { leadTimeSamples: 5, medianLeadTimeMs: HOUR - 1 }),
    ];
    const live: AuthorStanding[] = [];
    const h = new Harness(directory(live));
    h.advance(T0 + 5 * HOUR);
    expect(h.versions().map((v) => [v.cohortId, v.version, v.ts, v.members.length])).toEqual([
      [TOP_RESEARCH_ID, 1, T0 + 5 * HOUR, 0],
      [EARLY_MOVERS_ID, 1, T0 + 5 * HOUR, 0],
    ]);
    live.push(...standings);
    h.advance(T0 + DAY - 1);
    expect(h.versions()).toHaveLength(2);
    h.advance(T0 + DAY + 3 * HOUR);
    const top = h.versions(TOP_RESEARCH_ID).at(-1)!;
    const early = h.versions(EARLY_MOVERS_ID).at(-1)!;
    expect(top).toMatchObject({ version: 2, ts: T0 + DAY, kind: 'auto', ownerKeyId: null, commandId: null, deleted: false });
    expect(top.members.map((m) => m.authorId)).toEqual(['au_0', 'au_2']);
    expect(early.members.map((m) => m.authorId)).toEqual(['au_2', 'au_4']);
    expectConforms('cohort-version', CohortVersionSchema, top);
    h.advance(T0 + 2 * DAY);
    expect(h.versions()).toHaveLength(4);
    // Manual commands cannot touch them.
    expect(h.command({ action: 'set_members', cohortId: EARLY_MOVERS_ID, members: [], ts: T0 + 2 * DAY })).toMatchObject({ applied: false });
  });

  it('keep at most 20 authors in top-research, highest score first', () => {
    const live = Array.from({ length: 25 }, (_, i) => standing(`au_${String(i).padStart(2, '0')}`, { researchScore: 50 + i, confidence: 'MEDIUM' }));
    const h = new Harness(directory(live));
    h.advance(T0);
    const [top] = h.versions(TOP_RESEARCH_ID);
    expect(top.members).toHaveLength(20);
    expect(top.members[0].authorId).toBe('au_24');
    expect(top.members.at(-1)!.authorId).toBe('au_05');
  });

  it('keep at most 50 early movers, longest median lead first', () => {
    const live = Array.from({ length: 60 }, (_, i) =>
      standing(`au_${String(i).padStart(2, '0')}`, { leadTimeSamples: 3, medianLeadTimeMs: HOUR + i * MIN }),
    );
    const h = new Harness(directory(live));
    h.advance(T0);
    const [early] = h.versions(EARLY_MOVERS_ID);
    expect(early.members).toHaveLength(EARLY_MOVERS_SIZE);
    expect(early.members[0].authorId).toBe('au_59');
    expect(early.members.at(-1)!.authorId).toBe('au_10');
  });

  it('converge and reach everyone (no owner)', () => {
    const live = ids(3).map((a, i) => standing(a, { researchScore: 70 + i, confidence: 'HIGH' }));
    const h = new Harness(directory(live));
    ids(3).forEach((a, i) => h.mention(a, 'tk_a', T0 + HOUR + i * MIN));
    expect(h.events().map((e) => [e.cohortId, e.cohortKind, e.ownerKeyId, e.memberCount])).toEqual([[TOP_RESEARCH_ID, 'auto', null, 3]]);
  });
});
