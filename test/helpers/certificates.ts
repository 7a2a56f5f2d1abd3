import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A self-signed certificate and its key, as PEM files and bytes. */
export interface TestCertificate {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

/** Null when `openssl` runs here; else why not (for `skipWithout`). */
export function missingOpenssl(): string | null {
  return spawnSync('openssl', ['version']).status === 0 ? null : 'openssl version did not run';
}

/**
 * Makes a one-day self-signed P-256 certificate for `subjectAltName` (e.g. `DNS:upstream.test`
 * or `IP:127.0.0.1`) with openssl, written as `NAME-cert.pem` and `NAME-key.pem` in `dir`.
 */
export function selfSignedCertificate(
  dir: string,
  subjectAltName: string,
  name = 'server',
): TestCertificate {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  const made = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    `/CN=${subjectAltName.replace(/^[A-Z]+:/, '')}`,
    '-addext',
    `subjectAltName=${subjectAltName}`,
  ]);
  if (made.status !== 0) throw new Error(`openssl req failed: ${made.stderr.toString()}`);
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}
