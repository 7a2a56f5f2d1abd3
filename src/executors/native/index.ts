export { NativeExecutor, BeforeEffectError } from './native-executor.js';
export type { NativeHandler, NativeContext } from './native-executor.js';
