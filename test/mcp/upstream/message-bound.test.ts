import { describe, expect, it } from 'vitest';
import { MessageTooLarge, boundedFetch } from '../../../src/mcp/upstream/message-bound.js';

/** A fetch answering `body` with `type`, through the bound; says whether the bound was hit. */
function through(body: string, type: string, max: number, setting?: string) {
  let hit = 0;
  const fetch = boundedFetch(
    () => Promise.resolve(new Response(body, { headers: { 'content-type': type } })),
    max,
    () => (hit += 1),
    setting,
  );
  return { read: async () => (await fetch('http://x/mcp')).text(), hits: () => hit };
}

describe('boundedFetch', () => {
  it('passes an event stream whose every event is within the bound, however long the stream', async () => {
    const event = `data: ${'a'.repeat(90)}\r\n\r\n`;
    const stream = event.repeat(50) + `event: message\ndata: ${'b'.repeat(80)}\n\n`;
    const t = through(stream, 'text/event-stream', 100);
    expect(await t.read()).toBe(stream);
    expect(t.hits()).toBe(0);
  });

  it('errors an event over the bound, and says so once', async () => {
    const stream = `data: small\n\ndata: ${'c'.repeat(200)}\n\n`;
    const t = through(stream, 'text/event-stream', 100);
    await expect(t.read()).rejects.toBeInstanceOf(MessageTooLarge);
    expect(t.hits()).toBe(1);
  });

  it('bounds any other body as one message', async () => {
    expect(await through('{"ok":true}', 'application/json', 100).read()).toBe('{"ok":true}');
    const t = through(JSON.stringify({ text: 'd'.repeat(200) }), 'application/json', 100);
    await expect(t.read()).rejects.toThrow(/over the 100-byte bound/);
    expect(t.hits()).toBe(1);
  });

  it('names the setting of the bound only as its caller names it (the mcp layer knows no setting)', async () => {
    const plain = new MessageTooLarge(100);
    expect(plain.message).toBe(
      'the upstream sent a message over the 100-byte bound of one message from an upstream; the connection was closed',
    );
    expect(plain.message).not.toMatch(/GATEHOUSE_/);
    expect(new MessageTooLarge(100, 'SOME_SETTING').message).toBe(
      'the upstream sent a message over the 100-byte bound of one message from an upstream (SOME_SETTING); the connection was closed',
    );
    const t = through('x'.repeat(200), 'application/json', 100, 'SOME_SETTING');
    await expect(t.read()).rejects.toThrow(/over the 100-byte bound .*\(SOME_SETTING\)/);
  });
});
