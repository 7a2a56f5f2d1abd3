import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../../src/core/index.js';
import { Redactor } from '../../src/secrets/redactor.js';
import type { StreamRedactor } from '../../src/secrets/stream-redactor.js';

const SECRET = 'tok_9f?>>~x?~z/+k "é"';
const values = [
  { name: 'deploy', value: SECRET },
  { name: 'short', value: 'Q7x!' },
];
const withPatterns = new Redactor(values);
const brokeredOnly = new Redactor(values, { patterns: false });

/** Deterministic pseudo-random numbers (mulberry32), so a failing split can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const filler = (n: number, seed = 1) => {
  const words = ['alpha', 'build', 'ok', 'step', '42', 'done', 'path/to/file.ts', 'x=1', '\n'];
  const next = random(seed);
  let out = '';
  while (out.length < n) out += `${words[Math.floor(next() * words.length)]} `;
  return out.slice(0, n);
};

function run(stream: StreamRedactor, chunks: string[]) {
  const outputs = chunks.map((c) => stream.push(c));
  outputs.push(stream.end());
  return { outputs, text: outputs.join(''), removals: stream.removals() };
}

function splitAt(text: string, cuts: number[]): string[] {
  const points = [0, ...[...cuts].sort((a, b) => a - b), text.length];
  return points.slice(1).map((p, i) => text.slice(points[i], p));
}

/** `text` broken into lines of `width` characters joined by `eol`, as `base64` and MIME wrap. */
function wrap(text: string, width: number, eol: string): string {
  return (text.match(new RegExp(`.{1,${width}}`, 'gs')) ?? []).join(eol);
}

const bytes = Buffer.from(SECRET);
const FORMS: Record<string, string> = {
  plain: SECRET,
  base64: bytes.toString('base64'),
  base64url: bytes.toString('base64url'),
  'base64 inside, offset 1': Buffer.concat([Buffer.from('x'), bytes, Buffer.from('tail')]).toString(
    'base64',
  ),
  'base64 inside, offset 2': Buffer.concat([Buffer.from('xy'), bytes, Buffer.from('t')]).toString(
    'base64url',
  ),
  'base64 of the value and a newline': Buffer.from(`${SECRET}\n`).toString('base64'),
  'base64 at the end, offset 2, padded': Buffer.concat([Buffer.from('xy'), bytes]).toString(
    'base64',
  ),
  hex: bytes.toString('hex'),
  HEX: bytes.toString('hex').toUpperCase(),
  url: encodeURIComponent(SECRET),
  form: new URLSearchParams({ a: SECRET }).toString(),
  json: JSON.stringify({ v: SECRET }),
  'base64 wrapped at 8 columns, CRLF': wrap(
    Buffer.concat([Buffer.from('x'), bytes, Buffer.from('tail')]).toString('base64'),
    8,
    '\r\n',
  ),
  'base64 wrapped, inside JSON with slashes escaped': JSON.stringify(
    wrap(Buffer.from(`${SECRET}\n`).toString('base64'), 8, '\n'),
  ).replace(/\//g, '\\/'),
  'base64 URL-encoded': encodeURIComponent(bytes.toString('base64')),
  'hex wrapped (xxd -p)': wrap(bytes.toString('hex'), 10, '\n'),
  'hex byte by byte (od)': wrap(
    [...bytes].map((b) => ` ${b.toString(16).padStart(2, '0')}`).join(''),
    12,
    '\n',
  ),
  'every byte percent-encoded': [...bytes].map((b) => `%${b.toString(16)}`).join(''),
};

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.' +
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const PATTERNS: Record<string, string> = {
  pem: PEM,
  jwt: JWT,
  aws: 'AKIAIOSFODNN7EXAMPLE',
  bearer: 'Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543',
  github: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
};

describe('StreamRedactor', () => {
  for (const [name, form] of Object.entries({ ...FORMS, ...PATTERNS })) {
    it(`removes ${name} split across two writes at every point`, () => {
      const redactor = name in PATTERNS ? withPatterns : brokeredOnly;
      const text = `${filler(700)} ${form} ${filler(700, 2)}`;
      const whole = redactor.redactText(text);
      expect(whole.removals.length).toBeGreaterThan(0);
      for (let cut = 0; cut <= text.length; cut += 1) {
        const streamed = run(redactor.stream(), [text.slice(0, cut), text.slice(cut)]);
        expect(streamed.text).toBe(whole.text);
        expect(streamed.removals).toEqual(whole.removals);
      }
      expect(whole.text).not.toContain(SECRET);
      if (form.length > 30) expect(whole.text).not.toContain(form.slice(10, -10));
    });
  }

  it('matches redactText for random multi-chunk splits of a mixed document', () => {
    const parts = [...Object.values(FORMS), ...Object.values(PATTERNS), 'Q7x!'];
    const next = random(7);
    let doc = '';
    for (const part of parts) doc += `${filler(Math.floor(next() * 400), doc.length)}${part}`;
    const whole = withPatterns.redactText(doc);
    expect(whole.text).not.toContain(SECRET);
    expect(whole.text).not.toContain('Q7x!');
    for (let trial = 0; trial < 300; trial += 1) {
      const cuts = Array.from({ length: 1 + Math.floor(next() * 40) }, () =>
        Math.floor(next() * doc.length),
      );
      const streamed = run(withPatterns.stream(), splitAt(doc, cuts));
      expect(streamed.text).toBe(whole.text);
      expect(streamed.removals).toEqual(whole.removals);
    }
    const oneByOne = run(withPatterns.stream(), [...doc]);
    expect(oneByOne.text).toBe(whole.text);
    for (const output of oneByOne.outputs) expect(output).not.toContain('Q7x!');
  });

  it('holds back no more than its bound while nothing is open, and releases the rest', () => {
    const stream = withPatterns.stream();
    const text = filler(20_000, 3);
    let released = '';
    let pushed = 0;
    const next = random(11);
    while (pushed < text.length) {
      const size = 1 + Math.floor(next() * 900);
      released += stream.push(text.slice(pushed, pushed + size));
      pushed = Math.min(text.length, pushed + size);
      expect(pushed - released.length).toBeLessThanOrEqual(stream.holdBack);
    }
    expect(released).toBe(text.slice(0, released.length));
    expect(released + stream.end()).toBe(text);
  });

  it('bounds the hold by the longest form of a value', () => {
    const long = 'v'.repeat(999) + '!';
    const redactor = new Redactor([{ name: 'big', value: long }], { patterns: false });
    // Hex is the longest form: 2000 digits with, between two bytes, a JSON-escaped CRLF and a
    // space (a wrapped `od` dump inside JSON), 999 × 5 characters; and the 3 characters before a
    // base64 fragment its quanta may take in, each as long as `%2F` after an escaped CRLF.
    expect(redactor.stream().holdBack).toBeGreaterThanOrEqual(6995);
    expect(redactor.stream().holdBack).toBeLessThanOrEqual(6995 + 3 * 7);
    const text = `${filler(3000)}${Buffer.from(long).toString('hex')}${filler(3000)}`;
    for (const cut of [3001, 3999, 4999]) {
      const { outputs, text: out } = run(redactor.stream(), splitAt(text, [cut]));
      expect(out).toBe(`${filler(3000)}[REDACTED:brokered:big]${filler(3000)}`);
      expect(outputs[0]!.length).toBeGreaterThanOrEqual(cut - redactor.stream().holdBack);
    }
  });

  it('keeps a private key back until it ends, then releases the marker', () => {
    const stream = withPatterns.stream();
    const lines = PEM.split(/(?<=\n)/);
    let out = stream.push(filler(1000));
    for (const line of lines) out += stream.push(line);
    expect(out).not.toContain(lines[1]!.trim());
    out += stream.push(filler(1000, 5));
    out += stream.end();
    expect(out).toBe(`${filler(1000)}[REDACTED:private-key]\n${filler(1000, 5)}`);
  });

  it('releases a run that only looked like a JWT once it ends', () => {
    const lookalike = Buffer.from(JSON.stringify({ hello: 'world', n: 1 })).toString('base64url');
    const stream = withPatterns.stream();
    const out =
      stream.push(`${filler(900)}${lookalike}.abc.def`) + stream.push(` ${filler(900, 4)}`);
    expect(out).toContain(lookalike);
    expect(out + stream.end()).toBe(`${filler(900)}${lookalike}.abc.def ${filler(900, 4)}`);
    expect(stream.removals()).toEqual([]);
  });

  it('counts removals across chunks by kind and never keeps a value', () => {
    const stream = withPatterns.stream();
    const text = `${SECRET} ${FORMS.hex} AKIAIOSFODNN7EXAMPLE ${SECRET}`;
    const { text: out, removals } = run(stream, splitAt(text, [5, 30, 61]));
    expect(out).not.toContain(SECRET);
    expect(removals).toEqual([
      { kind: 'brokered:deploy', encoding: 'plain', count: 2 },
      { kind: 'brokered:deploy', encoding: 'hex', count: 1 },
      { kind: 'aws-access-key', count: 1 },
    ]);
    expect(JSON.stringify(removals)).not.toContain(SECRET);
  });

  it('ends once: a second end releases nothing and a push after end is refused', () => {
    const stream = brokeredOnly.stream();
    expect(stream.push('abc')).toBe('');
    expect(stream.end()).toBe('abc');
    expect(stream.end()).toBe('');
    expect(() => stream.push('more')).toThrow(IllegalStateError);
  });
});
