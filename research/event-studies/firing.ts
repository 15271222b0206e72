import type { LoadedRule } from '../../processors/quant-engine/signals/rule-language.ts';

/**
 * Replays a signal rule's firings from the snapshots on which all its conditions held, with
 * the signal engine's semantics (processors/quant-engine/signals/signals.ts): a rule fires on
 * a token with no active signal of it once its cooldown has passed; an active signal ends at
 * the earlier of lapse after the last snapshot that held and its maximum age, and the
 * cooldown runs from that end. Only held snapshots move this state, so the replay needs no
 * other rows. Plain data, so a refresh can keep it and continue.
 */

export interface TokenFiring {
  active: boolean;
  firedAt: number;
  lastHeldAt: number;
  cooldownUntil: number;
}

export type FiringState = Record<string, TokenFiring>;

/** Whether the rule fires on `tokenId` at `ts`, given that all its conditions hold there; updates the state. */
export function firesAt(state: FiringState, rule: LoadedRule, tokenId: string, ts: number): boolean {
  let token = state[tokenId];
  if (token?.active) {
    const end = Math.min(token.lastHeldAt + rule.lapseMs, token.firedAt + rule.maxAgeMs);
    if (end >= ts) {
      // Still active at ts (ends are swept only strictly before a snapshot): this one holds too.
      token.lastHeldAt = ts;
      const renewed = Math.min(ts + rule.lapseMs, token.firedAt + rule.maxAgeMs);
      if (renewed > ts) return false;
      token.active = false;
      token.cooldownUntil = renewed + rule.cooldownMs;
    } else {
      token.active = false;
      token.cooldownUntil = end + rule.cooldownMs;
    }
  }
  if (token && ts < token.cooldownUntil) return false;
  token = { active: true, firedAt: ts, lastHeldAt: ts, cooldownUntil: token?.cooldownUntil ?? -Number.MAX_VALUE };
  state[tokenId] = token;
  return true;
}
