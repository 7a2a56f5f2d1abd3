import { render } from 'preact';
import { App } from './app.js';
import { currentSession } from './session.js';
import './styles.css';

// Asked for before the first render: the answer decides whether sign-in or the views show, so it
// must not wait for an effect (which runs only after the first paint).
const session = currentSession();
const root = document.getElementById('app');
if (root) render(<App session={session} />, root);
