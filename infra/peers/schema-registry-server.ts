import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertBackwardCompatible } from '../registry/local.ts';

export interface SchemaRegistryServer {
  url: string;
  /** Every request served, as "METHOD /path", oldest first. */
  requests: string[];
  close(): Promise<void>;
}

interface Version {
  subject: string;
  version: number;
  id: number;
  schema: string;
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An in-memory server of the Confluent Schema Registry REST API on a loopback port (`listenPort`,
 * 0 for a free one), for development and tests where no registry runs: the calls
 * @kafkajs/confluent-schema-registry makes (subject config, register, lookup, versions and
 * schemas by id). Ids are global and shared by identical schemas; a new version must be
 * backward compatible with its subject's latest (409 otherwise), as under BACKWARD. It keeps
 * nothing across restarts, like the mock broker it goes with.
 */
export async function startSchemaRegistryServer(listenPort = 0): Promise<SchemaRegistryServer> {
  const versions: Version[] = [];
  const configs = new Map<string, string>();
  const requests: string[] = [];

  const latest = (subject: string): Version | undefined => versions.filter((v) => v.subject === subject).at(-1);

  const register = (subject: string, body: { schema?: unknown }): { id: number } => {
    const schema = canonical(body.schema);
    const existing = versions.find((v) => v.subject === subject && v.schema === schema);
    if (existing) return { id: existing.id };
    const previous = latest(subject);
    if (previous) {
      try {
        assertBackwardCompatible(subject, schema, previous.schema);
      } catch (err) {
        throw new HttpError(409, 409, `Schema being registered is incompatible with an earlier schema: ${(err as Error).message}`);
      }
    }
    const id = versions.find((v) => v.schema === schema)?.id ?? Math.max(0, ...versions.map((v) => v.id)) + 1;
    versions.push({ subject, version: (previous?.version ?? 0) + 1, id, schema });
    return { id };
  };

  const routes: { method: string; path: RegExp; handle(match: string[], body: Record<string, unknown>): unknown }[] = [
    {
      method: 'GET',
      path: /^\/config\/([^/]+)$/,
      handle: ([subject]) => {
        const level = configs.get(subject);
        if (!level) throw new HttpError(404, 40401, `Subject '${subject}' not found.`);
        return { compatibilityLevel: level };
      },
    },
    {
      method: 'PUT',
      path: /^\/config\/([^/]+)$/,
      handle: ([subject], body) => {
        configs.set(subject, String(body.compatibility));
        return { compatibility: body.compatibility };
      },
    },
    { method: 'POST', path: /^\/subjects\/([^/]+)\/versions$/, handle: ([subject], body) => register(subject, body) },
    {
      method: 'POST',
      path: /^\/subjects\/([^/]+)$/,
      handle: ([subject], body) => {
        if (!latest(subject)) throw new HttpError(404, 40401, `Subject '${subject}' not found.`);
        const schema = canonical(body.schema);
        const found = versions.find((v) => v.subject === subject && v.schema === schema);
        if (!found) throw new HttpError(404, 40403, 'Schema not found');
        return found;
      },
    },
    {
      method: 'GET',
      path: /^\/subjects\/([^/]+)\/versions\/(latest|\d+)$/,
      handle: ([subject, version]) => {
        const found =
          version === 'latest' ? latest(subject) : versions.find((v) => v.subject === subject && v.version === Number(version));
        if (!found) throw new HttpError(404, 40402, `Version ${version} of '${subject}' not found.`);
        return found;
      },
    },
    {
      method: 'GET',
      path: /^\/schemas\/ids\/(\d+)$/,
      handle: ([id]) => {
        const found = versions.find((v) => v.id === Number(id));
        if (!found) throw new HttpError(404, 40403, 'Schema not found');
        return { schema: found.schema };
      },
    },
  ];

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://registry').pathname;
    requests.push(`${req.method} ${path}`);
    let status = 200;
    let answer: unknown;
    try {
      const route = routes.find((r) => r.method === req.method && r.path.test(path));
      if (!route) throw new HttpError(404, 404, `no route for ${req.method} ${path}`);
      const match = (route.path.exec(path) ?? []).slice(1).map(decodeURIComponent);
      answer = route.handle(match, await readBody(req));
    } catch (err) {
      const http = err instanceof HttpError ? err : new HttpError(500, 50001, (err as Error).message);
      status = http.status;
      answer = { error_code: http.code, message: http.message };
    }
    res.writeHead(status, { 'content-type': CONTENT_TYPE }).end(JSON.stringify(answer));
  };

  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function canonical(schema: unknown): string {
  if (typeof schema !== 'string') throw new HttpError(422, 42201, 'Either the input schema or one its references is invalid');
  try {
    return JSON.stringify(JSON.parse(schema));
  } catch {
    throw new HttpError(422, 42201, 'Input schema is an invalid Avro schema');
  }
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new HttpError(422, 42201, 'request body is not JSON');
  }
}
