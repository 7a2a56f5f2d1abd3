// @ts-check
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The Studio's build: `npm run build` writes it to dist/studio/, which the gateway serves at
 * /studio. Hashed asset names (cached for a year), no inline script (the CSP forbids it), and the
 * gzip size of every file printed.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/studio/',
  publicDir: false,
  logLevel: 'info',
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
