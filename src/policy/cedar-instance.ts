import { createRequire } from 'node:module';
import type * as CedarModule from '@cedar-policy/cedar-wasm/nodejs';

/** Cedar's functions, bound to one WebAssembly instance of it. */
export type Cedar = typeof CedarModule;

const require = createRequire(import.meta.url);
const CEDAR_PATH = require.resolve('@cedar-policy/cedar-wasm/nodejs');

/**
 * A fresh WebAssembly instance of Cedar, with its own memory: its glue module is evaluated anew
 * (it instantiates the module when loaded), so nothing is shared with another instance.
 */
export function loadCedar(): Cedar {
  delete require.cache[CEDAR_PATH];
  return require(CEDAR_PATH) as Cedar;
}

/**
 * True when `err` means Cedar's instance can no longer be trusted: a WebAssembly trap ("memory
 * access out of bounds" when its recursive parser or evaluator overflows its own stack, on a
 * policy nesting a few hundred levels deep) or the host's stack overflowing inside a Cedar call.
 * Either way the call stopped midway with the instance's memory in an unknown state (later calls
 * trap too), so the instance must be replaced.
 */
export function isWasmTrap(err: unknown): boolean {
  return (
    err instanceof WasmRuntimeError ||
    (err instanceof RangeError && /call stack size/i.test(err.message))
  );
}

// The type libraries this project uses (no DOM) do not declare WebAssembly.
const WasmRuntimeError = (
  globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }
).WebAssembly.RuntimeError;
