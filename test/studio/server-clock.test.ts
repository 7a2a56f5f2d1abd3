import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../studio/src/server-clock.js';

const T = Date.UTC(2026, 0, 1, 12, 0, 0);
const http = (ms: number) => new Date(ms).toUTCString();

describe("the Studio's estimate of the gateway's clock", () => {
  it('is the browser clock until an answer with a Date header arrives', () => {
    const c = new ServerClock();
    expect(c.offset()).toBe(0);
    expect(c.now(T)).toBe(T);
    c.observe(null, T, T + 10);
    c.observe('not a date', T, T + 10);
    expect(c.offset()).toBe(0);
    expect(c.uncertainty()).toBe(Infinity);
  });

  it('finds a browser 10 minutes ahead, to within the second a Date header can tell', () => {
    const c = new ServerClock();
    const ahead = 10 * 60_000;
    // The gateway stamped 12:00:00 (it was 12:00:00.400 there); the browser read 12:10:00.350–.450.
    c.observe(http(T), T + ahead + 350, T + ahead + 450);
    expect(Math.abs(c.offset() - -ahead)).toBeLessThanOrEqual(1000);
    expect(c.uncertainty()).toBeLessThanOrEqual(550);
    // A later answer stamped 12:00:05 (12:00:05.950 there) narrows it.
    c.observe(http(T + 5000), T + ahead + 5900, T + ahead + 6000);
    expect(c.uncertainty()).toBeLessThanOrEqual(275);
    expect(Math.abs(c.offset() - -ahead)).toBeLessThanOrEqual(c.uncertainty());
    expect(Math.abs(c.now(T + ahead + 60_000) - (T + 60_000))).toBeLessThanOrEqual(275);
  });

  it('finds a browser behind, and narrows from several answers, never past what they bound', () => {
    const c = new ServerClock();
    const behind = 3 * 60_000 + 250; // the gateway is 3 min 0.25 s ahead
    for (let i = 0; i < 20; i++) {
      const sent = T + i * 7_321;
      const serverAt = sent + behind + 20; // stamped 20 ms after sending, answered 40 ms after
      c.observe(http(serverAt), sent, sent + 40);
      expect(c.offset() - c.uncertainty()).toBeLessThanOrEqual(behind);
      expect(c.offset() + c.uncertainty()).toBeGreaterThanOrEqual(behind);
    }
    expect(Math.abs(c.offset() - behind)).toBeLessThanOrEqual(50);
  });

  it('starts over when an answer cannot fit what it knew (a clock was stepped)', () => {
    const c = new ServerClock();
    c.observe(http(T), T + 100, T + 200);
    expect(Math.abs(c.offset())).toBeLessThanOrEqual(1000);
    // The browser's clock was set back an hour.
    c.observe(http(T + 10_000), T + 10_100 - 3_600_000, T + 10_200 - 3_600_000);
    expect(Math.abs(c.offset() - 3_600_000)).toBeLessThanOrEqual(1000);
  });

  it('ignores an answer whose times run backwards', () => {
    const c = new ServerClock();
    c.observe(http(T), T + 500, T + 100);
    expect(c.offset()).toBe(0);
  });
});
