import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withDownloadedDocument } from '../../src/cli/fetch-document.js';
import type { DownloadOptions } from '../../src/cli/fetch-document.js';

/** A loopback document server; it counts every connection, so a refusal is seen to make none. */
let server: Server;
let port: number;
let connections = 0;
const paths: string[] = [];
/** Test names resolve through this map only: never an outside DNS server. */
const names: Record<string, string[]> = {
  'docs.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.215.14', '10.1.2.3'],
  'v6-metadata.test': ['fd00:ec2::254'],
};
const lookups: string[] = [];
const resolve: DownloadOptions['resolve'] = (host) => {
  lookups.push(host);
  const answer = names[host];
  return answer
    ? Promise.resolve(answer)
    : Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' }));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(req.url ?? '');
    if (req.url === '/to-metadata')
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    else if (req.url === '/to-metadata-name')
      res.writeHead(307, { location: `http://metadata.test:${port}/x` }).end();
    else if (req.url === '/moved') res.writeHead(301, { location: '/doc.json' }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"openapi":"3.0.3"}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});
beforeEach(() => {
  connections = 0;
  paths.length = 0;
  lookups.length = 0;
});

const read = (url: string, options: DownloadOptions = {}) =>
  withDownloadedDocument(url, (file) => readFile(file, 'utf8'), { resolve, ...options });

describe('the CLI downloading a document by URL', () => {
  it('refuses private, loopback, link-local and metadata addresses before any connection', async () => {
    const refused: [string, DownloadOptions, RegExp][] = [
      [`http://127.0.0.1:${port}/doc.json`, {}, /127\.0\.0\.1 is a loopback/],
      [`http://docs.test:${port}/doc.json`, {}, /docs\.test resolves to 127\.0\.0\.1, a loopback/],
      ['http://169.254.169.254/latest/meta-data/', { allowPrivate: true }, /metadata/],
      ['http://[::ffff:169.254.169.254]/', { allowPrivate: true }, /169\.254\.169\.254 is a link/],
      ['http://0xa9fea9fe/', { allowPrivate: true }, /169\.254\.169\.254 is a link/],
      ['http://2852039166/', { allowPrivate: true }, /169\.254\.169\.254 is a link/],
      [`http://metadata.test:${port}/`, { allowPrivate: true }, /resolves to 169\.254\.169\.254/],
      ['http://v6-metadata.test/', { allowPrivate: true }, /resolves to fd00:ec2::254/],
      ['http://mixed.test/openapi.json', {}, /resolves to 10\.1\.2\.3, a private/],
      ['http://[::]/', {}, /:: is a unspecified/],
      ['http://127.1/', {}, /127\.0\.0\.1 is a loopback/],
      ['file:///etc/passwd', { allowPrivate: true }, /file: URLs are not fetched/],
      [`http://user:pw@docs.test:${port}/`, { allowPrivate: true }, /user info/],
    ];
    for (const [url, options, reason] of refused) {
      const attempt = read(url, options);
      await expect(attempt, url).rejects.toThrow(/^refused to fetch /);
      await expect(attempt, url).rejects.toThrow(reason);
    }
    expect(connections).toBe(0);
  });

  it('judges every redirect afresh: one to the metadata service is refused before connecting', async () => {
    for (const path of ['/to-metadata', '/to-metadata-name']) {
      await expect(read(`http://docs.test:${port}${path}`, { allowPrivate: true })).rejects.toThrow(
        /\(redirected to http:\/\/(169\.254\.169\.254|metadata\.test:\d+)\/.*\): .*169\.254\.169\.254,? (is )?a link-local or cloud metadata address/,
      );
    }
    // Only the document server was reached, once per attempt.
    expect(paths).toEqual(['/to-metadata', '/to-metadata-name']);
    expect(lookups).toEqual(['docs.test', 'docs.test', 'metadata.test']);
  });

  it('downloads from a private address when allowed, following a redirect within it', async () => {
    await expect(read(`http://docs.test:${port}/moved`, { allowPrivate: true })).resolves.toBe(
      '{"openapi":"3.0.3"}',
    );
    expect(paths).toEqual(['/moved', '/doc.json']);
  });
});
