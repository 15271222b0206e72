import { deadLettersProjection } from './dead-letters.ts';
import { mentionsProjection } from './mentions.ts';
import type { AnyProjection } from './runtime/projection.ts';
import { tokensProjection } from './tokens.ts';

/** Every projection the service runs; each gets its own runner and consumer group. */
export const PROJECTIONS: readonly AnyProjection[] = [tokensProjection, mentionsProjection, deadLettersProjection];
