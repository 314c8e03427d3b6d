/**
 * Decoding shared by every wire: lenient readers for the task fields every protocol form has,
 * clamps for what is merely odd, and {@link TaskProtocolError} for what is truly malformed. They
 * never throw anything else and never return a value that breaks the public types.
 */
import { TaskProtocolError } from '../errors.js';
import { scrub } from '../util/fingerprint.js';
import type { CallToolResult, Task, TaskStatus } from '../types.js';
import { isObject } from '../util/json.js';
import { MAX_STATUS_MESSAGE_LENGTH, clip } from '../util/text.js';
import type { ResultDecoder } from '../port/port.js';
import { OMITTED, type StartReply, type TaskPayload, type WireSnapshot } from './wire.js';

/**
 * Longest task id accepted (64 Ki characters). The spec sets no limit and lets ids be opaque
 * tokens (a signed or encrypted state, say), so the cap is generous; it only bounds what a hostile
 * server can make the library keep (every tracked task, every reference) and send back (every
 * `tasks/*` request, and on Streamable HTTP its `Mcp-Name` header).
 */
export const MAX_TASK_ID_LENGTH = 65_536;
/** Largest ttl / poll interval taken at face value (the timer limit is applied separately). */
const MAX_DURATION = Number.MAX_SAFE_INTEGER;

const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
]);

/** A JSON object. */
export type Json = Record<string, unknown>;

// The wires' JSON-shape check lives in lib/util/json.ts, shared by every layer.
export { isObject };

/** The protocol error for a malformed message. */
export function malformed(method: string, detail: string, taskId?: string): TaskProtocolError {
  return new TaskProtocolError(`Malformed ${method} from server: ${detail}`, { method, taskId });
}

/** A non-negative finite duration in ms, from a number or a numeric string; otherwise `undefined`. */
export function duration(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return undefined;
  return Math.min(n, MAX_DURATION);
}

function clampMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return clip(value, MAX_STATUS_MESSAGE_LENGTH);
}

/** `value` when it is a task id the library accepts: a non-empty string of at most {@link MAX_TASK_ID_LENGTH}. */
export function usableTaskId(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TASK_ID_LENGTH ? value : undefined;
}

/** The wire names of the two duration fields: 2025-11-25 `ttl`/`pollInterval`, the extension `ttlMs`/`pollIntervalMs`. */
export interface TaskFieldNames {
  readonly ttl: string;
  readonly pollInterval: string;
}

/**
 * Decodes a task object. A missing or unusable ttl becomes `null` (D1); an absent or unusable
 * poll interval is left out (D2); timestamps that are not strings become `''`.
 * @throws TaskProtocolError when `taskId` or `status` is missing or unusable.
 */
export function decodeTaskFields(value: unknown, method: string, names: TaskFieldNames): Task {
  if (!isObject(value)) throw malformed(method, 'task is not an object');
  const { status } = value;
  const taskId = usableTaskId(value.taskId);
  if (taskId === undefined) throw malformed(method, 'taskId is missing or not a usable string');
  if (typeof status !== 'string' || !STATUSES.has(status)) {
    // The server's text may repeat the task id (a secret): named by fingerprint, then cut.
    throw malformed(
      method,
      `unknown status ${scrub(JSON.stringify(status) ?? String(status), taskId).slice(0, 64)}`,
      taskId,
    );
  }
  const statusMessage = clampMessage(value.statusMessage);
  const pollInterval = duration(value[names.pollInterval]);
  const createdAt = typeof value.createdAt === 'string' ? value.createdAt : '';
  // A task that has not changed yet carries the same time twice: one string kept, not two.
  const lastUpdatedAt =
    value.lastUpdatedAt === createdAt ? createdAt : typeof value.lastUpdatedAt === 'string' ? value.lastUpdatedAt : '';
  const ttl = duration(value[names.ttl]) ?? null;
  const known = status as TaskStatus;
  // One literal per combination of the optional fields: each object is built with all its
  // fields at once, so they sit inside it (no second allocation for properties added later;
  // the latest snapshot of every tracked task is kept).
  if (pollInterval === undefined) {
    return statusMessage === undefined
      ? { taskId, status: known, createdAt, lastUpdatedAt, ttl }
      : { taskId, status: known, createdAt, lastUpdatedAt, ttl, statusMessage };
  }
  return statusMessage === undefined
    ? { taskId, status: known, createdAt, lastUpdatedAt, ttl, pollInterval }
    : { taskId, status: known, createdAt, lastUpdatedAt, ttl, statusMessage, pollInterval };
}

/**
 * The fields of a task that a status notification left out, as {@link OMITTED} bits (0 when it has
 * them all; a null counts as left out, except for the ttl, where null means unlimited). Some
 * servers send only `taskId`, `status` and a message: the engine keeps what it knew of the others
 * rather than the decoder's defaults (D20).
 */
export function omittedFields(value: Json, names: TaskFieldNames): number {
  let omitted = 0;
  if (value.createdAt === undefined || value.createdAt === null) omitted |= OMITTED.createdAt;
  if (value.lastUpdatedAt === undefined || value.lastUpdatedAt === null) omitted |= OMITTED.lastUpdatedAt;
  if (value[names.ttl] === undefined) omitted |= OMITTED.ttl;
  const pollInterval = value[names.pollInterval];
  if (pollInterval === undefined || pollInterval === null) omitted |= OMITTED.pollInterval;
  return omitted;
}

/**
 * Normalises a `CallToolResult`: `content` defaults to an empty array (absent or null), a null
 * `_meta` or `structuredContent` is dropped, entries of `content` that are not objects (`null`, a
 * string: no content block, nothing to read) are left out, an `isError` of "true" or "false" is
 * read as the boolean and any other non-boolean one is dropped, and with `withoutResultType` so is
 * `resultType` (the modern
 * era's framing, not part of the result). Other keys pass through unchanged. One copy is made.
 * @throws TaskProtocolError when the value is not an object or `content` is not an array.
 */
export function decodeCallToolResult(
  value: unknown,
  method: string,
  taskId?: string,
  withoutResultType = false,
): CallToolResult {
  if (!isObject(value)) throw malformed(method, 'result is not an object', taskId);
  const { content, isError } = value;
  // null is absent (D21), for `content` as for `_meta`.
  if (content !== undefined && content !== null && !Array.isArray(content))
    throw malformed(method, 'content is not an array', taskId);
  const blocks = content === undefined || content === null ? [] : blocksOf(content);
  let result: Json;
  if (withoutResultType && 'resultType' in value) {
    const { resultType: _framing, ...rest } = value;
    rest.content = blocks;
    result = rest;
  } else result = { ...value, content: blocks };
  // "true" and "false" (a writer that quotes every value, in any case), 1 and 0 (a writer of C-like
  // booleans, also quoted) say what they mean: a tool error read as a success would be the worse
  // mistake; any other non-boolean tells nothing.
  if (isError !== undefined && typeof isError !== 'boolean') {
    const flag = typeof isError === 'string' ? isError.trim().toLowerCase() : isError;
    if (flag === 'true' || flag === '1' || flag === 1) result.isError = true;
    else if (flag === 'false' || flag === '0' || flag === 0) result.isError = false;
    else delete result.isError;
  }
  if (value._meta === null) delete result._meta;
  if (value.structuredContent === null) delete result.structuredContent;
  return result as CallToolResult;
}

/** `content` itself, or a copy without the entries that are not objects (only then allocated). */
function blocksOf(content: readonly unknown[]): unknown[] {
  for (let i = 0; i < content.length; i++) if (!isObject(content[i])) return content.filter(isObject);
  return content as unknown[];
}

/**
 * `decode`, which also says which of its decoded values are a tool error (see
 * {@link ResultDecoder}): given to the port for the replies that may carry a tool result, so that
 * a request's watcher learns of an `isError` result without the engine knowing of watchers.
 * `decode` is a module-level decoder (one per reply kind), marked once.
 */
export function withToolError<T extends StartReply | TaskPayload | WireSnapshot>(
  decode: (value: unknown, context: string | undefined) => T,
): ResultDecoder<T> {
  return Object.assign(decode, { toolError: isToolError });
}

/**
 * True when a decoded reply is, or carries, a tool result with `isError: true`: a plain answer to
 * `tools/call`, a `tasks/result` payload, a snapshot with the final result inline ([E3]), or a
 * task created with its first snapshot carrying one.
 */
function isToolError(value: StartReply | TaskPayload | WireSnapshot): boolean {
  // Read by field: a reply with neither a snapshot, a payload nor a result (input, an error payload, a
  // snapshot without its result) is none.
  const reply = value as { snapshot?: WireSnapshot; payload?: TaskPayload; result?: { isError?: boolean } };
  return reply.snapshot
    ? isToolError(reply.snapshot)
    : reply.payload
      ? isToolError(reply.payload)
      : reply.result?.isError === true;
}
