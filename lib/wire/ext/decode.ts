/**
 * Explicit, lenient decoders for the `io.modelcontextprotocol/tasks` extension (SEP-2663): the
 * polymorphic `tools/call` result, `DetailedTask` (from `tasks/get` and `notifications/tasks`) and
 * input requests. Lenient where servers and the spec's own examples differ ([E16]): `tasks/get`
 * may say `resultType` `"complete"` or `"task"`, and a completed task's embedded result may omit
 * its own `resultType`.
 */
import type { CallToolResult, JsonObject } from '../../types.js';
import { decodeCallToolResult, decodeTaskFields, isObject, malformed, usableTaskId } from '../decode.js';
import { decodeToolPage } from '../v2025/decode.js';
import { rpcError, wireCode } from '../../util/rpc-error.js';
import type { InlineInput, InputKind, StartReply, ToolPage, WireSnapshot } from '../wire.js';

/** The names of a task's duration fields on this wire. */
export const TASK_FIELDS = { ttl: 'ttlMs', pollInterval: 'pollIntervalMs' } as const;

/** Input request methods and the callback kind that answers each. */
const INPUT_KINDS: Readonly<Record<string, InputKind>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
};

/**
 * A tool result as the user sees it: the modern era's `resultType` is protocol framing, not part
 * of the result (SDK v2's own `callTool` leaves it out too).
 */
function toolResult(value: unknown, method: string, taskId?: string): CallToolResult {
  return decodeCallToolResult(value, method, taskId, true);
}

/** Most input requests read from one message; a server that sends more is cut off here. */
const MAX_INPUT_REQUESTS = 256;

/** What an `inputRequests` entry that is not a request (no `method` string) is taken for. */
const NOT_A_REQUEST = 'an input request without a method';

/**
 * Decodes an `inputRequests` map (`{ [key]: { method, params } }`). A kind this library cannot
 * answer (e.g. `roots/list`, or a method the schema does not have) is kept with `kind`
 * `undefined`, so that the caller can say so, and so is an entry that is not a request at all:
 * skipped, it would leave the task waiting for an answer nobody was asked for.
 */
export function decodeInputRequests(value: unknown, method: string): InlineInput[] {
  // null is none (D21).
  if (value === undefined || value === null) return [];
  if (!isObject(value)) throw malformed(method, 'inputRequests is not an object');
  const items: InlineInput[] = [];
  for (const [key, request] of Object.entries(value)) {
    if (items.length >= MAX_INPUT_REQUESTS) break;
    if (!isObject(request) || typeof request.method !== 'string') {
      items.push({ key, kind: undefined, method: NOT_A_REQUEST, params: {} });
      continue;
    }
    const params = isObject(request.params) ? request.params : {};
    // An own property only: a method named after one of Object's ("constructor") is no kind.
    const kind = Object.hasOwn(INPUT_KINDS, request.method) ? INPUT_KINDS[request.method] : undefined;
    items.push({ key, kind, method: request.method, params });
  }
  return items;
}

/**
 * Decodes a `DetailedTask`: the task, plus what rides on it by status ([E3]): `result` when
 * completed, `error` when failed, `inputRequests` when waiting for input. With `terse`, a
 * terminal task without its payload is accepted (a notification that leaves it out: the engine
 * then reads the task); otherwise it is malformed.
 * @throws TaskProtocolError for a malformed task.
 */
export function decodeDetailedTask(value: unknown, method: string, terse = false): WireSnapshot {
  const task = decodeTaskFields(value, method, TASK_FIELDS);
  const body = value as JsonObject;
  if (task.status === 'completed') {
    // A null result or error is none (D21): in a terse notification, left out.
    if (body.result === undefined || (terse && body.result === null)) {
      if (terse) return { task };
      throw malformed(method, 'a completed task carries no result', task.taskId);
    }
    return { task, payload: { kind: 'result', result: toolResult(body.result, method, task.taskId), tagged: true } };
  }
  if (task.status === 'failed') {
    const error = body.error;
    if ((error === undefined || error === null) && terse) return { task };
    // [E15]: failed is for JSON-RPC errors only. What a server that breaks it sent is still its
    // reason, kept rather than refused on every read (the task would end in a TaskProtocolError
    // that says nothing of it): an error whose code is a numeric string or whose message is
    // missing (the status message stands in), or a tool result (the 2025-11-25 habit of failing a
    // task whose tool returned `isError`), which then fails the task with that result.
    if (isObject(error)) {
      const code = wireCode(error.code);
      if (code !== undefined) {
        const message = typeof error.message === 'string' ? error.message : (task.statusMessage ?? '');
        return { task, payload: { kind: 'error', error: rpcError(code, message, error.data) } };
      }
    } else if ((error === undefined || error === null) && isObject(body.result)) {
      return { task, payload: { kind: 'result', result: toolResult(body.result, method, task.taskId), tagged: true } };
    }
    throw malformed(method, 'a failed task carries no JSON-RPC error', task.taskId);
  }
  // Left out (a terse notification) is not the same as none: the engine then reads the task.
  if (task.status === 'input_required')
    return body.inputRequests === undefined || body.inputRequests === null
      ? { task }
      : { task, input: decodeInputRequests(body.inputRequests, method) };
  return { task };
}

/** Decodes a `tasks/get` result (`resultType` `"complete"`, `"task"` or absent, [E16]). */
export function decodeGetTask(value: unknown): WireSnapshot {
  const method = 'tasks/get';
  if (isObject(value) && value.resultType !== 'task') onlyComplete(value.resultType, method);
  return decodeDetailedTask(value, method);
}

/**
 * Checks the empty acknowledgement that answers `tasks/cancel` ([E6]) and `tasks/update` ([E5]),
 * and the result that ends a `subscriptions/listen` ([E22]): an object whose `resultType`, if any,
 * is `"complete"`. Anything else (a `CreateTaskResult` to a request that cannot create tasks, an
 * unknown `resultType`) is an invalid response, never taken for an acknowledgement ([E24]) or for
 * a subscription's graceful end ([E36]).
 * @throws TaskProtocolError when it is not one.
 */
export function decodeAck(value: unknown, method: string, taskId?: string): void {
  if (!isObject(value)) throw malformed(method, 'result is not an object', taskId);
  onlyComplete(value.resultType, method, taskId);
}

/**
 * Checks a `resultType` that may only be `"complete"` (or absent: the core schema reads an absent
 * one as `"complete"`, and a null one is absent, D21).
 * @throws TaskProtocolError for any other.
 */
function onlyComplete(type: unknown, method: string, taskId?: string): void {
  if (type != null && type !== 'complete')
    throw malformed(method, `unexpected resultType ${JSON.stringify(type)?.slice(0, 32)}`, taskId);
}

/**
 * Decodes one `tools/list` page. `tools/list` cannot create a task: a `CreateTaskResult`, or any
 * `resultType` but `"complete"`, is an invalid response even when it carries a `tools` array
 * ([E24]), and its task id is never followed.
 * @throws TaskProtocolError when it is not a tool page.
 */
export function decodeExtToolPage(value: unknown): ToolPage {
  if (isObject(value)) onlyComplete(value.resultType, 'tools/list');
  return decodeToolPage(value);
}

/**
 * Decodes the answer to a `tools/call`: a task (`resultType: "task"`, a flat `CreateTaskResult`),
 * a request for input before the call can be answered (`"input_required"`, [E17]), or the plain
 * result (`"complete"`, or no `resultType`).
 * @throws TaskProtocolError for anything else, or a task offered to a request that did not opt in ([E2]).
 */
export function decodeExtStart(value: unknown, optedIn: boolean): StartReply {
  const method = 'tools/call';
  if (!isObject(value)) throw malformed(method, 'result is not an object');
  const type = value.resultType;
  if (type === 'task') {
    if (!optedIn) {
      // [E2]: an invalid response; the task it names (if usable) is one nobody asked for, to cancel.
      const taskId = usableTaskId(value.taskId);
      throw malformed(method, 'a task was returned to a request that did not declare the tasks extension', taskId);
    }
    return { kind: 'task', snapshot: { task: decodeTaskFields(value, method, TASK_FIELDS) } };
  }
  if (type === 'input_required') {
    // A null requestState is none (D21).
    const state = value.requestState === null ? undefined : value.requestState;
    if (state !== undefined && typeof state !== 'string') throw malformed(method, 'requestState is not a string');
    const input = decodeInputRequests(value.inputRequests, method);
    if (input.length === 0 && state === undefined)
      throw malformed(method, 'input_required with neither inputRequests nor requestState');
    return { kind: 'input', input, requestState: state };
  }
  onlyComplete(type, method);
  if (optedIn && !Array.isArray(value.content)) {
    // A tool result carries `content` (the schema's CallToolResult); a reply with neither that nor
    // `resultType: "task"` (a task without its resultType, the 2025-11-25 nested form, `{}`) is
    // no answer to the call: refused, as on 2025-11-25, never read as an empty success. A task id
    // it names is one the server may have created and nobody tracks: it is cancelled.
    const nested = isObject(value.task) ? value.task.taskId : undefined;
    const taskId = usableTaskId(value.taskId) ?? usableTaskId(nested);
    throw malformed(method, 'the reply is neither a task (resultType "task") nor a tool result (content)', taskId);
  }
  return { kind: 'immediate', result: toolResult(value, method) };
}
