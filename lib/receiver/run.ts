/**
 * Runs a receiver task's callback and turns what it does into the task's outcome: a result of the
 * right shape completes the task; a throw, or a result of the wrong shape, fails it with the
 * JSON-RPC error the request itself would have answered ([V17], [V18]). A callback that throws
 * `{ code, message }` chooses that error; any other throw is a -32603.
 */
import type { JsonObject } from '../port/port.js';
import type { JsonRpcErrorInfo } from '../types.js';
import { INTERNAL_ERROR, type ReceiverKind } from './types.js';

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What is wrong with a callback's result, or `undefined` when its shape is right. */
export function resultFlaw(kind: ReceiverKind, result: unknown): string | undefined {
  if (!isObject(result)) return 'the result is not an object';
  if (result._meta !== undefined && !isObject(result._meta)) return '_meta must be an object';
  if (kind === 'elicitation') {
    if (result.action !== 'accept' && result.action !== 'decline' && result.action !== 'cancel') {
      return 'action must be "accept", "decline" or "cancel"';
    }
    return result.content !== undefined && !isObject(result.content) ? 'content must be an object' : undefined;
  }
  if (typeof result.model !== 'string') return 'model must be a string';
  if (typeof result.role !== 'string') return 'role must be a string';
  return !isObject(result.content) && !Array.isArray(result.content) ? 'content must be a content block or an array of them' : undefined;
}

/** The JSON-RPC error a callback's throw becomes. */
export function errorOf(kind: ReceiverKind, thrown: unknown): JsonRpcErrorInfo {
  const e = thrown as { code?: unknown; message?: unknown; data?: unknown } | null;
  const text = typeof e?.message === 'string' ? e.message : String(thrown);
  if (typeof e?.code === 'number' && Number.isInteger(e.code)) {
    return e.data === undefined ? { code: e.code, message: text } : { code: e.code, message: text, data: e.data };
  }
  return { code: INTERNAL_ERROR, message: `The ${kind} callback failed: ${text}` };
}

/** How a callback run ended. */
export type RunEnd = { readonly ok: true; readonly result: JsonObject } | { readonly ok: false; readonly error: JsonRpcErrorInfo };

/** Runs `callback` (sync or async, throwing or not) and checks its answer. */
export async function runCallback(kind: ReceiverKind, callback: () => unknown): Promise<RunEnd> {
  let result: unknown;
  try {
    result = await callback();
  } catch (error) {
    return { ok: false, error: errorOf(kind, error) };
  }
  const flaw = resultFlaw(kind, result);
  if (flaw !== undefined) return { ok: false, error: { code: INTERNAL_ERROR, message: `The ${kind} callback returned an invalid result: ${flaw}` } };
  return { ok: true, result: result as JsonObject };
}
