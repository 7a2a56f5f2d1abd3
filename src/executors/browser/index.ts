export { BrowserExecutor } from './browser-executor.js';
export type { ConfiningSandbox } from './browser-session.js';
export {
  BrowserAction,
  DEFAULT_VIEWPORT,
  browserExecutionProblem,
  type BrowserExecution,
} from './browser-execution.js';
export { browserInputProblems, urlProblem, type BrowserStep } from './browser-steps.js';
export { pngSize } from './run-step.js';
