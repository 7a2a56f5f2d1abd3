import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { ErrorCode, GatehouseError } from '../core/index.js';

/** TLS the gateway serves directly: its certificate chain and private key (PEM), and their files. */
export interface TlsConfig {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

/** What `gatehouse serve` may set: `--tls-cert` and `--tls-key`. */
export interface TlsFlags {
  cert?: string;
  key?: string;
}

/**
 * TLS from `flags`, then `GATEHOUSE_TLS_CERT` and `GATEHOUSE_TLS_KEY` (PEM files); null when
 * neither is set (plain HTTP, e.g. behind a TLS-terminating proxy).
 * @throws GatehouseError INVALID_INPUT when only one is set, a file cannot be read, or the two do
 *   not make a key pair — naming the setting, the file and what to do.
 */
export function loadTlsConfig(flags: TlsFlags, env: NodeJS.ProcessEnv): TlsConfig | null {
  const certFile = flags.cert ?? env.GATEHOUSE_TLS_CERT ?? '';
  const keyFile = flags.key ?? env.GATEHOUSE_TLS_KEY ?? '';
  if (certFile === '' && keyFile === '') return null;
  if (certFile === '' || keyFile === '') {
    const [given, missing] =
      certFile === ''
        ? ['GATEHOUSE_TLS_KEY (--tls-key)', 'GATEHOUSE_TLS_CERT (--tls-cert)']
        : ['GATEHOUSE_TLS_CERT (--tls-cert)', 'GATEHOUSE_TLS_KEY (--tls-key)'];
    throw invalid(
      `${given} is set but ${missing} is not: serving TLS needs both the certificate chain and its private key (PEM files). Set both, or neither for plain HTTP.`,
    );
  }
  return readTls(resolve(certFile), resolve(keyFile));
}

/**
 * Reads and checks a certificate chain and its key (also to reload them, e.g. on SIGHUP).
 * @throws GatehouseError INVALID_INPUT as {@link loadTlsConfig}.
 */
export function readTls(certFile: string, keyFile: string): TlsConfig {
  const cert = readPem(certFile, 'GATEHOUSE_TLS_CERT (--tls-cert)', 'CERTIFICATE');
  const key = readPem(keyFile, 'GATEHOUSE_TLS_KEY (--tls-key)', 'PRIVATE KEY');
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw invalid(
      `The TLS certificate ${certFile} and key ${keyFile} cannot be used together (${(err as Error).message}): give the private key of that certificate.`,
      err,
    );
  }
  return { certFile, keyFile, cert, key };
}

function readPem(file: string, setting: string, label: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw invalid(
      `${setting} names ${file}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a readable PEM file.`,
      err,
    );
  }
  if (!bytes.toString('latin1').includes(label)) {
    throw invalid(
      `${setting} names ${file}, which holds no PEM "${label}" block: give a PEM file (-----BEGIN ${label}-----).`,
    );
  }
  return bytes;
}

function invalid(message: string, cause?: unknown): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, message, cause ? { cause } : {});
}
