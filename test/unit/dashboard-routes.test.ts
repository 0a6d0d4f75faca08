import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, defaultWebRoot, registerDashboardRoutes } from '../../service/dashboard-routes.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * A web root inside a scratch folder that also holds a secret beside it (what a traversal would
 * try to reach), a dot-file, a file of an unserved type and a symlink pointing outside.
 */
let scratch: string;
let root: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'neon-dashboard-'));
  root = path.join(scratch, 'web');
  mkdirSync(path.join(root, 'icons'), { recursive: true });
  writeFileSync(path.join(scratch, 'secret.txt'), 'not for the web');
  writeFileSync(path.join(scratch, 'secret.js'), 'export const secret = 1;');
  writeFileSync(
    path.join(root, 'index.html'),
    '<!doctype html><title>t</title><script type="module" src="web/app.js">',
  );
  writeFileSync(path.join(root, 'app.js'), 'export {};\n');
  writeFileSync(path.join(root, 'styles.css'), 'body { margin: 0; }\n');
  writeFileSync(path.join(root, 'icons', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(root, '.env'), 'NEON_API_KEYS=secret');
  writeFileSync(path.join(root, 'notes.md'), '# notes');
  symlinkSync(path.join(scratch, 'secret.js'), path.join(root, 'linked.js'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function serve(webRoot: string): FastifyInstance {
  app = Fastify();
  registerDashboardRoutes(app, { webRoot });
  return app;
}

describe('dashboard routes', () => {
  it('serves the page at / with a strict Content-Security-Policy and no caching without revalidation', async () => {
    const res = await serve(root).inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<title>t</title>');
    const csp = String(res.headers['content-security-policy']);
    for (const directive of [
      "default-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "style-src 'self'",
      "script-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
  });

  it('serves scripts, styles and images under /web/ with their content types', async () => {
    const server = serve(root);
    const cases = [
      ['/web/app.js', 'text/javascript; charset=utf-8', 'export {};'],
      ['/web/styles.css', 'text/css; charset=utf-8', 'margin: 0'],
      ['/web/icons/logo.svg', 'image/svg+xml', '<svg'],
    ] as const;
    for (const [url, type, text] of cases) {
      const res = await server.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(type);
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.body, url).toContain(text);
      // The page's policy is for documents; a script needs none.
      expect(res.headers['content-security-policy'], url).toBeUndefined();
    }
  });

  it('answers 304 to a request that already has the current version, and 200 once the file changed', async () => {
    const server = serve(root);
    const first = await server.inject({ method: 'GET', url: '/web/styles.css' });
    const etag = String(first.headers.etag);
    const again = await server.inject({ method: 'GET', url: '/web/styles.css', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const other = await server.inject({
      method: 'GET',
      url: '/web/styles.css',
      headers: { 'if-none-match': '"x", "y"' },
    });
    expect(other.statusCode).toBe(200);

    writeFileSync(path.join(root, 'styles.css'), 'body { margin: 1px; }\n');
    const changed = await server.inject({ method: 'GET', url: '/web/styles.css', headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).toContain('margin: 1px');
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await serve(root).inject({ method: 'HEAD', url: '/web/app.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.body).toBe('');
  });

  it('refuses every way out of the web root with 404', async () => {
    const server = serve(root);
    const attempts = [
      '/web/../secret.txt',
      '/web/..%2fsecret.txt',
      '/web/..%2Fsecret.js',
      '/web/%2e%2e/secret.js',
      '/web/%2e%2e%2fsecret.js',
      '/web/..%5csecret.js',
      '/web/icons/../../secret.js',
      '/web/icons/..%2f..%2fsecret.js',
      '/web//etc/passwd',
      '/web/%2fetc%2fpasswd',
      `/web/${encodeURIComponent(path.join(scratch, 'secret.js'))}`,
      '/web/app.js%00.css',
      '/web/linked.js',
      '/web/.env',
      '/web/notes.md',
      '/web/',
      '/web/icons',
      '/web/icons/',
    ];
    for (const url of attempts) {
      const res = await server.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('not for the web');
      expect(res.body, url).not.toContain('export const secret');
      expect(res.body, url).not.toContain('NEON_API_KEYS');
    }
  });

  it('answers 404 with the API error shape for unknown paths, and keeps the page at one address', async () => {
    const server = serve(root);
    const missing = await server.inject({ method: 'GET', url: '/web/nothing.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'not_found', message: 'no dashboard file nothing.js' });
    expect((await server.inject({ method: 'GET', url: '/web/index.html' })).statusCode).toBe(404);
    expect((await server.inject({ method: 'GET', url: '/nothing' })).statusCode).toBe(404);
    expect((await server.inject({ method: 'GET', url: '/index.html' })).statusCode).toBe(404);
  });

  it('says so at / when the dashboard files are missing, rather than failing to start', async () => {
    const res = await serve(path.join(scratch, 'no-such-folder')).inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
  });

  it('needs no API key: the routes sit outside the guarded API scopes', async () => {
    const res = await serve(root).inject({ method: 'GET', url: '/', headers: { authorization: 'Bearer wrong' } });
    expect(res.statusCode).toBe(200);
  });
});

describe('the dashboard in the repository', () => {
  it('is found from the source folder and from the compiled one', () => {
    const web = path.join(REPO_ROOT, 'web');
    expect(defaultWebRoot(pathToFileURL(path.join(REPO_ROOT, 'service', 'dashboard-routes.ts')).href)).toBe(web);
    expect(defaultWebRoot(pathToFileURL(path.join(REPO_ROOT, 'dist', 'service', 'dashboard-routes.js')).href)).toBe(
      web,
    );
    expect(defaultWebRoot()).toBe(web);
  });

  it('serves every module the page imports, and the page has nothing inline that the CSP would refuse', async () => {
    const server = Fastify();
    app = server;
    registerDashboardRoutes(server);
    const page = await server.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    const html = page.body;
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
    expect(html).not.toMatch(/https?:\/\//);

    // Every file the page and its modules refer to is served, with the right type.
    const pending = [...html.matchAll(/(?:src|href)="(web\/[^"]+)"/g)].map((m) => m[1]!);
    const seen = new Set<string>();
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const res = await server.inject({ method: 'GET', url: `/${file}` });
      expect(res.statusCode, file).toBe(200);
      if (file.endsWith('.js')) {
        expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
        expect(res.body, file).not.toMatch(/\beval\(|new Function\(|innerHTML|insertAdjacentHTML|document\.write/);
        for (const m of res.body.matchAll(/from '\.\/([\w-]+\.js)'/g)) pending.push(`web/${m[1]!}`);
      }
    }
    expect([...seen].sort()).toEqual(
      expect.arrayContaining(['web/app.js', 'web/styles.css', 'web/favicon.svg', 'web/chart.js', 'web/api.js']),
    );
    // The type-checking config beside the scripts is not served.
    expect((await server.inject({ method: 'GET', url: '/web/tsconfig.json' })).statusCode).toBe(404);
    expect(readFileSync(path.join(REPO_ROOT, 'web', 'index.html'), 'utf8')).toBe(html);
  });
});
