import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthorDirectory, AuthorStanding, CrowdLookup } from '../../processors/quant-engine/authors/authors.ts';
import { mention } from '../../processors/quant-engine/authors/test-support.ts';
import {
  advanceTo,
  COHORT_EVENTS_TOPIC,
  COHORTS_TOPIC,
  createCohortsState,
  EARLY_MOVERS_ID,
  isMember,
  onCommand,
  onMention,
  TOP_RESEARCH_ID,
  type CohortsState,
  type CommandResult,
} from '../../processors/quant-engine/cohorts/cohorts.ts';
import type { Mention } from '../../processors/quant-engine/contracts.ts';
import { HOUR, MIN, recordingEmitter, seededRandom, T0 } from '../../processors/quant-engine/tokens/fixtures.ts';
import type { OutputRecord } from '../../processors/runtime/processor.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import type { CohortCommand, CohortVersion, ConvergenceEvent } from '../../schemas/records/quant-social.ts';

/**
 * The cohorts module over a task's store on disk (processors/runtime/state): given the same
 * events, the versions and convergence events it emits and the commands' results equal those
 * of its state held in Maps, however often the store commits and is reopened; a commit writes
 * the keys the events since the last one changed; and the daily sweep keeps only the hours
 * that may still hold a live window or cooldown.
 */

const DAY = 24 * HOUR;
const DAYS = 5;
const TOKENS = ['tk_a', 'tk_b', 'tk_c', 'tk_d', 'tk_e', 'tk_f'];
const AUTHORS = Array.from({ length: 40 }, (_, i) => `au_${String(i).padStart(2, '0')}`);
/** Authors the directory learns of on the third day: until then a manual cohort lists them by handle. */
const LATE_AUTHORS = AUTHORS.slice(30);
/** Always the best researcher, in no manual cohort and never an early mover. */
const STAR = 'au_00';
const STATE_VERSION = 1;
const CHUNK = 300;

type Input = { kind: 'mention'; value: Mention } | { kind: 'command'; value: CohortCommand };

const handleOf = (authorId: string) => `h_${authorId}`;

/** The authors' standings on the event-time day of t: scores and lead times rotate daily, so the auto cohorts' members come and go. */
function standingsAt(t: number): AuthorStanding[] {
  const day = Math.floor((t - T0) / DAY);
  return AUTHORS.filter((a) => day >= 2 || !LATE_AUTHORS.includes(a)).map((authorId, i) => {
    const confidence = (['LOW', 'MEDIUM', 'HIGH', null] as const)[i % 4];
    return {
      authorId,
      handle: handleOf(authorId),
      researchScore: authorId === STAR ? 99 : confidence === null ? null : 40 + ((i * 7 + day * 13) % 55),
      confidence: authorId === STAR ? 'HIGH' : confidence,
      leadTimeSamples: authorId === STAR ? 0 : (i + day) % 6,
      medianLeadTimeMs: HOUR * (0.5 + ((i * 3 + day) % 5)),
    };
  });
}

/** A directory as the authors module gives it, over the standings of the day of t. */
function directoryAt(t: number): AuthorDirectory {
  const standings = standingsAt(t);
  return {
    get: (id) => standings.find((s) => s.authorId === id),
    byHandle: (h) => standings.find((s) => s.handle.toLowerCase() === h.replace(/^@/, '').toLowerCase()),
    all: () => standings,
  };
}

const crowd: CrowdLookup = { uniqueAuthors1h: (tokenId) => 2 * TOKENS.indexOf(tokenId) };

/**
 * Over five days (but the last hour): a mention every 0-4 minutes by a random author (or a never-known `Newbie`),
 * a burst of 3-7 members of one cohort on one token every two hours, and manual cohorts
 * created, changed, shared, deleted, and refused.
 */
function inputs(): Input[] {
  const random = seededRandom(23);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const timed: { at: number; input: Input }[] = [];
  let posts = 0;
  const say = (authorId: string, tokenId: string, at: number, handle = handleOf(authorId)) =>
    timed.push({ at, input: { kind: 'mention', value: { ...mention(authorId, tokenId, at, `po_${posts++}`), authorHandle: handle } } });
  const command = (at: number, c: Partial<CohortCommand> & Pick<CohortCommand, 'action' | 'cohortId'>) =>
    timed.push({ at, input: { kind: 'command', value: { commandId: `cmd_${at}`, name: null, ownerKeyId: 'key_1', teamId: null, members: [], ts: at, ...c } } });

  const manual: Record<string, string[]> = {
    cohort_a: [...AUTHORS.slice(1, 9), '@h_au_35', 'Newbie'],
    cohort_b: AUTHORS.slice(5, 16).map((a) => `@${handleOf(a)}`),
    cohort_c: AUTHORS.slice(20, 26),
  };
  command(T0 + HOUR, { action: 'create', cohortId: 'cohort_a', name: 'A', members: manual.cohort_a });
  command(T0 + 2 * HOUR, { action: 'create', cohortId: 'cohort_b', name: 'B', members: manual.cohort_b });
  command(T0 + DAY + 5 * HOUR, { action: 'set_members', cohortId: 'cohort_a', members: [...AUTHORS.slice(3, 11), 'Newbie'] });
  command(T0 + DAY + 6 * HOUR, { action: 'share', cohortId: 'cohort_b', teamId: 'team_x' });
  command(T0 + 2 * DAY + 3 * HOUR, { action: 'create', cohortId: 'cohort_c', name: 'C', members: manual.cohort_c });
  command(T0 + 2 * DAY + 12 * HOUR, { action: 'share', cohortId: 'cohort_c', teamId: 'team_y', ownerKeyId: 'key_2' }); // refused
  command(T0 + 3 * DAY + 30 * MIN, { action: 'delete', cohortId: 'cohort_b' });
  command(T0 + 3 * DAY + HOUR, { action: 'create', cohortId: 'cohort_b', name: 'B again', members: [] }); // refused
  command(T0 + 4 * DAY + 2 * HOUR, { action: 'set_members', cohortId: 'cohort_c', members: AUTHORS.slice(22, 30) });

  const speakers = [...AUTHORS, 'au_newbie'];
  // The last day's last hour stays quiet, for the commits after the run.
  const end = T0 + DAYS * DAY - HOUR;
  for (let t = T0 + MIN; t < end - 20 * MIN; t += 1 + Math.floor(random() * 4 * MIN)) {
    const authorId = pick(speakers);
    say(authorId, pick(TOKENS), t, authorId === 'au_newbie' ? 'Newbie' : handleOf(authorId));
  }
  for (let t = T0 + 30 * MIN; t < end - 20 * MIN; t += 2 * HOUR) {
    // A burst by the members the cohort had (or has) around then: some have left since.
    const members = pick([AUTHORS.slice(0, 20), AUTHORS.slice(5, 16), AUTHORS.slice(1, 11), AUTHORS.slice(20, 30)]);
    const tokenId = pick(TOKENS);
    const size = 3 + Math.floor(random() * 5);
    for (let i = 0; i < size; i++) say(pick(members), tokenId, t + Math.floor(random() * 20 * MIN));
  }
  // Mentions at equal times keep their order of creation: the sort is stable.
  return timed.sort((a, b) => a.at - b.at).map((e) => e.input);
}

interface Run {
  outputs: OutputRecord[];
  results: CommandResult[];
}

/** Applies the inputs as the engine does: time first, then the event. */
function feed(state: CohortsState, input: Input[], run: Run): void {
  const emitter = recordingEmitter();
  for (const { kind, value } of input) {
    const authors = directoryAt(value.ts);
    advanceTo(state, value.ts, emitter, authors);
    if (kind === 'mention') onMention(state, value, emitter, authors, crowd);
    else run.results.push(onCommand(state, value, emitter, authors));
  }
  run.outputs.push(...emitter.outputs);
}

const valuesOf = <T>(run: Run, topic: string) => run.outputs.filter((o) => o.topic === topic).map((o) => o.value as T);

describe('the cohorts module over a task store', () => {
  let dir: string;
  const input = inputs();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-cohorts-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`emits what the state in Maps emits, with the store committed and reopened every ${CHUNK} events`, async () => {
    const inMaps: Run = { outputs: [], results: [] };
    feed(createCohortsState(), input, inMaps);

    const fromStore: Run = { outputs: [], results: [] };
    const file = join(dir, 'cohorts.lmdb');
    let reopenings = 0;
    for (let from = 0; from < input.length; from += CHUNK) {
      const { store } = await TaskStateStore.open(file, STATE_VERSION);
      feed(createCohortsState(store), input.slice(from, from + CHUNK), fromStore);
      store.commit({ positions: { 'in#0': from + CHUNK }, maxEventTime: -Infinity });
      await store.close();
      reopenings++;
    }

    expect(reopenings).toBeGreaterThanOrEqual(5);
    const versions = valuesOf<CohortVersion>(inMaps, COHORTS_TOPIC);
    const events = valuesOf<ConvergenceEvent>(inMaps, COHORT_EVENTS_TOPIC);
    // Both auto cohorts change on most days; the manual ones: 3 creates, 2 set_members, a share, a delete.
    expect(versions.filter((v) => v.kind === 'auto').length).toBeGreaterThanOrEqual(2 * DAYS - 2);
    expect(versions.filter((v) => v.kind === 'manual')).toHaveLength(7);
    expect(versions.some((v) => v.deleted)).toBe(true);
    expect(inMaps.results.filter((r) => !r.applied)).toHaveLength(2);
    for (const cohortId of [TOP_RESEARCH_ID, EARLY_MOVERS_ID, 'cohort_a', 'cohort_b', 'cohort_c']) {
      expect(events.filter((e) => e.cohortId === cohortId).length, cohortId).toBeGreaterThan(0);
    }
    expect(events.length).toBeGreaterThan(50);
    // A handle member converging before the directory knows the author.
    expect(events.some((e) => e.members.includes('Newbie'))).toBe(true);
    expect(fromStore).toEqual(inMaps);
  });

  it('commits only the keys the events since the last commit changed, and sweeps the hours past the cooldown', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'cohorts.lmdb'), STATE_VERSION);
    const state = createCohortsState(store);
    const run: Run = { outputs: [], results: [] };
    feed(state, input, run);
    expect(store.commit({ positions: {}, maxEventTime: -Infinity }).keysWritten).toBeGreaterThan(50);

    // The last sweep (at the last day's start) kept the 6 hours before it; each of the 23 hours
    // with mentions since is listed too: the store holds no window or cooldown older than those.
    const lastDay = T0 + (DAYS - 1) * DAY;
    const hours = [...store.table<number[]>('cohorts-touched-hours').entries()].map(([, value]) => value);
    expect(hours).toEqual([Array.from({ length: 6 + 23 }, (_, i) => (lastDay - 6 * HOUR) / HOUR + i)]);
    expect([...store.table('cohorts-touched-by-hour').entries()]).toHaveLength(6 + 23);

    // The star is a member of the top-research cohort only.
    for (const cohortId of [EARLY_MOVERS_ID, 'cohort_a', 'cohort_b', 'cohort_c']) expect(isMember(state, cohortId, STAR)).toBe(false);
    expect(isMember(state, TOP_RESEARCH_ID, STAR)).toBe(true);
    const converged = valuesOf(run, COHORT_EVENTS_TOPIC).length;

    // In the day's last hour, still without a mention, the star mentions a token new to all:
    // the clock, the window of top-research on the token, the hour's list of cohort-token keys
    // and the list of hours. One member does not converge.
    const quiet = lastDay + 23 * HOUR + MIN;
    expect(input.at(-1)!.value.ts).toBeLessThan(lastDay + 23 * HOUR);
    feed(state, [{ kind: 'mention', value: mention(STAR, 'tk_new', quiet, 'po_star_1') }], run);
    expect(store.commit({ positions: {}, maxEventTime: quiet }).keysWritten).toBe(4);

    // Again a minute later: the clock and the window; the key is listed under the hour already.
    feed(state, [{ kind: 'mention', value: mention(STAR, 'tk_new', quiet + MIN, 'po_star_2') }], run);
    expect(store.commit({ positions: {}, maxEventTime: quiet + MIN }).keysWritten).toBe(2);
    expect(valuesOf(run, COHORT_EVENTS_TOPIC)).toHaveLength(converged);
    await store.close();
  });
});
