/**
 * Runs a receiver task's callback and turns what it does into the task's final payload: a result
 * of the right shape completes the task; a throw, or a result of the wrong shape, fails it with
 * the JSON-RPC error the request itself would have answered ([V17], [V18]). A callback that throws
 * `{ code, message }` with an integer `code` chooses that error; any other throw (a DOMException
 * such as an AbortError included: its `code` is a DOM number) is a -32603.
 *
 * Nothing the callback hands back is trusted to behave: a thrown value or a result may be a
 * null-prototype object, a symbol, a proxy, or have getters that throw. Every read of it happens
 * here, inside a try, and the result is kept as its JSON copy, so the task's payload is exactly
 * what `tasks/result` sends later ([V15], [V17]) and a result that cannot be sent as JSON (a
 * bigint, a cycle) fails the task instead of completing it with an answer that never arrives.
 */
import type { JsonObject } from '../port/port.js';
import type { JsonRpcErrorInfo } from '../types.js';
import { INTERNAL_ERROR, type ReceiverKind } from './types.js';
import { messageOf } from '../util/text.js';
import { isObject } from '../util/json.js';
import { answerFlaw } from '../util/answer-shape.js';
import { rpcFieldsOf } from '../util/rpc-error.js';

/** What is wrong with a callback's result (already a JSON copy), or `undefined` when its shape is right. */
export function resultFlaw(kind: ReceiverKind, result: unknown): string | undefined {
  if (!isObject(result)) return 'the result is not an object';
  if (result._meta !== undefined && !isObject(result._meta)) return '_meta must be an object';
  return answerFlaw(kind, result);
}

/**
 * The JSON copy of `value` (what the wire would carry), or why there is none: `JSON.stringify`
 * throws for a bigint, a cycle or a getter that throws, and gives `undefined` for a function or a
 * symbol. Each getter is read once, here.
 */
function jsonCopy(
  value: unknown,
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly why: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { ok: false, why: messageOf(error) };
  }
  return text === undefined ? { ok: true, value: undefined } : { ok: true, value: JSON.parse(text) as unknown };
}

/** The JSON-RPC error a callback's throw becomes; building it never throws. */
export function errorOf(kind: ReceiverKind, thrown: unknown): JsonRpcErrorInfo {
  const text = messageOf(thrown);
  // A DOMException's `code` (an AbortError's 20) is no JSON-RPC code: -32603 then.
  const { code, data } = rpcFieldsOf(thrown);
  if (code === undefined) return { code: INTERNAL_ERROR, message: `The ${kind} callback failed: ${text}` };
  if (data === undefined) return { code, message: text };
  // The callback chose this error: keep its code and message even when its data cannot go as JSON.
  const copy = jsonCopy(data);
  if (!copy.ok) return { code, message: `${text} (its data was left out: serializing it as JSON threw: ${copy.why})` };
  return copy.value === undefined ? { code, message: text } : { code, message: text, data: copy.value };
}

/** How a callback run ended. */
export type RunEnd =
  { readonly ok: true; readonly result: JsonObject } | { readonly ok: false; readonly error: JsonRpcErrorInfo };

/**
 * Runs `callback` (sync or async, throwing or not) and checks its answer. Never rejects: whatever
 * the callback does ends the task ([V18]), so `tasks/result` always has an answer to give ([V15]).
 */
export async function runCallback(kind: ReceiverKind, callback: () => unknown): Promise<RunEnd> {
  let result: unknown;
  try {
    result = await callback();
  } catch (error) {
    return { ok: false, error: errorOf(kind, error) };
  }
  const invalid = (flaw: string): RunEnd => ({
    ok: false,
    error: { code: INTERNAL_ERROR, message: `The ${kind} callback returned an invalid result: ${flaw}` },
  });
  const copy = jsonCopy(result);
  if (!copy.ok) return invalid(`serializing it as JSON threw: ${copy.why}`);
  const flaw = resultFlaw(kind, copy.value);
  if (flaw !== undefined) return invalid(flaw);
  return { ok: true, result: copy.value as JsonObject };
}
