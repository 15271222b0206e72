import { apiRole } from './api.ts';
import { feedsRole } from './feeds.ts';
import { processorsRole } from './processors.ts';
import { projectionsRole } from './projections.ts';
import { researchRole } from './research.ts';
import type { Role } from './role.ts';
import { streamRole } from './stream.ts';
import { webhooksRole } from './webhooks.ts';

/**
 * Every role, in the order they stop: the inputs first (the feed, then the API's requests),
 * so each later role drains what an earlier one produced last; they start in reverse, so
 * the consumers are up before the producers.
 */
export const ROLES: readonly Role[] = [feedsRole, apiRole, streamRole, researchRole, processorsRole, webhooksRole, projectionsRole];

export const ROLE_NAMES = ROLES.map((r) => r.name);
