import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInfraError } from '../../infra/errors.js';
import { artifactPath, downloadFromMavenCentral } from '../../infra/maven-central-download.js';

const BODY = Buffer.from('PK\u0003\u0004 not really a jar, but bytes all the same');
const SHA1 = createHash('sha1').update(BODY).digest('hex');
let server: Server;
let repository: string;
let sha1Answer = SHA1;
const dir = mkdtempSync(join(tmpdir(), 'neon-maven-https-'));

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '';
    if (path === '/maven2/org/example/thing/1.0/thing-1.0.jar') {
      response.writeHead(200, { 'content-length': String(BODY.length) }).end(BODY);
    } else if (path === '/maven2/org/example/thing/1.0/thing-1.0.jar.sha1') {
      response.writeHead(200).end(`${sha1Answer}  thing-1.0.jar\n`);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  repository = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('downloading from Maven Central over HTTPS', () => {
  it('maps coordinates to repository paths, with type and classifier', () => {
    expect(artifactPath('org.example:thing:1.0')).toEqual({
      path: 'org/example/thing/1.0/thing-1.0.jar',
      fileName: 'thing-1.0.jar',
    });
    expect(artifactPath('org.elasticsearch.distribution.integ-test-zip:elasticsearch:8.19.4:zip').path).toBe(
      'org/elasticsearch/distribution/integ-test-zip/elasticsearch/8.19.4/elasticsearch-8.19.4.zip',
    );
    expect(artifactPath('g:a:1:jar:sources').fileName).toBe('a-1-sources.jar');
    expect(() => artifactPath('g:a')).toThrow(/not Maven coordinates/);
  });

  it('downloads the file, checks the published SHA-1 and reports progress', async () => {
    sha1Answer = SHA1;
    const seen: number[] = [];
    const file = await downloadFromMavenCentral('org.example:thing:1.0', join(dir, 'ok'), 'the thing', {
      repository,
      onProgress: (received, total) => {
        seen.push(received);
        expect(total).toBe(BODY.length);
      },
    });
    expect(readFileSync(file)).toEqual(BODY);
    expect(seen.at(-1)).toBe(BODY.length);
  });

  it('refuses a file whose SHA-1 differs from the repository’s, and leaves nothing behind', async () => {
    sha1Answer = '0'.repeat(40);
    const error = await downloadFromMavenCentral('org.example:thing:1.0', join(dir, 'bad'), 'the thing', {
      repository,
    }).catch((e: unknown) => e);
    expect(isInfraError(error) && error.code).toBe('download_failed');
    expect((error as Error).message).toMatch(/SHA-1 .* does not match/);
    expect(existsSync(join(dir, 'bad', 'thing-1.0.jar'))).toBe(false);
  });

  it('says which URL failed when the artefact is not there', async () => {
    const error = await downloadFromMavenCentral('org.example:missing:2.0', join(dir, 'gone'), 'the missing', {
      repository,
    }).catch((e: unknown) => e);
    expect(isInfraError(error) && error.code).toBe('download_failed');
    expect((error as Error).message).toContain('/org/example/missing/2.0/missing-2.0.jar failed: HTTP 404');
  });
});
