import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Many tests start gateway processes, sandboxes and Chromium: on a busy 2-core machine they run
    // 2-3x slower than alone, so the bounds leave that room (a hang still fails, a minute later).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A directory for the run's one PostgreSQL cluster, started by the first test that needs it.
    globalSetup: ['test/helpers/postgres-global.ts'],
  },
});
