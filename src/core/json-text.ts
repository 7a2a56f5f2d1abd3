import { cutText } from './cut-text.js';
import { ErrorCode, GatehouseError } from './errors.js';

/** How deep JSON may nest by default: far beyond any real schema, input or answer. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** Which rule of I-JSON (or of our bounds) a JSON text or value breaks. */
export type JsonRule = 'depth' | 'number' | 'duplicate' | 'proto' | 'surrogate' | 'type';

/** Why a JSON text or value was refused, and where (an RFC 6901 pointer). */
export interface JsonProblem {
  pointer: string;
  rule: JsonRule;
  /** The reason, for a person. */
  reason: string;
}

/** One open object or array of a text being scanned, and the member being read in it. */
interface Frame {
  object: boolean;
  /** The object's member names so far (duplicates are refused). */
  keys: Set<string> | null;
  /** The current member: its name in an object, its index in an array. */
  at: string | number;
  /** In an object: true until the current member's name has been read. */
  expectKey: boolean;
}

const QUOTE = 0x22;
/** A `\\uD800`–`\\uDFFF` escape (or a literal backslash before such letters: checked after). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const BACKSLASH = 0x5c;

/**
 * Parses JSON text as I-JSON (RFC 7493), the input RFC 8785 canonical JSON expects: at most
 * `maxDepth` nested objects and arrays, every number finite (`1e400` overflows to Infinity, which
 * canonical JSON cannot write), member names unique within an object, no string with a lone
 * surrogate (`"\ud800"`: no character, no UTF-8 form), and no `__proto__` member.
 * The nesting is measured before anything is built, so a deep text costs only the bytes read.
 * @param what what the text is, as the messages begin (`The request body`, a file's name).
 * @throws GatehouseError INVALID_INPUT with `details.pointer` (where) and `details.reason`.
 */
export function parseJsonText(
  text: string,
  what: string,
  maxDepth = DEFAULT_MAX_JSON_DEPTH,
): unknown {
  const problem = scanJsonText(text, maxDepth);
  if (problem) throw jsonProblemError(problem, what);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${what} is not valid JSON: ${(err as Error).message}.`,
      { details: { rule: 'syntax' }, cause: err },
    );
  }
}

/**
 * The first place a JSON value breaks the rules {@link parseJsonText} enforces on text (depth,
 * finite numbers, lone surrogates, `__proto__`), plus values JSON has no form for (undefined, functions, bigints,
 * symbols); null when it keeps them. For values that arrive already parsed (an upstream's answer,
 * a file read by a library). Walks without recursion, so any depth is safe to check.
 */
export function jsonValueProblem(
  value: unknown,
  maxDepth = DEFAULT_MAX_JSON_DEPTH,
): JsonProblem | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    switch (typeof v) {
      case 'string':
        if (hasLoneSurrogate(v)) return surrogateProblem(path);
        continue;
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v))
          return { pointer: path, rule: 'number', reason: `the number ${v} is not finite` };
        continue;
      case 'object': {
        if (v === null) continue;
        if (depth + 1 > maxDepth) return depthProblem(path, maxDepth);
        if (Array.isArray(v)) {
          for (let i = v.length - 1; i >= 0; i--)
            stack.push({ value: v[i], path: `${path}/${i}`, depth: depth + 1 });
          continue;
        }
        const keys = Object.keys(v);
        for (let i = keys.length - 1; i >= 0; i--) {
          const k = keys[i]!;
          const at = `${path}/${escapePointerToken(k)}`;
          if (k === '__proto__') return protoProblem(at);
          if (hasLoneSurrogate(k)) return surrogateProblem(at);
          stack.push({ value: (v as Record<string, unknown>)[k], path: at, depth: depth + 1 });
        }
        continue;
      }
      default:
        return {
          pointer: path,
          rule: 'type',
          reason: `a value of type ${typeof v} has no JSON form`,
        };
    }
  }
  return null;
}

/** A {@link JsonProblem} as the INVALID_INPUT error clients see. */
function jsonProblemError(problem: JsonProblem, what: string): GatehouseError {
  const where = problem.pointer === '' ? 'at its top' : `at ${problem.pointer}`;
  return new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `${what} is refused ${where}: ${problem.reason}.`,
    { details: { pointer: problem.pointer, rule: problem.rule } },
  );
}

/**
 * Reads the text's structure without building values, stopping at the first problem. Syntax is
 * left to `JSON.parse`, which runs after; here only well-formed text has to be read correctly.
 */
function scanJsonText(text: string, maxDepth: number): JsonProblem | null {
  const frames: Frame[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let j = i + 1;
      let escaped = false;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === BACKSLASH) {
          escaped = true;
          j++;
        } else if (d === QUOTE) break;
      }
      const top = frames.at(-1);
      const isKey = top?.object === true && top.expectKey;
      let value: string | null = isKey && !escaped ? text.slice(i + 1, j) : null;
      // Only an escape can write a lone surrogate: the text itself is well-formed UTF-16.
      if (escaped && (isKey || SURROGATE_ESCAPE.test(text.slice(i, j + 1)))) {
        try {
          value = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return null; // a broken string: JSON.parse says where
        }
        if (hasLoneSurrogate(value)) {
          const at = isKey ? pointerOf(frames, escapePointerToken(value)) : pointerOf(frames);
          return surrogateProblem(at);
        }
      }
      if (isKey && top) {
        const key = value!;
        const at = pointerOf(frames, escapePointerToken(key));
        if (key === '__proto__') return protoProblem(at);
        if (top.keys!.has(key))
          return {
            pointer: at,
            rule: 'duplicate',
            reason: `the member name ${JSON.stringify(key)} is repeated`,
          };
        top.keys!.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      // { or [
      if (frames.length + 1 > maxDepth) return depthProblem(pointerOf(frames), maxDepth);
      const object = c === 0x7b;
      frames.push({ object, keys: object ? new Set() : null, at: 0, expectKey: object });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
    } else if (c === 0x2c) {
      // ,
      const top = frames.at(-1);
      if (top?.object) top.expectKey = true;
      else if (top) top.at = (top.at as number) + 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      const token = text.slice(i, j);
      if (!Number.isFinite(Number(token)) && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(token)) {
        return {
          pointer: pointerOf(frames),
          rule: 'number',
          reason: `the number ${cutText(token, 40)} is too large to be finite (it would read as Infinity, which canonical JSON cannot write)`,
        };
      }
      i = j - 1;
    }
  }
  return null;
}

function isNumberChar(c: number): boolean {
  // digits, '.', 'e', 'E', '+', '-'
  return (
    (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d
  );
}

/** The pointer to the value being read: each open frame's current member, then `last`. */
function pointerOf(frames: readonly Frame[], last?: string): string {
  let p = '';
  for (const f of frames) {
    if (f.object && f.expectKey) break; // the member's name is not read yet: point at the object
    p += `/${typeof f.at === 'number' ? f.at : escapePointerToken(f.at)}`;
  }
  return last === undefined ? p : `${p}/${last}`;
}

function depthProblem(pointer: string, maxDepth: number): JsonProblem {
  return {
    pointer,
    rule: 'depth',
    reason: `objects and arrays nest deeper than ${maxDepth} levels here (the limit)`,
  };
}

function surrogateProblem(pointer: string): JsonProblem {
  return {
    pointer,
    rule: 'surrogate',
    reason:
      'a string holds a lone UTF-16 surrogate (a \\uD800–\\uDFFF escape without its pair), which is no character and has no UTF-8 form',
  };
}

/** True when `s` has a high surrogate without a low one after it, or a low one without a high. */
function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return true;
    const next = s.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

function protoProblem(pointer: string): JsonProblem {
  return { pointer, rule: 'proto', reason: 'a member named "__proto__" is not accepted' };
}

/** A member name as an RFC 6901 reference token (`~` → `~0`, `/` → `~1`). */
function escapePointerToken(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
