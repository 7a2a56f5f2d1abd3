import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTlsConfig } from '../../src/app/tls-config.js';
import { missingOpenssl, selfSignedCertificate } from '../helpers/certificates.js';
import type { TestCertificate } from '../helpers/certificates.js';
import { skipWithout } from '../helpers/prerequisites.js';

describe.skipIf(skipWithout('openssl', missingOpenssl()))('GATEHOUSE_TLS_*', () => {
  let dir: string;
  let a: TestCertificate;
  let b: TestCertificate;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-config-'));
    a = selfSignedCertificate(dir, 'DNS:a.test', 'a');
    b = selfSignedCertificate(dir, 'DNS:b.test', 'b');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is off when neither is set, and reads both files, flags over variables', () => {
    expect(loadTlsConfig({}, {})).toBeNull();
    const env = { GATEHOUSE_TLS_CERT: b.certFile, GATEHOUSE_TLS_KEY: b.keyFile };
    expect(loadTlsConfig({}, env)).toMatchObject({ certFile: b.certFile, cert: b.cert });
    expect(loadTlsConfig({ cert: a.certFile, key: a.keyFile }, env)).toMatchObject({
      certFile: a.certFile,
      keyFile: a.keyFile,
      key: a.key,
    });
  });

  it('refuses half a setting, an unreadable or non-PEM file and a key of another certificate', () => {
    expect(() => loadTlsConfig({ key: a.keyFile }, {})).toThrow(
      /GATEHOUSE_TLS_KEY \(--tls-key\) is set but GATEHOUSE_TLS_CERT \(--tls-cert\) is not/,
    );
    expect(() => loadTlsConfig({ cert: join(dir, 'absent.pem'), key: a.keyFile }, {})).toThrow(
      /--tls-cert\) names .*absent\.pem, which cannot be read \(ENOENT\)/,
    );
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate');
    expect(() => loadTlsConfig({ cert: a.certFile, key: junk }, {})).toThrow(
      /holds no PEM "PRIVATE KEY" block/,
    );
    expect(() => loadTlsConfig({ cert: a.certFile, key: b.keyFile }, {})).toThrow(
      /cannot be used together .*give the private key of that certificate/,
    );
  });
});
