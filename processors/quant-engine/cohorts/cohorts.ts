import type {
  CohortCommand,
  CohortKind,
  CohortMember,
  CohortVersion,
  ConvergenceEvent,
} from '../../../schemas/records/quant-social.ts';
import type { AuthorDirectory, AuthorStanding, CrowdLookup } from '../authors/authors.ts';
import type { Emitter, Mention } from '../contracts.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';

/**
 * Cohorts: groups of authors with versioned membership, and convergence when enough
 * members mention the same token within an hour.
 *
 * Auto cohorts are recomputed at every event-time day boundary (UTC) from the authors'
 * latest published metrics; a new version is emitted only when membership changed.
 * Manual cohorts change only through cohort commands, applied in log order. Convergence
 * fires when at least max(3, ⌈10% of the cohort⌉) distinct members mentioned a token within
 * the last 60 minutes, and not again for the same cohort and token within 6 hours.
 *
 * The state lives in tables (CohortsState): a mention reads and writes a few keys (the
 * cohort-token windows it joins, their cooldowns, the hour's list of such keys), a cohort's
 * change the index entries of the members who joined or left.
 */

export const COHORTS_TOPIC = TOPICS.cohorts.name;
export const COHORT_EVENTS_TOPIC = TOPICS.cohortEvents.name;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
export const CONVERGENCE_WINDOW_MINUTES = 60;
const WINDOW_MS = CONVERGENCE_WINDOW_MINUTES * MINUTE_MS;
export const CONVERGENCE_COOLDOWN_MS = 6 * HOUR_MS;
const MIN_CONVERGING_MEMBERS = 3;
const CONVERGING_SHARE = 0.1;
/** Outside authors on the token within the hour at which a convergence counts as late. */
const CROWDED_OUTSIDERS = 10;

export const TOP_RESEARCH_ID = 'cohort_top-research';
export const EARLY_MOVERS_ID = 'cohort_early-movers';
export const TOP_RESEARCH_SIZE = 20;
export const EARLY_MOVER_MIN_LEADS = 3;
export const EARLY_MOVER_MIN_LEAD_MS = HOUR_MS;
/** The rule alone admits half of a busy world; the cohort keeps the earliest of them. */
export const EARLY_MOVERS_SIZE = 50;

interface AutoRule {
  cohortId: string;
  name: string;
  rule: string;
  select(authors: AuthorStanding[]): AuthorStanding[];
}

const byId = (a: AuthorStanding, b: AuthorStanding) => (a.authorId < b.authorId ? -1 : a.authorId > b.authorId ? 1 : 0);

const AUTO_RULES: readonly AutoRule[] = [
  {
    cohortId: TOP_RESEARCH_ID,
    name: 'Top research',
    rule: `The ${TOP_RESEARCH_SIZE} authors with the highest research score at MEDIUM or HIGH confidence; recomputed daily.`,
    select: (authors) =>
      authors
        .filter((a) => a.researchScore !== null && (a.confidence === 'MEDIUM' || a.confidence === 'HIGH'))
        .sort((a, b) => b.researchScore! - a.researchScore! || byId(a, b))
        .slice(0, TOP_RESEARCH_SIZE),
  },
  {
    cohortId: EARLY_MOVERS_ID,
    name: 'Early movers',
    rule: `The ${EARLY_MOVERS_SIZE} authors with the longest median lead time among those with at least ${EARLY_MOVER_MIN_LEADS} calls that drew a crowd and a median lead time of at least 1h; recomputed daily.`,
    select: (authors) =>
      authors
        .filter(
          (a) =>
            a.leadTimeSamples >= EARLY_MOVER_MIN_LEADS &&
            a.medianLeadTimeMs !== null &&
            a.medianLeadTimeMs >= EARLY_MOVER_MIN_LEAD_MS,
        )
        .sort((a, b) => b.medianLeadTimeMs! - a.medianLeadTimeMs! || byId(a, b))
        .slice(0, EARLY_MOVERS_SIZE),
  },
];
const MANUAL_RULE = 'Members chosen by the owner.';

interface CohortRecord {
  cohortId: string;
  kind: CohortKind;
  name: string;
  ownerKeyId: string | null;
  teamId: string | null;
  members: CohortMember[];
  version: number;
  rule: string;
  deleted: boolean;
}

/** The members' latest mentions of a token: [member key, time] pairs, in no particular order (a convergence sorts them). */
type Window = [string, number][];

interface Clock {
  /** Start of the current event-time day; null before the first event. */
  day: number | null;
  now: number;
}

/**
 * Kept in tables (runtime/state/tables.ts). A cohort and token are one key,
 * `${cohortId}\u0001${tokenId}`, of the windows and cooldowns. Every key whose window or
 * cooldown was set in an hour is listed under that hour, so that the daily sweep and a
 * cohort's change find the keys to look at without reading whole tables.
 */
export interface CohortsState {
  /** Under CLOCK_KEY. */
  clock: KeyedTable<Clock>;
  /** Cohort id → its latest version; deleted ones stay, so that their ids cannot be taken again. */
  cohorts: KeyedTable<CohortRecord>;
  /** Under LIVE_KEY: ids of the live cohorts in creation order, the order of the member indexes' lists. */
  live: KeyedTable<string[]>;
  /** Author id → ids of live cohorts with that member, in creation order. */
  byAuthor: KeyedTable<string[]>;
  /** Lower-case handle → ids of live manual cohorts with that handle as a not yet seen member, in creation order. */
  byHandle: KeyedTable<string[]>;
  /** Cohort-token key → the members' latest mentions of the token, none older than the window at the last one. */
  windows: KeyedTable<Window>;
  /** Cohort-token key → time of the last convergence event. */
  lastFired: KeyedTable<number>;
  /** Hour of event time (epoch hours) → the cohort-token keys whose window or cooldown was set in it. */
  touchedByHour: KeyedTable<string[]>;
  /** Under HOURS_KEY: the hours `touchedByHour` holds, ascending. */
  touchedHours: KeyedTable<number[]>;
}

const CLOCK_KEY = 'clock';
const LIVE_KEY = 'live';
const HOURS_KEY = 'hours';

export function createCohortsState(tables: TableSource = IN_MEMORY_TABLES): CohortsState {
  return {
    clock: tables.table('cohorts-clock'),
    cohorts: tables.table('cohorts-records'),
    live: tables.table('cohorts-live'),
    byAuthor: tables.table('cohorts-by-author'),
    byHandle: tables.table('cohorts-by-handle'),
    windows: tables.table('cohorts-windows'),
    lastFired: tables.table('cohorts-last-fired'),
    touchedByHour: tables.table('cohorts-touched-by-hour'),
    touchedHours: tables.table('cohorts-touched-hours'),
  };
}

/** Why a command was not applied; the engine should dead-letter the command with it. */
export type CommandResult = { applied: true; version: number } | { applied: false; reason: string };

const dayStart = (t: number) => t - (((t % DAY_MS) + DAY_MS) % DAY_MS);
const normaliseHandle = (handle: string) => handle.replace(/^@/, '').toLowerCase();
const memberKey = (m: CohortMember) => m.authorId ?? `@${normaliseHandle(m.handle)}`;
const cohortTokenKey = (cohortId: string, tokenId: string) => `${cohortId}\u0001${tokenId}`;

function clockOf(state: CohortsState): Clock {
  return state.clock.get(CLOCK_KEY) ?? { day: null, now: 0 };
}

function liveOrder(state: CohortsState): string[] {
  return state.live.get(LIVE_KEY) ?? [];
}

/**
 * Moves event time to `t` (call before applying each event at t, after the authors module's
 * advanceTo so that the day's recompute sees the metrics published up to t). The first
 * call creates the auto cohorts; each new day recomputes them and drops stale windows.
 */
export function advanceTo(state: CohortsState, t: number, emitter: Emitter, authors: AuthorDirectory): void {
  const before = clockOf(state);
  const day = dayStart(t);
  const clock: Clock = { day: before.day === null || day > before.day ? day : before.day, now: Math.max(before.now, t) };
  if (clock.day !== before.day || clock.now !== before.now) state.clock.set(CLOCK_KEY, clock);
  if (before.day === null) {
    recomputeAuto(state, t, emitter, authors);
    return;
  }
  if (clock.day === before.day) return;
  recomputeAuto(state, day, emitter, authors);
  sweep(state, t);
}

/** Applies a mention; emits a convergence event for each cohort that converges on the token. */
export function onMention(state: CohortsState, mention: Mention, emitter: Emitter, authors: AuthorDirectory, crowd: CrowdLookup): void {
  const at = Math.max(mention.ts, clockOf(state).now);
  const handleKey = `@${normaliseHandle(mention.authorHandle)}`;
  // Cohort id → the member key the author counts under there; by id before by handle.
  const matches = new Map<string, string>();
  for (const cohortId of state.byAuthor.get(mention.authorId) ?? []) matches.set(cohortId, mention.authorId);
  for (const cohortId of state.byHandle.get(handleKey.slice(1)) ?? []) if (!matches.has(cohortId)) matches.set(cohortId, handleKey);

  for (const [cohortId, key] of matches) {
    const cohort = state.cohorts.get(cohortId)!;
    const pair = cohortTokenKey(cohortId, mention.tokenId);
    // The member's own entry moves to `at`; entries as old as the window go.
    const earlier = (state.windows.get(pair) ?? []).filter(([k, ts]) => k !== key && ts > at - WINDOW_MS);
    const window: Window = [...earlier, [key, at]];
    state.windows.set(pair, window);
    touch(state, pair, at);

    const threshold = Math.max(MIN_CONVERGING_MEMBERS, Math.ceil(CONVERGING_SHARE * cohort.members.length));
    if (window.length < threshold) continue;
    const last = state.lastFired.get(pair);
    if (last !== undefined && at - last < CONVERGENCE_COOLDOWN_MS) continue;
    state.lastFired.set(pair, at);
    emitter.emit({
      topic: COHORT_EVENTS_TOPIC,
      key: mention.tokenId,
      value: convergence(cohort, mention.tokenId, window, at, emitter, authors, crowd),
      timestamp: at,
    });
  }
}

/** Lists the cohort-token key under the hour of `at`, once. */
function touch(state: CohortsState, pair: string, at: number): void {
  const hour = Math.floor(at / HOUR_MS);
  const pairs = state.touchedByHour.get(String(hour));
  if (pairs?.includes(pair)) return;
  state.touchedByHour.set(String(hour), pairs ? [...pairs, pair] : [pair]);
  if (pairs) return;
  const hours = state.touchedHours.get(HOURS_KEY) ?? [];
  const later = hours.findIndex((h) => h > hour);
  state.touchedHours.set(HOURS_KEY, later === -1 ? [...hours, hour] : [...hours.slice(0, later), hour, ...hours.slice(later)]);
}

/** Applies a manual cohort command; only the owner may change, share or delete a cohort. */
export function onCommand(state: CohortsState, command: CohortCommand, emitter: Emitter, authors: AuthorDirectory): CommandResult {
  const at = Math.max(command.ts, clockOf(state).now);
  const existing = state.cohorts.get(command.cohortId);
  if (AUTO_RULES.some((r) => r.cohortId === command.cohortId)) {
    return { applied: false, reason: `${command.cohortId} is an auto cohort and cannot be changed` };
  }
  if (command.action === 'create') {
    if (existing) return { applied: false, reason: `${command.cohortId} already exists` };
    if (command.name === null) return { applied: false, reason: 'create needs a name' };
    const cohort: CohortRecord = {
      cohortId: command.cohortId,
      kind: 'manual',
      name: command.name,
      ownerKeyId: command.ownerKeyId,
      teamId: command.teamId,
      members: resolveMembers(command.members, authors),
      version: 0,
      rule: MANUAL_RULE,
      deleted: false,
    };
    return publishVersion(state, undefined, cohort, at, command.commandId, emitter);
  }
  if (!existing || existing.deleted) return { applied: false, reason: `${command.cohortId} does not exist` };
  if (existing.ownerKeyId !== command.ownerKeyId) return { applied: false, reason: `${command.cohortId} belongs to another key` };
  const changed: CohortRecord =
    command.action === 'set_members'
      ? { ...existing, members: resolveMembers(command.members, authors) }
      : command.action === 'share'
        ? { ...existing, teamId: command.teamId }
        : { ...existing, deleted: true, members: [] };
  return publishVersion(state, existing, changed, at, command.commandId, emitter);
}

/** Handles (with or without @) or author ids → members, in the given order, without duplicates. */
function resolveMembers(refs: readonly string[], authors: AuthorDirectory): CohortMember[] {
  const members: CohortMember[] = [];
  const seen = new Set<string>();
  for (const ref of refs) {
    const bare = ref.replace(/^@/, '');
    const known = authors.get(bare) ?? authors.byHandle(bare);
    const member: CohortMember = known ? { authorId: known.authorId, handle: known.handle } : { authorId: null, handle: bare };
    const key = memberKey(member);
    if (seen.has(key)) continue;
    seen.add(key);
    members.push(member);
  }
  return members;
}

function recomputeAuto(state: CohortsState, at: number, emitter: Emitter, authors: AuthorDirectory): void {
  const standings = [...authors.all()];
  for (const rule of AUTO_RULES) {
    const members = rule.select([...standings]).map((a): CohortMember => ({ authorId: a.authorId, handle: a.handle }));
    const current = state.cohorts.get(rule.cohortId);
    if (current && sameMembers(current.members, members)) continue;
    const cohort: CohortRecord = current ?? {
      cohortId: rule.cohortId,
      kind: 'auto',
      name: rule.name,
      ownerKeyId: null,
      teamId: null,
      members: [],
      version: 0,
      rule: rule.rule,
      deleted: false,
    };
    publishVersion(state, current, { ...cohort, members }, at, null, emitter);
  }
}

function sameMembers(a: readonly CohortMember[], b: readonly CohortMember[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(memberKey));
  return b.every((m) => keys.has(memberKey(m)));
}

/** Keeps and emits the next version of `changed` (`previous` is the cohort before, undefined when new). */
function publishVersion(
  state: CohortsState,
  previous: CohortRecord | undefined,
  changed: CohortRecord,
  at: number,
  commandId: string | null,
  emitter: Emitter,
): CommandResult {
  const cohort: CohortRecord = { ...changed, version: changed.version + 1 };
  state.cohorts.set(cohort.cohortId, cohort);
  const value: CohortVersion = {
    cohortId: cohort.cohortId,
    kind: cohort.kind,
    name: cohort.name,
    ownerKeyId: cohort.ownerKeyId,
    teamId: cohort.teamId,
    members: cohort.members.map((m) => ({ ...m })),
    version: cohort.version,
    ts: at,
    rule: cohort.rule,
    deleted: cohort.deleted,
    commandId,
  };
  emitter.emit({ topic: COHORTS_TOPIC, key: cohort.cohortId, value, timestamp: at });
  if (!previous) state.live.set(LIVE_KEY, [...liveOrder(state), cohort.cohortId]);
  reindex(state, cohort.cohortId, previous?.members ?? [], cohort.members);
  if (cohort.deleted) state.live.set(LIVE_KEY, liveOrder(state).filter((id) => id !== cohort.cohortId));
  return { applied: true, version: cohort.version };
}

/**
 * Updates the member indexes for the members who joined or left the cohort, and forgets the
 * window entries of those who left. Each index list stays in the live cohorts' creation
 * order, as a rebuild over the cohorts in that order would give it.
 */
function reindex(state: CohortsState, cohortId: string, before: readonly CohortMember[], after: readonly CohortMember[]): void {
  const had = new Set(before.map(memberKey));
  const has = new Set(after.map(memberKey));
  const left = before.filter((m) => !has.has(memberKey(m)));
  for (const m of left) {
    const [index, key] = indexEntry(state, m);
    const rest = (index.get(key) ?? []).filter((id) => id !== cohortId);
    if (rest.length === 0) index.delete(key);
    else index.set(key, rest);
  }
  const order = liveOrder(state);
  const rank = order.indexOf(cohortId);
  for (const m of after) {
    if (had.has(memberKey(m))) continue;
    const [index, key] = indexEntry(state, m);
    const ids = index.get(key) ?? [];
    const next = ids.findIndex((id) => order.indexOf(id) > rank);
    index.set(key, next === -1 ? [...ids, cohortId] : [...ids.slice(0, next), cohortId, ...ids.slice(next)]);
  }
  if (left.length > 0) forgetInWindows(state, cohortId, has);
}

function indexEntry(state: CohortsState, m: CohortMember): [KeyedTable<string[]>, string] {
  return m.authorId === null ? [state.byHandle, normaliseHandle(m.handle)] : [state.byAuthor, m.authorId];
}

/**
 * Drops from the cohort's windows the entries of members not in `members`. Only windows set in
 * an hour that may hold an entry newer than the window before now: an older entry can never
 * count again (a mention prunes them before counting, and mentions come at or after now).
 */
function forgetInWindows(state: CohortsState, cohortId: string, members: ReadonlySet<string>): void {
  const since = clockOf(state).now - WINDOW_MS;
  const prefix = cohortTokenKey(cohortId, '');
  const done = new Set<string>();
  for (const hour of state.touchedHours.get(HOURS_KEY) ?? []) {
    if ((hour + 1) * HOUR_MS <= since) continue;
    for (const pair of state.touchedByHour.get(String(hour))!) {
      if (!pair.startsWith(prefix) || done.has(pair)) continue;
      done.add(pair);
      const window = state.windows.get(pair);
      if (window) keepEntries(state, pair, window, window.filter(([k]) => members.has(k)));
    }
  }
}

/** Sets the window to the entries kept, deleting it when none; writes nothing when all are kept. */
function keepEntries(state: CohortsState, pair: string, window: Window, kept: Window): void {
  if (kept.length === window.length) return;
  if (kept.length === 0) state.windows.delete(pair);
  else state.windows.set(pair, kept);
}

/**
 * The convergence event. Score 0–100, one decimal: 40% tightness (1 − time from the
 * earliest counted mention to now over the window), 35% the members' mean research score
 * (50 when unknown) and 25% earliness (1 − authors outside the converging members who
 * mentioned the token in the last hour, over 10).
 */
function convergence(
  cohort: CohortRecord,
  tokenId: string,
  window: Window,
  at: number,
  emitter: Emitter,
  authors: AuthorDirectory,
  crowd: CrowdLookup,
): ConvergenceEvent {
  const handles = new Map(cohort.members.map((m) => [memberKey(m), m.handle]));
  const converging = [...window].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const earliest = converging[0][1];
  const tightness = 1 - (at - earliest) / WINDOW_MS;
  const scores = converging.map(([key]) => {
    const standing = key.startsWith('@') ? authors.byHandle(key) : authors.get(key);
    return standing?.researchScore ?? 50;
  });
  const quality = scores.reduce((s, v) => s + v, 0) / scores.length / 100;
  const outsiders = Math.max(0, crowd.uniqueAuthors1h(tokenId) - converging.length);
  const earliness = 1 - Math.min(1, outsiders / CROWDED_OUTSIDERS);
  const score = Math.round(1000 * (0.4 * tightness + 0.35 * quality + 0.25 * earliness)) / 10;
  return {
    eventId: emitter.id('cev', cohort.cohortId, tokenId, at),
    cohortId: cohort.cohortId,
    cohortKind: cohort.kind,
    cohortName: cohort.name,
    cohortVersion: cohort.version,
    ownerKeyId: cohort.ownerKeyId,
    teamId: cohort.teamId,
    tokenId,
    ts: at,
    memberCount: converging.length,
    cohortSize: cohort.members.length,
    windowMinutes: CONVERGENCE_WINDOW_MINUTES,
    members: converging.map(([key]) => handles.get(key) ?? key),
    score,
  };
}

/**
 * Daily housekeeping: the hours past the cooldown go, with what was set in them: every window
 * entry and cooldown set in such an hour has expired (a key set again later is listed under a
 * later hour too, and keeps what is still live). Entries of the later hours wait for a later
 * sweep: expired ones never count (a mention prunes them first), so only the store's size
 * depends on when they go. The sweep reads the keys set in about one day.
 */
function sweep(state: CohortsState, t: number): void {
  const hours = state.touchedHours.get(HOURS_KEY) ?? [];
  const expired = hours.filter((hour) => (hour + 1) * HOUR_MS <= t - CONVERGENCE_COOLDOWN_MS);
  if (expired.length === 0) return;
  for (const hour of expired) {
    for (const pair of state.touchedByHour.get(String(hour))!) {
      const window = state.windows.get(pair);
      if (window) keepEntries(state, pair, window, window.filter(([, ts]) => ts > t - WINDOW_MS));
      const fired = state.lastFired.get(pair);
      if (fired !== undefined && t - fired >= CONVERGENCE_COOLDOWN_MS) state.lastFired.delete(pair);
    }
    state.touchedByHour.delete(String(hour));
  }
  // The hours are ascending, so the expired ones are the first.
  state.touchedHours.set(HOURS_KEY, hours.slice(expired.length));
}

/** Whether the author (by id) is a member of the live cohort now; read-only, for per-mention joins. */
export function isMember(state: CohortsState, cohortId: string, authorId: string): boolean {
  return state.byAuthor.get(authorId)?.includes(cohortId) ?? false;
}

/** Members of the live cohort now; 0 when it does not exist or was deleted. */
export function cohortSize(state: CohortsState, cohortId: string): number {
  const cohort = state.cohorts.get(cohortId);
  return cohort === undefined || cohort.deleted ? 0 : cohort.members.length;
}
