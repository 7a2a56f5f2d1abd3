import { renderToString } from 'preact-render-to-string';
import { App } from './app.js';

/**
 * The sign-in page's markup, which the build writes into `index.html` (run by Vite in Node, never
 * shipped): the gateway sends it to a browser without a session, so the token field shows as soon
 * as the HTML arrives, and `main.tsx` hydrates it.
 */
export function signInMarkup(): string {
  return renderToString(<App session={null} />);
}
