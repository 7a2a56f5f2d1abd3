import { parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { ErrorCode, GatehouseError } from '../../core/index.js';

const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESPONSE_MEMBERS = new Set(['jsonrpc', 'id', 'result', 'error']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a JSON value is, for a message saying what came instead. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? `the number ${v}` : `the fraction ${v}`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function idProblem(m: Record<string, unknown>, at: string): [string, string] | undefined {
  const id = m.id;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))
    return undefined;
  return [`${at}/id`, `must be a string or an integer; got ${kindOf(id)}`];
}

/** The pointer and the problem of one message the SDK would not read. */
function problemOf(m: unknown, at: string): [string, string] {
  if (!isObject(m))
    return [at, `must be a JSON-RPC message {"jsonrpc": "2.0", …}; got ${kindOf(m)}`];
  if (m.jsonrpc !== '2.0') return [`${at}/jsonrpc`, 'must be "2.0"'];
  if ('method' in m) {
    if (typeof m.method !== 'string') return [`${at}/method`, 'must be a string'];
    if ('id' in m) {
      const bad = idProblem(m, at);
      if (bad) return bad;
    }
    if ('params' in m && !isObject(m.params))
      return [`${at}/params`, `must be an object (named parameters); got ${kindOf(m.params)}`];
    const extra = Object.keys(m).find((k) => !REQUEST_MEMBERS.has(k));
    if (extra !== undefined)
      return [`${at}/${extra}`, 'is not a member of a request (jsonrpc, id, method, params)'];
  } else if ('result' in m || 'error' in m) {
    if ('result' in m && 'error' in m) return [at, 'holds both result and error; send one'];
    const bad = idProblem(m, at);
    if (bad) return bad;
    if ('result' in m && !isObject(m.result))
      return [`${at}/result`, `must be an object; got ${kindOf(m.result)}`];
    if ('error' in m) {
      const e = m.error;
      if (!isObject(e) || !Number.isSafeInteger(e.code) || typeof e.message !== 'string')
        return [`${at}/error`, 'must be {"code": an integer, "message": a string, "data"?}'];
    }
    const extra = Object.keys(m).find((k) => !RESPONSE_MEMBERS.has(k));
    if (extra !== undefined)
      return [`${at}/${extra}`, 'is not a member of a response (jsonrpc, id, result or error)'];
  } else {
    return [at, 'has no method (a request or notification) and no result or error (a response)'];
  }
  return [at, 'is not a JSON-RPC 2.0 message this endpoint reads'];
}

function refusal(pointer: string, problem: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.INVALID_INPUT,
    `Invalid JSON-RPC message: ${pointer === '' ? 'the body' : pointer} ${problem}.`,
    { details: { pointer, reason: 'invalid-message' } },
  );
}

/**
 * Why a `POST /mcp` body is not a JSON-RPC message or a batch of them, naming the message and its
 * member (the SDK answers every such body "Parse error", though it parsed); undefined when every
 * message reads.
 */
export function messageProblem(body: unknown): GatehouseError | undefined {
  const batch = Array.isArray(body);
  const messages: unknown[] = batch ? body : [body];
  if (batch && messages.length === 0)
    return refusal('', 'is an empty batch; send a message, or a batch of at least one');
  for (const [i, m] of messages.entries()) {
    try {
      parseJSONRPCMessage(m);
    } catch {
      return refusal(...problemOf(m, batch ? `/${i}` : ''));
    }
  }
  return undefined;
}

/**
 * Why a body without `Mcp-Session-Id` is not an `initialize` request that opens a session, when it
 * meant to be one (a message or batch naming the method `initialize`); undefined otherwise.
 */
export function initializeProblem(body: unknown): GatehouseError | undefined {
  if (Array.isArray(body)) {
    if (!body.some((m) => isObject(m) && m.method === 'initialize')) return undefined;
    return refusal('', 'is a batch holding initialize; send initialize alone, then the rest');
  }
  if (!isObject(body) || body.method !== 'initialize') return undefined;
  if (!('id' in body))
    return refusal('/id', 'is required: initialize is a request, not a notification');
  const p = body.params;
  const shape =
    '{"protocolVersion": …, "capabilities": {…}, "clientInfo": {"name": …, "version": …}}';
  if (!isObject(p)) return refusal('/params', `must be ${shape}`);
  if (typeof p.protocolVersion !== 'string')
    return refusal('/params/protocolVersion', `must be a string (e.g. "2025-06-18")`);
  if (!isObject(p.capabilities)) return refusal('/params/capabilities', 'must be an object');
  const c = p.clientInfo;
  if (!isObject(c)) return refusal('/params/clientInfo', 'must be {"name": …, "version": …}');
  for (const f of ['name', 'version'] as const)
    if (typeof c[f] !== 'string') return refusal(`/params/clientInfo/${f}`, 'must be a string');
  return undefined;
}
