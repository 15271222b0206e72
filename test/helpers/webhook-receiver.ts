import { execFileSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate for 127.0.0.1 and localhost, made at test time with openssl. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tqa-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body, as the signature covers it. */
  body: string;
}

/** How the receiver answers a request: a status (with headers), or `hang` to never answer. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/** A real HTTPS receiver on loopback that records every request and answers as told per path. */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly answers = new Map<string, Answer>();
  private readonly hanging: ServerResponse[] = [];
  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(tls: { key: string; cert: string }): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer(tls, (req, res) => receiver!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    return receiver;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, answer: Answer): void {
    this.answers.set(path, answer);
  }

  to(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = this.answers.get(path) ?? { status: 200 };
      if (answer === 'hang') {
        this.hanging.push(res);
        return;
      }
      res.writeHead(answer.status, answer.headers).end('ok');
    });
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
