import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../../src/core/index.js';
import { base64Inner } from '../../src/secrets/redaction-forms.js';
import { RemovalTally } from '../../src/secrets/redaction.js';
import { Redactor } from '../../src/secrets/redactor.js';

const SECRET = 'tok_9f?>>~x?~z/+k';
const NAME = 'deploy-key';
const MARK = '[REDACTED:brokered:deploy-key]';
const redactor = new Redactor([{ name: NAME, value: SECRET }], { patterns: false });

/** `text` broken into lines of `width` characters joined by `eol`, as `base64` and MIME wrap. */
function wrap(text: string, width: number, eol: string): string {
  return (text.match(new RegExp(`.{1,${width}}`, 'gs')) ?? []).join(eol);
}

/** Every check also asserts the value left no trace in the output or the removals. */
function redact(r: Redactor, text: string, secret = SECRET) {
  const result = r.redactText(text);
  expect(result.text).not.toContain(secret);
  expect(JSON.stringify(result.removals)).not.toContain(secret);
  return result;
}

describe('Redactor: brokered values', () => {
  it('removes the plain value wherever it appears and counts each', () => {
    const { text, removals } = redact(redactor, `a ${SECRET} b ${SECRET}${SECRET}`);
    expect(text).toBe(`a ${MARK} b ${MARK}${MARK}`);
    expect(removals).toEqual([{ kind: 'brokered:deploy-key', encoding: 'plain', count: 3 }]);
  });

  it('leaves text without the value unchanged and records nothing', () => {
    const text = `tok_9f?>>~x?~z/+ (one short) and ${SECRET.slice(1)}`;
    expect(redactor.redactText(text)).toEqual({ text, removals: [] });
  });

  it('removes a 4-character value in its plain form', () => {
    const r = new Redactor([{ name: 'pin', value: 'Xy7q' }], { patterns: false });
    const { text } = redact(r, 'pin=Xy7q;', 'Xy7q');
    expect(text).toBe('pin=[REDACTED:brokered:pin];');
    // Its base64 (5 chars of fixed bits at best) is too short to look for: ordinary base64 stays.
    const b64 = Buffer.from('Xy7q').toString('base64');
    expect(r.redactText(b64).text).toBe(b64);
  });

  it('ignores an empty value', () => {
    const r = new Redactor([{ name: 'empty', value: '' }], { patterns: false });
    expect(r.redactText('anything')).toEqual({ text: 'anything', removals: [] });
  });

  it('removes base64 in both alphabets, padded and unpadded', () => {
    const bytes = Buffer.from(SECRET);
    const std = bytes.toString('base64');
    const url = bytes.toString('base64url');
    expect(std).not.toBe(url.padEnd(std.length, '='));
    for (const [encoded, encoding] of [
      [std, 'base64'],
      [std.replace(/=+$/, ''), 'base64'],
      [url, 'base64url'],
      [`${url}==`.slice(0, std.length), 'base64url'],
    ] as const) {
      const { text, removals } = redact(redactor, `echo ${encoded} |`);
      expect(text).toBe(`echo ${MARK} |`);
      expect(removals).toEqual([{ kind: 'brokered:deploy-key', encoding, count: 1 }]);
    }
  });

  it('removes base64 inside longer base64 at every alignment, taking the quanta that carry it', () => {
    for (const secret of ['abcdef', 'abcdefg', 'abcdefgh', SECRET, `${SECRET}é€😀`]) {
      const r = new Redactor([{ name: 'v', value: secret }], { patterns: false });
      const bytes = Buffer.from(secret);
      for (let before = 0; before <= 5; before += 1) {
        for (let after = 0; after <= 4; after += 1) {
          const head = Buffer.from('<p>!?'.slice(0, before));
          const tail = Buffer.from('~>"x'.slice(0, after));
          const data = Buffer.concat([head, bytes, tail]);
          for (const alphabet of ['base64', 'base64url'] as const) {
            for (const encoded of [
              data.toString(alphabet),
              data.toString(alphabet).replace(/=+$/, ''),
            ]) {
              const { text, removals } = r.redactText(encoded);
              // Every 4-character quantum holding a bit of the value goes, padding with it: no
              // character is left beside the marker that encodes part of it, and what is left on
              // either side decodes on its own to the bytes around the value's quanta.
              const first = 4 * Math.floor(before / 3);
              const end = 4 * Math.ceil((before + bytes.length) / 3);
              const kept = [encoded.slice(0, first), encoded.slice(end)];
              expect(text).toBe(`${kept[0]}[REDACTED:brokered:v]${kept[1]}`);
              expect(Buffer.from(kept[0]!, alphabet)).toEqual(
                head.subarray(0, 3 * Math.floor(before / 3)),
              );
              expect(Buffer.from(kept[1]!, alphabet)).toEqual(
                data.subarray(Math.min(data.length, 3 * Math.ceil((before + bytes.length) / 3))),
              );
              expect(removals).toHaveLength(1);
              expect(removals[0]!.encoding).toMatch(/^base64/);
              for (const offset of [0, 1, 2])
                expect(text).not.toContain(base64Inner(bytes, offset, alphabet));
            }
          }
        }
      }
    }
  });

  it('leaves of `echo $SECRET | base64` only the marker, and the newline where it has a quantum of its own', () => {
    // demo-token's values are 29 characters; 28 shares its last quantum with the newline too.
    for (const [secret, rest] of [
      ['demo-AbCdEfGhIjKlMnOpQrStUvWx', ''],
      ['demo-AbCdEfGhIjKlMnOpQrStUvW', ''],
      ['demo-AbCdEfGhIjKlMnOpQrStUv', 'Cg=='],
    ] as const) {
      const r = new Redactor([{ name: 'demo-token', value: secret }], { patterns: false });
      for (const alphabet of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${secret}\n`).toString(alphabet);
        const left = alphabet === 'base64' ? rest : rest.replace(/=+$/, '');
        expect(r.redactText(`${encoded}\n`).text).toBe(`[REDACTED:brokered:demo-token]${left}\n`);
        expect(Buffer.from(left, alphabet).toString()).toBe(rest ? '\n' : '');
      }
    }
  });

  it('leaves no character of any form beside the marker, whatever the value starts or ends with', () => {
    const secrets = [
      'p@ss%',
      '%start!x',
      'end\\\\',
      '"quoted"',
      'a/b/c/',
      ' spaced ',
      'é€😀x',
      '+plus+',
      'x<&>y',
    ];
    /** Every encoder of a string the redactor knows, as one would write it into a text. */
    const forms = (v: string): Record<string, string> => {
      const hex = Buffer.from(v).toString('hex');
      const json = JSON.stringify(v).slice(1, -1);
      return {
        plain: v,
        'json (JSON.stringify)': json,
        'json, slashes escaped': json.replace(/\//g, '\\/'),
        'json, ASCII only': json.replace(
          /[^\x20-\x7e]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        ),
        'json, HTML-safe': json.replace(
          /[<>&]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        ),
        'url (encodeURIComponent)': encodeURIComponent(v),
        'url, lower-case escapes': encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (e) =>
          e.toLowerCase(),
        ),
        'url (form)': new URLSearchParams({ q: v }).toString().slice(2),
        'url (encodeURI)': encodeURI(v),
        hex,
        HEX: hex.toUpperCase(),
      };
    };
    for (const secret of secrets) {
      const r = new Redactor([{ name: 'v', value: secret }], { patterns: false });
      for (const [name, form] of Object.entries(forms(secret))) {
        const { text } = r.redactText(`[${form}]`);
        expect(text, `${JSON.stringify(secret)} as ${name}: ${form}`).toBe(
          '[[REDACTED:brokered:v]]',
        );
      }
    }
  });

  it('removes a value in any letter case, in every form, only where asked to fold case', () => {
    const value = 'MixedCase-Token-7Qz';
    const r = new Redactor([{ name: 'host', value }], { patterns: false });
    const lower = value.toLowerCase();
    const b64 = Buffer.from(value).toString('base64url').toLowerCase();
    const host = { host: `${lower}.example.invalid`, reason: `host x.${b64}.example.invalid` };
    expect(r.redactJson(host).value).toEqual(host);
    const folded = r.redactJson(host, { foldCase: true });
    expect(folded.value).toEqual({
      host: '[REDACTED:brokered:host].example.invalid',
      reason: 'host x.[REDACTED:brokered:host].example.invalid',
    });
    expect(folded.removals).toEqual([
      { kind: 'brokered:host', encoding: 'plain', count: 1 },
      // This value's base64 and base64url are the same text; the first rule names it.
      { kind: 'brokered:host', encoding: 'base64', count: 1 },
    ]);
    // A value removed case-sensitively is not counted twice.
    expect(r.redactJson([value], { foldCase: true }).removals).toEqual([
      { kind: 'brokered:host', encoding: 'plain', count: 1 },
    ]);
  });

  it('removes base64 as encoders write it: wrapped (LF, CRLF), JSON-escaped, URL-encoded', () => {
    // 102 bytes: its base64 is longer than a 76-column line and holds both `/` and `+`.
    const secret = SECRET.repeat(6);
    const r = new Redactor([{ name: 'v', value: secret }], { patterns: false });
    const mark = '[REDACTED:brokered:v]';
    for (const head of ['', 'x', 'xy']) {
      // `printf %s "$SECRET" | base64` and its like, the value at each byte offset of a quantum.
      const data = Buffer.from(`${head}${secret}`);
      for (const alphabet of ['base64', 'base64url'] as const) {
        const flat = data.toString(alphabet);
        expect(flat.length).toBeGreaterThan(76);
        const forms: Record<string, [string, string]> = {
          'wrapped at 76, LF (base64)': [`${wrap(flat, 76, '\n')}\n`, '\n'],
          'wrapped at 76, CRLF (MIME)': [`${wrap(flat, 76, '\r\n')}\r\n`, '\r\n'],
          'wrapped at 64 (openssl)': [`${wrap(flat, 64, '\n')}\n`, '\n'],
          'wrapped, inside JSON': [
            JSON.stringify(`${wrap(flat, 76, '\n')}\n`)
              .slice(1, -1)
              .replace(/\//g, '\\/'),
            '\\n',
          ],
          'JSON, slashes escaped': [JSON.stringify(flat).slice(1, -1).replace(/\//g, '\\/'), ''],
          'URL-encoded': [encodeURIComponent(flat), ''],
        };
        for (const [name, [encoded, trailer]] of Object.entries(forms)) {
          const { text, removals } = r.redactText(`<${encoded}>`);
          const about = `${alphabet} at offset ${head.length}, ${name}: ${encoded}`;
          expect(text, about).toBe(`<${mark}${trailer}>`);
          expect(removals, about).toEqual([{ kind: 'brokered:v', encoding: alphabet, count: 1 }]);
        }
      }
    }
    // A line break where a quantum of the value ends takes nothing of the next line with it.
    const flat = Buffer.from(`${secret}\n`).toString('base64');
    // (`Cg==`, the newline's own quantum, stays.)
    expect(r.redactText(`${wrap(flat, 76, '\n')}\nnext line`).text).toBe(`${mark}Cg==\nnext line`);
  });

  it('removes hex as dump tools write it: wrapped (xxd -p), byte by byte (od), with colons', () => {
    const secret = SECRET.repeat(3);
    const r = new Redactor([{ name: 'v', value: secret }], { patterns: false });
    const hex = Buffer.from(secret).toString('hex');
    const pairs = hex.match(/../g)!;
    const forms = {
      'xxd -p': `${wrap(hex, 60, '\n')}\n`,
      'xxd -p, upper case': `${wrap(hex.toUpperCase(), 60, '\n')}\n`,
      'od -An -tx1': `${wrap(pairs.map((p) => ` ${p}`).join(''), 48, '\n')}\n`,
      colons: pairs.join(':'),
      'inside JSON': JSON.stringify(`${wrap(hex, 60, '\n')}\n`).slice(1, -1),
    };
    for (const [name, encoded] of Object.entries(forms)) {
      const { text, removals } = r.redactText(`<${encoded}>`);
      expect(text, name).toMatch(/^< ?\[REDACTED:brokered:v\](?:\n|\\n)?>$/);
      expect(removals, name).toEqual([{ kind: 'brokered:v', encoding: 'hex', count: 1 }]);
    }
  });

  it('removes a value with every byte percent-encoded, either case', () => {
    const encoded = [...Buffer.from(SECRET)].map((b) => `%${b.toString(16).padStart(2, '0')}`);
    for (const form of [encoded.join(''), encoded.join('').toUpperCase()]) {
      const { text, removals } = redact(redactor, `q=${form}&x`);
      expect(text).toBe(`q=${MARK}&x`);
      expect(removals).toEqual([{ kind: 'brokered:deploy-key', encoding: 'url', count: 1 }]);
    }
  });

  it('removes hex in lower and upper case, also inside a longer hex dump', () => {
    const hex = Buffer.from(SECRET).toString('hex');
    for (const encoded of [hex, hex.toUpperCase()]) {
      const { text, removals } = redact(redactor, `00ff${encoded}ee`);
      expect(text).toBe(`00ff${MARK}ee`);
      expect(removals).toEqual([{ kind: 'brokered:deploy-key', encoding: 'hex', count: 1 }]);
    }
  });

  it('removes URL-encoded forms from any encoder', () => {
    const secret = 'p@ss w0rd/ü+&=?#~';
    const r = new Redactor([{ name: 'db', value: secret }], { patterns: false });
    const forms = [
      encodeURIComponent(secret),
      new URLSearchParams({ q: secret }).toString().slice(2),
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
      encodeURI(secret),
      'p%40ss+w0rd%2F%C3%BC%2B%26%3D%3F%23~',
    ];
    for (const encoded of forms) {
      expect(encoded).not.toBe(secret);
      const { text, removals } = redact(r, `https://h/?password=${encoded}&x=1`, secret);
      expect(text).toBe('https://h/?password=[REDACTED:brokered:db]&x=1');
      expect(removals).toEqual([{ kind: 'brokered:db', encoding: 'url', count: 1 }]);
    }
  });

  it('removes JSON-escaped forms, ASCII-only and slash-escaped ones too', () => {
    const secret = 'line1\n"quoted"\\tab\t/é😀<&>';
    const r = new Redactor([{ name: 'cfg', value: secret }], { patterns: false });
    const ascii = JSON.stringify(secret).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    const forms = [
      JSON.stringify(secret),
      ascii,
      ascii.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`),
      JSON.stringify(secret)
        .replace(/\//g, '\\/')
        .replace(/</g, '\\u003c')
        .replace(/&/g, '\\u0026'),
    ];
    for (const encoded of forms) {
      const { text, removals } = redact(r, `{"v":${encoded}}`, secret);
      expect(text).toBe('{"v":"[REDACTED:brokered:cfg]"}');
      expect(JSON.parse(text)).toEqual({ v: '[REDACTED:brokered:cfg]' });
      expect(removals).toEqual([{ kind: 'brokered:cfg', encoding: 'json', count: 1 }]);
    }
  });

  it('counts removals by kind and encoding, never holding the value', () => {
    const token = 'ghs_notreal_but_brokered_123';
    const r = new Redactor(
      [
        { name: NAME, value: SECRET },
        { name: 'gh', value: token },
      ],
      { patterns: false },
    );
    const text = [
      SECRET,
      Buffer.from(SECRET).toString('hex'),
      token,
      SECRET,
      Buffer.from(token).toString('base64'),
    ].join(' ');
    const { removals, text: out } = redact(r, text);
    expect(out).not.toContain(token);
    expect(removals).toEqual([
      { kind: 'brokered:deploy-key', encoding: 'plain', count: 2 },
      { kind: 'brokered:deploy-key', encoding: 'hex', count: 1 },
      { kind: 'brokered:gh', encoding: 'plain', count: 1 },
      { kind: 'brokered:gh', encoding: 'base64', count: 1 },
    ]);
    expect(JSON.stringify(removals)).not.toContain(token);
  });

  it('removes the longer of two values where one contains the other', () => {
    const r = new Redactor(
      [
        { name: 'inner', value: 'abc123xyz' },
        { name: 'outer', value: 'pre-abc123xyz-post' },
      ],
      { patterns: false },
    );
    expect(r.redactText('pre-abc123xyz-post and abc123xyz').text).toBe(
      '[REDACTED:brokered:outer] and [REDACTED:brokered:inner]',
    );
  });

  it('names a brokered value found inside a pattern match by the value', () => {
    const token = 'opaque-TOKEN-0123456789';
    const r = new Redactor([{ name: 'api', value: token }]);
    const { text, removals } = redact(r, `Authorization: Bearer ${token}`, token);
    expect(text).toBe('Authorization: Bearer [REDACTED:brokered:api]');
    expect(removals).toEqual([{ kind: 'brokered:api', encoding: 'plain', count: 1 }]);
  });

  it('keeps a marker safe for JSON and URLs whatever the name', () => {
    const r = new Redactor([{ name: 'we"ird]\\name', value: 'secret-value-1' }], {
      patterns: false,
    });
    const { text, removals } = r.redactText('{"a":"secret-value-1"}');
    expect(JSON.parse(text)).toEqual({ a: '[REDACTED:brokered:we_ird__name]' });
    expect(removals[0]!.kind).toBe('brokered:we"ird]\\name');
  });
});

describe('Redactor.redactJson', () => {
  it('redacts every string in nested objects and arrays, keys too, and copies', () => {
    const input = {
      ok: 1,
      flag: true,
      none: null,
      list: [SECRET, { deep: [`x${SECRET}y`, 2] }],
      [SECRET]: 'as a key',
      nested: { b64: Buffer.from(SECRET).toString('base64') },
      when: new Date('2026-01-01T00:00:00Z'),
    };
    const { value, removals } = redactor.redactJson(input);
    expect(value).toEqual({
      ok: 1,
      flag: true,
      none: null,
      list: [MARK, { deep: [`x${MARK}y`, 2] }],
      [MARK]: 'as a key',
      nested: { b64: MARK },
      when: '2026-01-01T00:00:00.000Z',
    });
    expect(removals).toEqual([
      { kind: 'brokered:deploy-key', encoding: 'plain', count: 3 },
      { kind: 'brokered:deploy-key', encoding: 'base64', count: 1 },
    ]);
    expect(JSON.stringify(value)).not.toContain(SECRET);
    expect(input.list[0]).toBe(SECRET);
  });

  it('redacts a bare string and keeps other primitives', () => {
    expect(redactor.redactJson(SECRET).value).toBe(MARK);
    expect(redactor.redactJson(42)).toEqual({ value: 42, removals: [] });
    expect(redactor.redactJson(undefined)).toEqual({ value: undefined, removals: [] });
  });

  it('keeps a "__proto__" key a key', () => {
    const input = JSON.parse(`{"__proto__": {"x": "${SECRET}"}}`) as Record<string, unknown>;
    const { value } = redactor.redactJson(input);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(JSON.stringify(value)).toBe(`{"__proto__":{"x":"${MARK}"}}`);
  });

  it('refuses a value with a cycle, and allows a shared one', () => {
    const shared = { s: SECRET };
    expect(redactor.redactJson({ a: shared, b: shared }).value).toEqual({
      a: { s: MARK },
      b: { s: MARK },
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => redactor.redactJson(cyclic)).toThrow(IllegalStateError);
  });
});

describe('Redactor: speed', () => {
  it('scans a megabyte with three values and all patterns in one pass', () => {
    // Correctness at size; the timing itself belongs to bench/.
    const values = ['ghp_not_a_pattern_value_1', 'p@ss w0rd/x', 'aGVsbG8gd29ybGQ'].map(
      (value, i) => ({ name: `v${i}`, value }),
    );
    const r = new Redactor(values);
    const line = 'the quick brown fox 0123456789 {"k": "v"} /usr/lib/x.so 4f1c2a7b\n';
    const text = line.repeat(Math.ceil((1 << 20) / line.length)) + values[1]!.value;
    const { text: out, removals } = r.redactText(text);
    expect(out.endsWith('[REDACTED:brokered:v1]')).toBe(true);
    expect(removals).toEqual([{ kind: 'brokered:v1', encoding: 'plain', count: 1 }]);
  });
});

describe('RemovalTally', () => {
  it('sums counts by kind and encoding, in the order first seen', () => {
    const tally = new RemovalTally();
    tally.add('jwt', undefined);
    tally.add('brokered:a', 'base64', 2);
    tally.add('jwt', undefined, 3);
    tally.add('brokered:a', 'hex');
    tally.add('brokered:a', 'base64');
    expect(tally.list()).toEqual([
      { kind: 'jwt', count: 4 },
      { kind: 'brokered:a', encoding: 'base64', count: 3 },
      { kind: 'brokered:a', encoding: 'hex', count: 1 },
    ]);
  });

  it('lists a copy', () => {
    const tally = new RemovalTally();
    tally.add('jwt', undefined);
    tally.list()[0]!.count = 99;
    expect(tally.list()).toEqual([{ kind: 'jwt', count: 1 }]);
  });
});
