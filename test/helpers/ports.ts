// The tests' free port is the one scripts/ shares with the bench (scripts/free-port.ts).
export { freePort } from '../../scripts/free-port.js';
