import type { Logger } from '../../infra/logging.ts';
import type { EventLog } from '../../infra/log/port.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { UrlPolicy } from '../../webhooks/address.ts';
import type { SecretBox } from '../../webhooks/secret-box.ts';
import type { Resolver } from '../../webhooks/sender.ts';
import type { StreamDirectory } from '../stream-presence.ts';
import type { Processing } from '../schemas/meta.ts';
import type { TokenDirectory } from '../services/token-directory.ts';

/** What the webhook endpoints need to write control events and send test deliveries. */
export interface WebhookDeps {
  codec: Codec;
  secrets: SecretBox;
  policy: UrlPolicy;
  /** DNS; the system resolver unless a test stands in. */
  resolve?: Resolver;
  /** Extra certificates to trust (a test receiver's). */
  ca?: string;
}

/** What route groups read: the projections' store, the event log (health), a clock, token metadata. */
export interface RouteDeps {
  store: AnalyticalStore<ProjectionTables>;
  log: EventLog;
  logger: Logger;
  /** Epoch ms; injected by tests to move time. */
  now: () => number;
  startedAt: number;
  /** Token metadata for responses that embed the token object, shared by the route groups. */
  tokens: TokenDirectory;
  /** Absent in processes that serve no webhook writes: those endpoints then answer 503. */
  webhooks?: WebhookDeps;
  /** Encodes control events (backtest requests). */
  codec: Codec;
  /** Running stream instances; absent: /v1/stream/info answers unavailable. */
  streams?: StreamDirectory;
  /** The last measured lag of the processors and projections; absent or null: /v1/health shows none. */
  processing?: () => Processing | null;
}
