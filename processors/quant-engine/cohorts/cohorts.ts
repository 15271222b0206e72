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

/**
 * Cohorts: groups of authors with versioned membership, and convergence when enough
 * members mention the same token within an hour.
 *
 * Auto cohorts are recomputed at every event-time day boundary (UTC) from the authors'
 * latest published metrics; a new version is emitted only when membership changed.
 * Manual cohorts change only through cohort commands, applied in log order. Convergence
 * fires when at least max(3, ⌈10% of the cohort⌉) distinct members mentioned a token within
 * the last 60 minutes, and not again for the same cohort and token within 6 hours.
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

export interface CohortsState {
  /** Start of the current event-time day; null before the first event. */
  day: number | null;
  now: number;
  cohorts: Map<string, CohortRecord>;
  /** Author id → ids of live cohorts with that member. */
  byAuthor: Map<string, string[]>;
  /** Lower-case handle → ids of live manual cohorts with that handle as a not yet seen member. */
  byHandle: Map<string, string[]>;
  /** Cohort id → token id → member key → latest mention time within the window. */
  windows: Map<string, Map<string, Map<string, number>>>;
  /** Cohort id → token id → time of the last convergence event. */
  lastFired: Map<string, Map<string, number>>;
}

export function createCohortsState(): CohortsState {
  return { day: null, now: 0, cohorts: new Map(), byAuthor: new Map(), byHandle: new Map(), windows: new Map(), lastFired: new Map() };
}

/** Why a command was not applied; the engine should dead-letter the command with it. */
export type CommandResult = { applied: true; version: number } | { applied: false; reason: string };

const dayStart = (t: number) => t - (((t % DAY_MS) + DAY_MS) % DAY_MS);
const normaliseHandle = (handle: string) => handle.replace(/^@/, '').toLowerCase();
const memberKey = (m: CohortMember) => m.authorId ?? `@${normaliseHandle(m.handle)}`;

/**
 * Moves event time to `t` (call before applying each event at t, after the authors module's
 * advanceTo so that the day's recompute sees the metrics published up to t). The first
 * call creates the auto cohorts; each new day recomputes them and drops stale windows.
 */
export function advanceTo(state: CohortsState, t: number, emitter: Emitter, authors: AuthorDirectory): void {
  if (t > state.now) state.now = t;
  const day = dayStart(t);
  if (state.day === null) {
    state.day = day;
    recomputeAuto(state, t, emitter, authors);
    return;
  }
  if (day <= state.day) return;
  state.day = day;
  recomputeAuto(state, day, emitter, authors);
  sweep(state, t);
}

/** Applies a mention; emits a convergence event for each cohort that converges on the token. */
export function onMention(state: CohortsState, mention: Mention, emitter: Emitter, authors: AuthorDirectory, crowd: CrowdLookup): void {
  const at = Math.max(mention.ts, state.now);
  const handleKey = `@${normaliseHandle(mention.authorHandle)}`;
  // Cohort id → the member key the author counts under there; by id before by handle.
  const matches = new Map<string, string>();
  for (const cohortId of state.byAuthor.get(mention.authorId) ?? []) matches.set(cohortId, mention.authorId);
  for (const cohortId of state.byHandle.get(handleKey.slice(1)) ?? []) if (!matches.has(cohortId)) matches.set(cohortId, handleKey);

  for (const [cohortId, key] of matches) {
    const cohort = state.cohorts.get(cohortId)!;
    const tokens = mapIn(state.windows, cohortId);
    const window = tokens.get(mention.tokenId) ?? new Map<string, number>();
    tokens.set(mention.tokenId, window);
    window.set(key, at);
    for (const [k, ts] of window) if (ts <= at - WINDOW_MS) window.delete(k);

    const threshold = Math.max(MIN_CONVERGING_MEMBERS, Math.ceil(CONVERGING_SHARE * cohort.members.length));
    if (window.size < threshold) continue;
    const fired = mapIn(state.lastFired, cohortId);
    const last = fired.get(mention.tokenId);
    if (last !== undefined && at - last < CONVERGENCE_COOLDOWN_MS) continue;
    fired.set(mention.tokenId, at);
    emitter.emit({
      topic: COHORT_EVENTS_TOPIC,
      key: mention.tokenId,
      value: convergence(cohort, mention.tokenId, window, at, emitter, authors, crowd),
      timestamp: at,
    });
  }
}

/** Applies a manual cohort command; only the owner may change, share or delete a cohort. */
export function onCommand(state: CohortsState, command: CohortCommand, emitter: Emitter, authors: AuthorDirectory): CommandResult {
  const at = Math.max(command.ts, state.now);
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
    state.cohorts.set(cohort.cohortId, cohort);
    return publishVersion(state, cohort, at, command.commandId, emitter);
  }
  if (!existing || existing.deleted) return { applied: false, reason: `${command.cohortId} does not exist` };
  if (existing.ownerKeyId !== command.ownerKeyId) return { applied: false, reason: `${command.cohortId} belongs to another key` };
  switch (command.action) {
    case 'set_members':
      existing.members = resolveMembers(command.members, authors);
      break;
    case 'share':
      existing.teamId = command.teamId;
      break;
    case 'delete':
      existing.deleted = true;
      existing.members = [];
      break;
  }
  return publishVersion(state, existing, at, command.commandId, emitter);
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
    cohort.members = members;
    state.cohorts.set(rule.cohortId, cohort);
    publishVersion(state, cohort, at, null, emitter);
  }
}

function sameMembers(a: readonly CohortMember[], b: readonly CohortMember[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(memberKey));
  return b.every((m) => keys.has(memberKey(m)));
}

function publishVersion(
  state: CohortsState,
  cohort: CohortRecord,
  at: number,
  commandId: string | null,
  emitter: Emitter,
): CommandResult {
  cohort.version++;
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
  reindex(state, cohort);
  return { applied: true, version: cohort.version };
}

/** Rebuilds the member indexes and forgets window entries of members who left. */
function reindex(state: CohortsState, changed: CohortRecord): void {
  state.byAuthor.clear();
  state.byHandle.clear();
  for (const cohort of state.cohorts.values()) {
    if (cohort.deleted) continue;
    for (const m of cohort.members) {
      const index = m.authorId === null ? state.byHandle : state.byAuthor;
      const key = m.authorId ?? normaliseHandle(m.handle);
      const list = index.get(key);
      if (list) list.push(cohort.cohortId);
      else index.set(key, [cohort.cohortId]);
    }
  }
  const tokens = state.windows.get(changed.cohortId);
  if (!tokens) return;
  if (changed.deleted) {
    state.windows.delete(changed.cohortId);
    return;
  }
  const keys = new Set(changed.members.map(memberKey));
  for (const [tokenId, window] of tokens) {
    for (const k of window.keys()) if (!keys.has(k)) window.delete(k);
    if (window.size === 0) tokens.delete(tokenId);
  }
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
  window: Map<string, number>,
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

/** Daily housekeeping: drops window entries older than the window and cooldowns that ended. */
function sweep(state: CohortsState, t: number): void {
  for (const [cohortId, tokens] of state.windows) {
    for (const [tokenId, window] of tokens) {
      for (const [k, ts] of window) if (ts <= t - WINDOW_MS) window.delete(k);
      if (window.size === 0) tokens.delete(tokenId);
    }
    if (tokens.size === 0) state.windows.delete(cohortId);
  }
  for (const [cohortId, tokens] of state.lastFired) {
    for (const [tokenId, ts] of tokens) if (t - ts >= CONVERGENCE_COOLDOWN_MS) tokens.delete(tokenId);
    if (tokens.size === 0) state.lastFired.delete(cohortId);
  }
}

function mapIn<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let inner = outer.get(key);
  if (!inner) {
    inner = new Map();
    outer.set(key, inner);
  }
  return inner;
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
