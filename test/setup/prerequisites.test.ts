import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  SETUP_COMMAND,
  missingCommand,
  requireInTest,
  skipWithout,
} from '../helpers/prerequisites.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('test prerequisites', () => {
  it('outside CI, skips with the reason printed', () => {
    vi.stubEnv('CI', '');
    const printed = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(skipWithout('socat', 'socat is not on PATH')).toBe(true);
    expect(String(printed.mock.calls[0]?.[0])).toContain('socat is not on PATH');
    expect(skipWithout('socat', null)).toBe(false);
  });

  it('with CI=true, fails naming what is missing and the set-up command', () => {
    vi.stubEnv('CI', 'true');
    expect(() => skipWithout('the Linux sandbox', 'bwrap not found')).toThrow(
      /CI=true: the Linux sandbox is not available on this machine: bwrap not found\. Run npm run setup/,
    );
    expect(skipWithout('the Linux sandbox', null)).toBe(false);
    const skip = vi.fn();
    expect(() => requireInTest({ skip }, 'openssl', 'openssl did not run')).toThrow(SETUP_COMMAND);
    expect(skip).not.toHaveBeenCalled();
  });

  it('inside a test outside CI, skips it with the reason as the note', () => {
    vi.stubEnv('CI', 'false');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const skip = vi.fn();
    requireInTest({ skip }, 'the Linux sandbox', 'cgroups are read-only');
    expect(skip).toHaveBeenCalledWith(expect.stringContaining('cgroups are read-only'));
    requireInTest({ skip }, 'the Linux sandbox', null);
    expect(skip).toHaveBeenCalledTimes(1);
  });

  it('finds commands on PATH and absolute paths', () => {
    expect(missingCommand('sh')).toBeNull();
    expect(missingCommand('/bin/sh')).toBeNull();
    expect(missingCommand('gatehouse-no-such-command')).toBe(
      'gatehouse-no-such-command is not on PATH',
    );
    expect(missingCommand('/nonexistent/tool')).toBe('/nonexistent/tool is not there');
  });
});
