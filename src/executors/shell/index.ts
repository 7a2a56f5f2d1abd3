export { ShellExecutor } from './shell-executor.js';
export type { ShellExecution } from './shell-executor.js';
export { fillTemplate } from './argv-template.js';
