export { ShellExecutor } from './shell-executor.js';
export type { ShellExecution } from './shell-executor.js';
export { fillTemplate, atPointer, templatePointers } from './argv-template.js';
