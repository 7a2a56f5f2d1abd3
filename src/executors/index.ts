export { NativeExecutor, BeforeEffectError } from './native/index.js';
export type { NativeHandler, NativeContext } from './native/index.js';
