import { hydrate, render } from 'preact';
import { App } from './app.js';
import { currentSession } from './session.js';
import './styles.css';

const root = document.getElementById('app');
if (root?.firstElementChild) {
  // The gateway found no session and sent the sign-in page's markup (prerendered by the build):
  // it can be typed in already; this attaches its behaviour, and no session check is needed.
  hydrate(<App session={null} />, root);
} else if (root) {
  // Asked for before the first render: the answer decides whether sign-in or the views show, so
  // it must not wait for an effect (which runs only after the first paint).
  render(<App session={currentSession()} />, root);
}
