import { describe, expect, it } from 'vitest';
import { generatedTypes, storedTypes } from '../../client/types.ts';

describe('the typed client', () => {
  it('has types generated from the /openapi.json the service serves now (npm run client:types writes them)', async () => {
    expect(await storedTypes(), 'client/openapi-types.ts is stale: run npm run client:types').toBe(await generatedTypes());
  });
});
