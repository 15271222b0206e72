import { embeddedStore } from '../../research/history/testing/given.ts';
import { describeResearchContract } from './research.contract.ts';

describeResearchContract('duckdb', async () => {
  const store = await embeddedStore([]);
  return { store, cleanup: () => store.close() };
});
