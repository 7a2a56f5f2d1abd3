export { ComputerUseExecutor } from './computer-use-executor.js';
export {
  ComputerAction,
  DEFAULT_DISPLAY,
  computerUseExecutionProblem,
  type ComputerUseExecution,
} from './computer-use-execution.js';
export { computerInputProblems, type ComputerStep } from './computer-actions.js';
