import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../infra/config.ts';

describe('configuration', () => {
  it('puts processor checkpoints in the store by default only with ClickHouse, and refuses the store with DuckDB', () => {
    expect(loadConfig({}).TQA_CHECKPOINTS).toBeUndefined();
    expect(loadConfig({ TQA_STORE: 'clickhouse', TQA_CHECKPOINTS: 'store' }).TQA_CHECKPOINTS).toBe('store');
    expect(loadConfig({ TQA_CHECKPOINTS: 'local' }).TQA_CHECKPOINTS).toBe('local');
    let refused: unknown;
    try {
      loadConfig({ TQA_CHECKPOINTS: 'store' });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).issues).toEqual([
      { variable: 'TQA_CHECKPOINTS', message: 'store needs TQA_STORE=clickhouse: the embedded store is open in one process only' },
    ]);
  });
});
