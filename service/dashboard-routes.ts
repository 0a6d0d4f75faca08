/**
 * The web dashboard (`web/`): `GET /` is its page, `GET /web/<file>` its scripts, styles and icon.
 * Plain static files, served without an API key: the page asks for a key itself when the API
 * answers 401, and holds no data of its own.
 *
 * Only files found under the web root when the routes are registered are served — a fixed table
 * looked up by name — so no request path (`..`, encoded slashes, symlinks) can reach anything else.
 * Each answer has its content type, `nosniff`, an ETag and `cache-control: no-cache`: the names are
 * not content-hashed, so a browser must revalidate rather than run yesterday's script against
 * today's API. The page has no inline script or style, which lets it carry a strict
 * Content-Security-Policy.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendApiError } from './api-access.js';

export interface DashboardRoutesOptions {
  /** Folder holding `index.html` and its assets. Default: the repository's `web/`, from source or `dist/`. */
  webRoot?: string;
}

/** The Content-Security-Policy of the page: nothing inline, nothing from elsewhere, never framed. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** A deep tree under the web root is a mistake (a mounted home folder), not a dashboard. */
const MAX_DEPTH = 4;
const MAX_FILES = 500;

interface CachedBody {
  size: number;
  mtimeMs: number;
  body: Buffer;
  etag: string;
}

/**
 * `web/` beside the module's folder when run from source (`service/` → `web/`), two levels up
 * when compiled (`dist/service/` → `web/`).
 */
export function defaultWebRoot(moduleUrl: string = import.meta.url): string | undefined {
  const here = path.dirname(fileURLToPath(moduleUrl));
  return [path.resolve(here, '..', 'web'), path.resolve(here, '..', '..', 'web')].find((candidate) =>
    existsSync(path.join(candidate, 'index.html')),
  );
}

/** Relative names (with `/`) of the servable files under `root`: known types, no dot-files, no links. */
function listFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string, prefix: string, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || files.size >= MAX_FILES) continue;
      const absolute = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(absolute, `${prefix}${entry.name}/`, depth + 1);
      else if (entry.isFile() && CONTENT_TYPES[path.extname(entry.name).toLowerCase()] !== undefined) {
        files.set(`${prefix}${entry.name}`, absolute);
      }
    }
  };
  if (existsSync(root) && statSync(root).isDirectory()) walk(root, '', 0);
  return files;
}

export function registerDashboardRoutes(app: FastifyInstance, options: DashboardRoutesOptions = {}): void {
  const root = options.webRoot ?? defaultWebRoot();
  const files = root === undefined ? new Map<string, string>() : listFiles(root);
  const cache = new Map<string, CachedBody>();

  /** Re-read when the file changed on disk, so an edited page shows without a restart. */
  const load = async (absolute: string): Promise<CachedBody | undefined> => {
    let info;
    try {
      info = await stat(absolute);
    } catch {
      return undefined;
    }
    const cached = cache.get(absolute);
    if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached;
    const body = await readFile(absolute);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const fresh = { size: info.size, mtimeMs: info.mtimeMs, body, etag };
    cache.set(absolute, fresh);
    return fresh;
  };

  const serve = async (request: FastifyRequest, reply: FastifyReply, name: string): Promise<FastifyReply> => {
    const absolute = files.get(name);
    const file = absolute === undefined ? undefined : await load(absolute);
    if (file === undefined) return sendApiError(reply, 404, 'not_found', `no dashboard file ${name}`);
    const type = CONTENT_TYPES[path.extname(name).toLowerCase()]!;
    void reply
      .header('content-type', type)
      .header('etag', file.etag)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff');
    if (type.startsWith('text/html')) {
      void reply
        .header('content-security-policy', DASHBOARD_CSP)
        .header('referrer-policy', 'no-referrer')
        .header('x-frame-options', 'DENY');
    }
    const conditional = request.headers['if-none-match'];
    if (conditional !== undefined && conditional.split(',').some((tag) => tag.trim() === file.etag)) {
      return reply.code(304).send();
    }
    return reply.send(file.body);
  };

  app.get('/', async (request, reply) => {
    if (!files.has('index.html')) {
      return sendApiError(reply, 404, 'not_found', 'the dashboard files are not installed with this service');
    }
    return serve(request, reply, 'index.html');
  });

  app.get('/web/*', async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    // The page has one address: its relative links resolve from `/`, not from `/web/`.
    if (name === 'index.html') return sendApiError(reply, 404, 'not_found', 'the dashboard is at /');
    return serve(request, reply, name);
  });
}
