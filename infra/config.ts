import { z } from 'zod';

const storeSize = z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i, 'must be a size such as 512MB or 2GiB');

/** Every setting the service reads, validated once at start-up. */
const ConfigSchema = z.object({
  TQA_DATA_DIR: z.string().min(1).default('./data'),
  TQA_LOG: z.enum(['embedded', 'kafka']).default('embedded'),
  TQA_STORE: z.enum(['duckdb', 'clickhouse']).default('duckdb'),
  /** The embedded store's memory (DuckDB's memory_limit: its own default is 80% of the machine's); beyond it DuckDB spills to disk. */
  TQA_DUCKDB_MEMORY_LIMIT: storeSize.default('512MiB'),
  /**
   * How much write-ahead log the embedded store gathers before it checkpoints it into the file
   * (DuckDB's checkpoint_threshold, its own default 16MiB): each checkpoint rewrites every
   * primary-key index whole, so small ones make a catch-up's writes cost more as the tables grow.
   */
  TQA_DUCKDB_CHECKPOINT_THRESHOLD: storeSize.default('1GiB'),
  /** When an embedded append is acknowledged: after fdatasync (`always`) or without it (`never`). */
  TQA_LOG_FSYNC: z.enum(['always', 'never']).default('always'),
  /** Size at which an embedded segment file is closed and a new one started. */
  TQA_LOG_SEGMENT_BYTES: z.coerce.number().int().min(1024).default(64 * 1024 * 1024),
  /** How long `tqa start` lets its roles stop after a signal before it exits 1 without them (a stop that hangs, as on a broker that never answers). */
  TQA_STOP_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  /** How often a processor task saves its state (and commits what it covers) while it runs: work redone after a crash. */
  TQA_CHECKPOINT_INTERVAL_MS: z.coerce.number().int().min(0).default(5000),
  /**
   * Where processor tasks keep their checkpoints: `local`, files in the data dir; `store`, the
   * analytical store (with the files as a cache), where a processors process on another machine
   * can restore them. Unset: `store` with ClickHouse, `local` with DuckDB (which only this process opens).
   */
  TQA_CHECKPOINTS: z.enum(['local', 'store']).optional(),
  /** The share of a processor task's time its checkpoints may take: a state slow to save is saved less often. */
  TQA_CHECKPOINT_SAVE_SHARE: z.coerce.number().gt(0).max(1).default(0.05),
  /**
   * Threads each processor with a task per partition (the outcomes stage) runs on in `tqa start`,
   * each taking a share of its partitions (embedded log) or joining its group as a member
   * (Kafka); at most its partition count. Unset: one per core.
   */
  TQA_STAGE_THREADS: z.coerce.number().int().min(1).optional(),
  /** Nice value of the threads that work through backlogs (feeds, processors, research runs) in `tqa start`: the API's thread gets the CPU first. */
  TQA_BACKGROUND_NICE: z.coerce.number().int().min(0).max(19).default(10),
  KAFKA_BROKERS: z.string().default('localhost:9092'),
  KAFKA_CLIENT_ID: z.string().default('tqa'),
  /** Idempotent producer: on for real Kafka; off against brokers without InitProducerId (the test mock). */
  KAFKA_IDEMPOTENT: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** How long the group waits for a silent member (one killed) before moving its partitions. */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(3000).default(30_000),
  SCHEMA_REGISTRY_URL: z.string().url().default('http://localhost:8081'),
  CLICKHOUSE_URL: z.string().url().default('http://localhost:8123'),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('tqa'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  STREAM_PORT: z.coerce.number().int().min(0).max(65535).default(8082),
  /** Where `tqa start` answers GET /healthz for an orchestrator's probe (every role, also those without HTTP). Unset: no health port. */
  TQA_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where clients reach the stream (what GET /v1/stream/info announces, plus /v1/stream). Unset: ws://localhost:<STREAM_PORT>. */
  TQA_STREAM_PUBLIC_URL: z.string().regex(/^wss?:\/\/[^/?#]+(\/[^?#]*)?$/, 'must be a ws:// or wss:// URL without query').optional(),
  /** `auto`: on a data dir without a simulation, seed a history, then run it live; `off`: no simulated feed. */
  TQA_SIM: z.enum(['auto', 'off']).default('auto'),
  TQA_SIM_SEED: z.coerce.number().int().min(0).default(1),
  TQA_SIM_DAYS: z.coerce.number().min(0.01).max(60).default(7),
  /** Simulated ms per wall-clock ms once live. */
  TQA_SIM_SPEED: z.coerce.number().positive().default(1),
  /** Development only: webhooks may use plain HTTP, private and loopback receivers and any port. */
  TQA_WEBHOOKS_ALLOW_PRIVATE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** The service key that seals webhook signing secrets: 32 bytes, base64. Unset: generated once into the data dir. */
  TQA_WEBHOOKS_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  /** The API key `tqa backtest` uses when it goes through the running service's API. Unset: the data dir's demo key. */
  TQA_API_KEY: z.string().regex(/^svc_live_[A-Za-z0-9_-]+$/, 'must be an API key, svc_live_…').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof ConfigSchema>;

/** The names of every setting in the schema, for the docs' configuration table and its test. */
export const CONFIG_SETTINGS: readonly string[] = Object.keys(ConfigSchema.shape);

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(
      'invalid configuration: ' + issues.map((i) => `${i.variable}: ${i.message}`).join('; '),
    );
  }
}

/** The settings together: what one variable allows may depend on another. */
const ConsistentConfig = ConfigSchema.refine((c) => !(c.TQA_CHECKPOINTS === 'store' && c.TQA_STORE === 'duckdb'), {
  path: ['TQA_CHECKPOINTS'],
  message: 'store needs TQA_STORE=clickhouse: the embedded store is open in one process only',
});

/** Reads the configuration from an environment; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConsistentConfig.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? '?'),
        message: issue.message,
      })),
    );
  }
  return parsed.data;
}
