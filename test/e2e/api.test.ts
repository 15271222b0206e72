import { afterAll, beforeAll } from 'vitest';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { asOfCases } from './api/as-of.cases.ts';
import { conventionCases } from './api/conventions.cases.ts';
import { docsExampleCases } from './api/docs-examples.cases.ts';
import { fuzzCases } from './api/fuzz.cases.ts';
import { historyCases } from './api/history.cases.ts';
import { metaCases } from './api/meta.cases.ts';
import { signalCases } from './api/signals.cases.ts';
import { socialCases } from './api/social.cases.ts';
import { tokenCases } from './api/tokens.cases.ts';

/**
 * The public REST API end to end: one simulated world served over a real socket, every
 * response checked against the served /openapi.json (test/helpers/api-world.ts). The cases
 * live in test/e2e/api/, one file per part of the interface, sharing the world.
 */

let world: ApiWorld;
const current = () => world;

beforeAll(async () => {
  world = await startApiWorld();
}, 600_000);

afterAll(async () => {
  await world?.stop();
});

tokenCases(current);
historyCases(current);
signalCases(current);
socialCases(current);
metaCases(current);
asOfCases(current);
conventionCases(current);
docsExampleCases(current);
// Last: it spends requests of the per-IP limit that public endpoints share.
fuzzCases(current);
