import { defineConfig } from 'vitest/config';

/**
 * Two tiers. `fast`: unit tests and everything on the embedded adapters (npm test).
 * `peers`: files named *.peer.test.ts, which start real peers (the Kafka mock broker from
 * kcat, a ClickHouse server) through infra/peers; npm run test:all runs both tiers.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts', 'processors/**/*.test.ts', 'research/**/*.test.ts'],
          exclude: ['**/*.peer.test.ts', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'peers',
          include: ['test/**/*.peer.test.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
