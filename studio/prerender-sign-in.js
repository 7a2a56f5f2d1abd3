// @ts-check
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerImport } from 'vite';

/** The page the gateway sends to a browser with a session: the shell, which asks who it is. */
export const SIGNED_IN_PAGE = 'signed-in.html';

const EMPTY_APP = '<div id="app"></div>';
const SESSION_PRELOAD = /\s*<link rel="preload" href="\/v1\/sessions\/current"[^>]*>/;

/**
 * A Vite plugin that writes the Studio's page twice: `index.html` with the sign-in page's markup
 * prerendered into it (and no session check: the gateway sends it only when there is no session),
 * so the token field shows before any script has run; and {@link SIGNED_IN_PAGE}, the empty shell
 * that preloads the session check, for a browser the gateway knows is signed in.
 * @returns {import('vite').Plugin}
 */
export function prerenderSignIn() {
  /** @type {import('vite').ResolvedConfig | undefined} */
  let config;
  let signedInPage = '';
  return {
    name: 'gatehouse-prerender-sign-in',
    apply: 'build',
    configResolved(resolved) {
      config = resolved;
    },
    transformIndexHtml: {
      order: 'post',
      async handler(html) {
        if (!config) throw new Error('prerender-sign-in: the config was never resolved');
        if (!html.includes(EMPTY_APP) || !SESSION_PRELOAD.test(html)) {
          throw new Error(
            `prerender-sign-in: index.html must hold ${EMPTY_APP} and the preload of /v1/sessions/current`,
          );
        }
        /** @type {{ module: { signInMarkup: () => string } }} */
        const { module } = await runnerImport(join(config.root, 'src/prerender.tsx'), {
          configFile: false,
          root: config.root,
          logLevel: 'warn',
          oxc: config.oxc,
        });
        signedInPage = html;
        return html
          .replace(SESSION_PRELOAD, '')
          .replace(EMPTY_APP, `<div id="app">${module.signInMarkup()}</div>`);
      },
    },
    writeBundle() {
      if (!config || signedInPage === '') throw new Error('prerender-sign-in: no index.html seen');
      writeFileSync(join(config.build.outDir, SIGNED_IN_PAGE), signedInPage);
    },
  };
}
