import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Middleware } from 'koa';
import { ApiError } from './errors.ts';

/**
 * The console's static files (built by `npm run build` into dist/console) at /console/. They
 * are public: the console asks for a key and sends it to the API like any client. Files are
 * read per request, so a rebuild shows without a restart.
 */

export const CONSOLE_PATH = '/console';

const TYPES: Readonly<Record<string, string>> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * Scripts only from this origin, and the inline scripts of the page served, named by their
 * hashes; styles from this origin too (uPlot sets style attributes, hence 'unsafe-inline' for them).
 */
function policyFor(page: string): string {
  const inline = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, code]) => ` 'sha256-${createHash('sha256').update(code).digest('base64')}'`);
  return `default-src 'self'; script-src 'self'${inline.join('')}; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'`;
}

export function consoleFiles(dir: string): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== CONSOLE_PATH && !ctx.path.startsWith(`${CONSOLE_PATH}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on the console's files`, undefined, { Allow: 'GET, HEAD' });
    if (ctx.path === CONSOLE_PATH) return ctx.redirect(`${CONSOLE_PATH}/`);
    const name = ctx.path.slice(CONSOLE_PATH.length + 1) || 'index.html';
    const type = TYPES[extname(name)];
    // One level of plain names: nothing outside the folder can be named.
    if (!/^[A-Za-z0-9_-]+\.[a-z]+$/.test(name) || type === undefined) throw new ApiError('NOT_FOUND', `no console file ${name}`);
    let body: Buffer;
    try {
      body = await readFile(join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new ApiError('NOT_FOUND', name === 'index.html' ? 'the console is not built: run npm run build' : `no console file ${name}`);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Content-Security-Policy', policyFor(type === TYPES['.html'] ? body.toString('utf8') : ''));
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = body;
  };
}
