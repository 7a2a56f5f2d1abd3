import { describe, expect, it } from 'vitest';
import { SIDE_EFFECT_CLASSES } from '../../src/core/index.js';
import type { SideEffectClass } from '../../src/core/index.js';
import { judgeExecution } from '../../src/invocation/index.js';
import type { ExecutionReport } from '../../src/invocation/index.js';

const stopped = (
  effectMayHaveStarted: boolean,
  extra: { output?: unknown; full?: unknown; uncertainNote?: string } = {},
): ExecutionReport => ({
  status: 'stopped',
  code: 'TIMEOUT',
  message: 'timed out',
  effectMayHaveStarted,
  ...extra,
});

describe('judgeExecution', () => {
  // [class, effect may have started, outcome]: every class, both facts.
  const table: [SideEffectClass, boolean, 'failed' | 'uncertain'][] = [
    ['read', false, 'failed'],
    ['read', true, 'failed'],
    ['workspace-write', false, 'failed'],
    ['workspace-write', true, 'uncertain'],
    ['shared-write', false, 'failed'],
    ['shared-write', true, 'uncertain'],
    ['production', false, 'failed'],
    ['production', true, 'uncertain'],
  ];

  it('the table names every class', () => {
    expect(new Set(table.map(([c]) => c))).toEqual(new Set(SIDE_EFFECT_CLASSES));
  });

  it.each(table)('class %s, effect may have started %s: %s', (cls, started, status) => {
    expect(judgeExecution(stopped(started), cls)).toEqual({
      status,
      code: 'TIMEOUT',
      message: 'timed out',
    });
  });

  it.each(SIDE_EFFECT_CLASSES)('an observed result is observed for class %s', (cls) => {
    expect(judgeExecution({ status: 'observed', output: { n: 1 } }, cls)).toEqual({
      status: 'observed',
      output: { n: 1 },
    });
  });

  it('says the note only when uncertain, and keeps the output either way', () => {
    const report = stopped(true, { output: { exitCode: 3 }, uncertainNote: 'it may have acted' });
    expect(judgeExecution(report, 'shared-write')).toEqual({
      status: 'uncertain',
      code: 'TIMEOUT',
      message: 'timed out; it may have acted',
      output: { exitCode: 3 },
    });
    expect(judgeExecution(report, 'read')).toEqual({
      status: 'failed',
      code: 'TIMEOUT',
      message: 'timed out',
      output: { exitCode: 3 },
    });
    expect(judgeExecution(stopped(false, { uncertainNote: 'x' }), 'production')).toEqual({
      status: 'failed',
      code: 'TIMEOUT',
      message: 'timed out',
    });
  });

  it('hands on the full output as reported, for every outcome, and adds none', () => {
    const full = { stdout: { sha256: 'ab', bytes: 9 } };
    expect(judgeExecution({ status: 'observed', output: { n: 1 }, full }, 'read')).toEqual({
      status: 'observed',
      output: { n: 1 },
      full,
    });
    const report = stopped(true, { output: { exitCode: 3 }, full });
    expect(judgeExecution(report, 'production')).toEqual({
      status: 'uncertain',
      code: 'TIMEOUT',
      message: 'timed out',
      output: { exitCode: 3 },
      full,
    });
    expect(judgeExecution(report, 'read')).toEqual({
      status: 'failed',
      code: 'TIMEOUT',
      message: 'timed out',
      output: { exitCode: 3 },
      full,
    });
    expect('full' in judgeExecution(stopped(true), 'production')).toBe(false);
    expect('output' in judgeExecution(stopped(true), 'production')).toBe(false);
  });
});
