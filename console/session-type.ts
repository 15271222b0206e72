import type { KeyInfo } from './api.ts';

/** What every page gets: the key and what GET /v1/key said of it. */
export interface Session {
  key: string;
  info: KeyInfo;
}
