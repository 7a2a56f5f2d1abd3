// @ts-check
import { gzipSync } from 'node:zlib';

/** The most the first view may weigh, gzipped (issue 11: < 150 KB). */
export const FIRST_VIEW_BUDGET = 150 * 1024;

/**
 * A Vite plugin that prints the gzip size of what the first view loads (its scripts and styles;
 * the views' lazy chunk counts too, as the first view, sign-in to the inbox, loads it) and fails
 * the build above `budget` bytes.
 * @param {number} budget
 * @returns {import('vite').Plugin}
 */
export function bundleBudget(budget = FIRST_VIEW_BUDGET) {
  return {
    name: 'gatehouse-bundle-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      let total = 0;
      for (const file of Object.values(bundle)) {
        const text = file.type === 'chunk' ? file.code : file.source;
        if (!/\.(js|css)$/.test(file.fileName)) continue;
        total += gzipSync(text).length;
      }
      const kb = (total / 1024).toFixed(1);
      const line = `Studio first view: ${kb} KB gzipped (budget ${budget / 1024} KB)`;
      if (total > budget) this.error(`${line}: over budget`);
      console.log(line);
    },
  };
}
