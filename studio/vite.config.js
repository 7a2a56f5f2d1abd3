// @ts-check
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { bundleBudget } from './bundle-budget.js';
import { prerenderSignIn } from './prerender-sign-in.js';

/**
 * The Studio's build: `npm run build` writes it to dist/studio/, which the gateway serves at
 * /studio. Hashed asset names (cached for a year), no inline script (the CSP forbids it), the
 * gzip size of every file printed, and the first view's total checked against its budget. The
 * sign-in page is prerendered into index.html (prerender-sign-in.js).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/studio/',
  publicDir: false,
  logLevel: 'info',
  plugins: [bundleBudget(), prerenderSignIn()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/studio/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    sourcemap: false,
  },
});
