import { lookup } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { checkWebhookUrl, pickPublicAddress, type UrlPolicy } from './address.ts';

/**
 * One signed POST to a receiver (spec 6.4): the URL is checked again, its host resolved and
 * every answer checked, and the socket opened to the address that was checked (the name
 * stays in the Host header and TLS server name), so a DNS answer cannot change between the
 * check and the connection. Redirects are never followed; at most RESPONSE_CAP_BYTES of the
 * answer are read.
 */

/** A 2xx within this time is delivered (spec 6.4). */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const RESPONSE_CAP_BYTES = 1024;

export type Resolver = (host: string) => Promise<string[]>;

/**
 * Kept-alive connections, pooled by the address connected to (and, for HTTPS, the server
 * name and trusted certificates): a reused socket always leads to an address that was checked.
 */
const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 8 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 8 }) };

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface SenderOptions {
  policy: UrlPolicy;
  resolve?: Resolver;
  /** Certificates to trust besides the system's (a test receiver's self-signed one). */
  ca?: string;
  timeoutMs?: number;
}

export interface SendResult {
  delivered: boolean;
  status: number | null;
  latencyMs: number;
  error: string | null;
}

export async function postSigned(url: string, body: string, headers: Record<string, string>, options: SenderOptions): Promise<SendResult> {
  const started = performance.now();
  const result = (status: number | null, error: string | null): SendResult => ({
    delivered: error === null && status !== null && status >= 200 && status < 300,
    status,
    latencyMs: Math.round(performance.now() - started),
    error,
  });
  const checked = checkWebhookUrl(url, options.policy);
  if (!checked.ok) return result(null, `refused: url ${checked.reason}`);
  let addresses: string[];
  try {
    addresses = isIP(checked.host) ? [checked.host] : await (options.resolve ?? systemResolver)(checked.host);
  } catch (err) {
    return result(null, `the host did not resolve: ${(err as Error).message}`);
  }
  const picked = pickPublicAddress(addresses, options.policy);
  if (!picked.ok) return result(null, `refused: ${picked.reason}`);
  try {
    const { status, text } = await post(checked.url, picked.address, checked.host, body, headers, options);
    if (status >= 200 && status < 300) return result(status, null);
    const location = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    return result(status, `HTTP ${status}${location}${text ? `: ${text.slice(0, 200)}` : ''}`);
  } catch (err) {
    return result(null, (err as Error).message);
  }
}

function post(
  url: URL,
  address: string,
  host: string,
  body: string,
  headers: Record<string, string>,
  options: SenderOptions,
): Promise<{ status: number; text: string }> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const common = {
      method: 'POST',
      host: address,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) },
    };
    const req = url.protocol === 'https:'
      ? httpsRequest({ ...common, agent: agents.https, servername: isIP(host) ? undefined : host, ca: options.ca })
      : httpRequest({ ...common, agent: agents.http });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      // A body read to its end leaves the socket to be reused; one past the cap closes it.
      const done = (close: boolean) => {
        clearTimeout(timer);
        if (close) res.destroy();
        resolve({ status, text: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_CAP_BYTES) });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_CAP_BYTES) done(true);
      });
      res.on('end', () => done(false));
      res.on('error', () => done(true));
    });
    req.end(body);
  });
}
