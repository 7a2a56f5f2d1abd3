import { createHash, createHmac, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/secrets/redactor.js';

const redactor = new Redactor([]);

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function jwt(header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const signing = `${b64url(header)}.${b64url(payload)}`;
  return `${signing}.${createHmac('sha256', 'k').update(signing).digest('base64url')}`;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');

const PEMS = {
  pkcs8: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  pkcs1: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
  encryptedPkcs1: rsa.privateKey.export({
    type: 'pkcs1',
    format: 'pem',
    cipher: 'aes-256-cbc',
    passphrase: 'p',
  }) as string,
  encryptedPkcs8: rsa.privateKey.export({
    type: 'pkcs8',
    format: 'pem',
    cipher: 'aes-256-cbc',
    passphrase: 'p',
  }) as string,
  sec1: ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string,
  ed25519: ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  openssh: `-----BEGIN OPENSSH PRIVATE KEY-----\n${randomBytes(300).toString('base64').replace(/.{70}/g, '$&\n')}\n-----END OPENSSH PRIVATE KEY-----`,
};

/** A realistic sample, the text expected after redaction, the kind, and near misses that must stay. */
const CASES: { kind: string; samples: [string, string][]; nearMisses: string[] }[] = [
  {
    kind: 'aws-access-key',
    samples: [
      ['key id AKIAIOSFODNN7EXAMPLE in use', 'key id [REDACTED:aws-access-key] in use'],
      ['"AccessKeyId": "ASIAY34FZKBOKMUTVV7A",', '"AccessKeyId": "[REDACTED:aws-access-key]",'],
    ],
    nearMisses: [
      'AKIAIOSFODNN7EXAMPL',
      'AKIAIOSFODNN7EXAMPLE1',
      'XAKIAIOSFODNN7EXAMPLE',
      'akiaiosfodnn7example',
      'AIDAIOSFODNN7EXAMPLE',
    ],
  },
  {
    kind: 'aws-secret-key',
    samples: [
      [
        'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n',
        'aws_secret_access_key = [REDACTED:aws-secret-key]\n',
      ],
      [
        'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        'export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]',
      ],
      [
        '"SecretAccessKey": "9drTJvcXLB89EXAMPLELB8923FB892xMFI+1xmDE",',
        '"SecretAccessKey": "[REDACTED:aws-secret-key]",',
      ],
    ],
    nearMisses: [
      'aws_secret_access_key = YOUR_SECRET_ACCESS_KEY',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYX',
      'checksum = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    ],
  },
  {
    kind: 'github-token',
    samples: [
      ['token: ghp_16C7e42F292c6912E7710c838347Ae178B4a\n', 'token: [REDACTED:github-token]\n'],
      ['GH_TOKEN=gho_16C7e42F292c6912E7710c838347Ae178B4a', 'GH_TOKEN=[REDACTED:github-token]'],
      [
        'x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com',
        'x-access-token:[REDACTED:github-token]@github.com',
      ],
      [
        'github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW ok',
        '[REDACTED:github-token] ok',
      ],
    ],
    nearMisses: [
      'ghp_16C7e42F292c6912E7710c838347Ae178B4',
      'ghx_16C7e42F292c6912E7710c838347Ae178B4a',
      'github_pat_short',
      'my_ghp_16C7e42F292c6912E7710c838347Ae178B4a',
    ],
  },
  {
    kind: 'gitlab-token',
    samples: [
      ['PRIVATE-TOKEN: glpat-xYz12AbC34dEf56GhI78j', 'PRIVATE-TOKEN: [REDACTED:gitlab-token]'],
      ['use glpat-Ab3dEf6hIj9kLmN0pQrStUvWxYz.01.1a2b3c4d5.', 'use [REDACTED:gitlab-token].'],
    ],
    nearMisses: ['glpat-short123', 'xglpat-xYz12AbC34dEf56GhI78j', 'the glpat- prefix'],
  },
  {
    kind: 'slack-token',
    samples: [
      [
        'SLACK_BOT_TOKEN=xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
        'SLACK_BOT_TOKEN=[REDACTED:slack-token]',
      ],
      [
        'xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef!',
        '[REDACTED:slack-token]!',
      ],
    ],
    nearMisses: ['xoxo-hugs-and-kisses', 'xoxb-not-a-token-at-all', 'xoxb-12-short'],
  },
  {
    kind: 'npm-token',
    samples: [
      [
        '//registry.npmjs.org/:_authToken=npm_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz\n',
        '//registry.npmjs.org/:_authToken=[REDACTED:npm-token]\n',
      ],
    ],
    nearMisses: [
      'npm_config_cache=/home/u/.npm',
      'npm_package_name=gatehouse',
      'npm_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWx',
    ],
  },
  {
    kind: 'jwt',
    samples: [
      [
        `id_token=${jwt({ alg: 'HS256', typ: 'JWT' }, { sub: '1234567890', name: 'A B', iat: 1516239022 })}&state=1`,
        'id_token=[REDACTED:jwt]&state=1',
      ],
      [
        `unsigned ${b64url({ alg: 'none' })}.${b64url({ sub: 'x' })}. end`,
        'unsigned [REDACTED:jwt] end',
      ],
      [`Use ${jwt({ alg: 'RS256', kid: 'k1' }, { aud: 'gatehouse' })}.`, 'Use [REDACTED:jwt].'],
    ],
    nearMisses: [
      `${b64url({ foo: 'bar', typ: 'x' })}.${b64url({ sub: 'x' })}.c2lnbmF0dXJl`,
      `${b64url({ alg: 'HS256' })}.${b64url({ sub: 'x' })}`,
      'eyJ is how base64 of {" starts',
      'keyJwtSetting.eyJxxxxx.yy',
    ],
  },
  {
    kind: 'bearer-token',
    samples: [
      [
        '> Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543\r\n',
        '> Authorization: Bearer [REDACTED:bearer-token]\r\n',
      ],
      [
        '{"authorization":"bearer abcDEF123.xyz~456+/ghi="}',
        '{"authorization":"bearer [REDACTED:bearer-token]"}',
      ],
    ],
    nearMisses: [
      'The bearer of bad news.',
      'Bearer authentication is described in RFC 6750',
      'Authorization: Bearer $TOKEN',
      'TorchBearer 1234567890abcdef',
    ],
  },
  {
    kind: 'basic-auth',
    samples: [
      [
        'Authorization: Basic dXNlcjpwYXNzd29yZA==\n',
        'Authorization: Basic [REDACTED:basic-auth]\n',
      ],
    ],
    nearMisses: ['basic authorization is weak', 'Authorization: Basic realm="x"'],
  },
];

describe('Redactor: known secret patterns', () => {
  for (const { kind, samples, nearMisses } of CASES) {
    it(`removes ${kind} and leaves its near misses`, () => {
      for (const [sample, expected] of samples) {
        const { text, removals } = redactor.redactText(sample);
        expect(text).toBe(expected);
        expect(removals).toEqual([{ kind, count: 1 }]);
      }
      for (const miss of nearMisses)
        expect(redactor.redactText(miss)).toEqual({ text: miss, removals: [] });
    });
  }

  it('removes PEM private keys of every common type, whole', () => {
    for (const [type, pem] of Object.entries(PEMS)) {
      const trailing = pem.endsWith('\n') ? '\n' : '';
      const { text, removals } = redactor.redactText(`key (${type}):\n${pem}\ndone`);
      expect(text).toBe(`key (${type}):\n[REDACTED:private-key]${trailing}\ndone`);
      expect(removals).toEqual([{ kind: 'private-key', count: 1 }]);
    }
    expect(PEMS.encryptedPkcs1).toContain('DEK-Info: AES-256-CBC,');
  });

  it('removes a PEM key that is JSON-escaped or cut short', () => {
    const escaped = JSON.stringify({ key: PEMS.pkcs8 });
    expect(redactor.redactText(escaped).text).toBe('{"key":"[REDACTED:private-key]\\n"}');
    const cut = PEMS.sec1.slice(0, 120);
    const { text } = redactor.redactText(`${cut}`);
    expect(text).toBe('[REDACTED:private-key]');
  });

  it('removes a service-account JSON private_key and keeps the JSON valid', () => {
    const account = {
      type: 'service_account',
      client_email: 'a@b.iam',
      private_key: PEMS.pkcs8.slice(0, 200),
      token_uri: 'https://x',
    };
    for (const text of [JSON.stringify(account), JSON.stringify(account, null, 2)]) {
      const out = redactor.redactText(text);
      expect(JSON.parse(out.text)).toEqual({ ...account, private_key: '[REDACTED:private-key]' });
      expect(out.removals).toEqual([{ kind: 'private-key', count: 1 }]);
    }
  });

  it('leaves public keys and certificates', () => {
    const pub = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const cert = `-----BEGIN CERTIFICATE-----\n${randomBytes(200).toString('base64')}\n-----END CERTIFICATE-----\n`;
    for (const text of [pub, cert, '-----BEGIN PRIVATE KEY BLOCKS ARE DESCRIBED IN RFC 7468']) {
      expect(redactor.redactText(text)).toEqual({ text, removals: [] });
    }
  });

  it('leaves ordinary text, identifiers, digests and encoded data alone', () => {
    const samples = [
      'The quick brown fox jumps over the lazy dog. Bearer bonds, basic tokens, keys and secrets.',
      Array.from({ length: 200 }, () => randomUUID()).join('\n'),
      Array.from({ length: 200 }, (_, i) =>
        createHash('sha256').update(String(i)).digest('hex'),
      ).join(' '),
      Array.from({ length: 200 }, (_, i) =>
        createHash('sha1').update(String(i)).digest('hex').toUpperCase(),
      ).join(','),
      `"integrity": "sha512-${createHash('sha512').update('x').digest('base64')}"`,
      Buffer.from('Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(200)).toString(
        'base64',
      ),
      Buffer.from(JSON.stringify({ message: 'ordinary', items: [1, 2, 3], alg: false })).toString(
        'base64url',
      ),
      randomBytes(64 * 1024).toString('base64'),
      randomBytes(64 * 1024).toString('hex'),
      'https://example.com/path?query=value&token_type=bearer#frag /usr/local/bin/node C:\\Windows\\System32',
      'commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: A <a@b.c>\nDate: Mon Jan 1 2026',
    ];
    for (const text of samples) expect(redactor.redactText(text)).toEqual({ text, removals: [] });
  });

  it('does not look for patterns when told not to', () => {
    const r = new Redactor([], { patterns: false });
    const text = `AKIAIOSFODNN7EXAMPLE ${PEMS.sec1}`;
    expect(r.redactText(text)).toEqual({ text, removals: [] });
  });

  it('counts several kinds in one text', () => {
    const text = `AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A\n${PEMS.ed25519}npm_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz`;
    expect(redactor.redactText(text).removals).toEqual([
      { kind: 'aws-access-key', count: 2 },
      { kind: 'private-key', count: 1 },
      { kind: 'npm-token', count: 1 },
    ]);
  });
});
