/**
 * Scopes a key may hold, and the scope each endpoint needs, as data: the auth middleware
 * checks it and the OpenAPI document publishes it. Public endpoints (routes declared
 * `public`) need no key. Reads and writes of a resource are separate scopes so a key can be handed to a
 * dashboard without the right to change anything.
 */
export const SCOPES = {
  'quant:read': 'Tokens, scores, analogs, the scanner, authors, cohorts and narratives.',
  'signals:read': 'The signal feed and signal detail.',
  'research:read': 'Backtest runs and event studies.',
  'research:write': 'Queue and cancel backtests.',
  'webhooks:read': 'List webhooks.',
  'webhooks:write': 'Create, delete and test webhooks.',
  'stream:read': 'The WebSocket stream; the only scope a key used in a browser (?key=) should hold.',
  'keys:read': 'Describe the calling key (GET /v1/key).',
} as const;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

export interface EndpointScope {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path template as in the spec and the router, `:name` for a parameter. */
  path: string;
  scope: Scope;
}

/** Which scope each keyed endpoint needs (spec §4). */
export const ENDPOINT_SCOPES: readonly EndpointScope[] = [
  { method: 'GET', path: '/v1/quant/token/:token', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/token/:token/analogs', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/token/:token/history', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/tokens', scope: 'quant:read' },
  { method: 'POST', path: '/v1/quant/scan', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/users/:handle', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/cohorts', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/cohorts/:id', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/narratives', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/narratives/rotation', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/narratives/heatmap', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/narratives/:slug', scope: 'quant:read' },
  { method: 'GET', path: '/v1/quant/signals', scope: 'signals:read' },
  { method: 'GET', path: '/v1/quant/signals/:id', scope: 'signals:read' },
  { method: 'POST', path: '/v1/quant/backtests', scope: 'research:write' },
  { method: 'GET', path: '/v1/quant/backtests', scope: 'research:read' },
  { method: 'POST', path: '/v1/quant/backtests/:id/cancel', scope: 'research:write' },
  { method: 'GET', path: '/v1/quant/backtests/:id', scope: 'research:read' },
  { method: 'GET', path: '/v1/quant/event-studies', scope: 'research:read' },
  { method: 'GET', path: '/v1/quant/event-studies/:slug', scope: 'research:read' },
  { method: 'GET', path: '/v1/webhooks', scope: 'webhooks:read' },
  { method: 'POST', path: '/v1/webhooks', scope: 'webhooks:write' },
  { method: 'GET', path: '/v1/webhooks/:id', scope: 'webhooks:read' },
  { method: 'DELETE', path: '/v1/webhooks/:id', scope: 'webhooks:write' },
  { method: 'POST', path: '/v1/webhooks/:id/test', scope: 'webhooks:write' },
  { method: 'POST', path: '/v1/webhooks/:id/enable', scope: 'webhooks:write' },
  { method: 'POST', path: '/v1/webhooks/:id/rotate-secret', scope: 'webhooks:write' },
  { method: 'POST', path: '/v1/webhooks/:id/resend', scope: 'webhooks:write' },
  { method: 'GET', path: '/v1/webhooks/:id/deliveries', scope: 'webhooks:read' },
  { method: 'GET', path: '/v1/stream', scope: 'stream:read' },
  { method: 'GET', path: '/v1/key', scope: 'keys:read' },
];

/** The scope an endpoint needs, by its method and path template; null when it is not listed. */
export function scopeOf(method: string, path: string): Scope | null {
  return ENDPOINT_SCOPES.find((e) => e.method === method && e.path === path)?.scope ?? null;
}
