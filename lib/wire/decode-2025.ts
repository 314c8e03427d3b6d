/**
 * Explicit, lenient decoders for the MCP 2025-11-25 task messages. They accept what real servers
 * send (D1-D4: missing `ttl`, no `pollInterval`, ids with colons, whole-second timestamps), clamp
 * what is merely odd, and throw {@link TaskProtocolError} for what is truly malformed. They never
 * throw anything else and never return a value that breaks the public types.
 */
import { TaskProtocolError } from '../errors.js';
import type { CallToolResult, Task, TaskStatus } from '../types.js';
import type { StartOutcome, TaskPage, TaskSupport, ToolPage } from './wire.js';

/** `_meta` key that ties a message to a task ([R31], [V19]). */
export const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';
/** `_meta` key of the optional model hint on `CreateTaskResult` ([R39]). */
export const IMMEDIATE_RESPONSE_KEY = 'io.modelcontextprotocol/model-immediate-response';

/** Longest `statusMessage` kept; longer ones are cut and end in an ellipsis. */
export const MAX_STATUS_MESSAGE_LENGTH = 16_384;
/** Longest task id accepted. */
export const MAX_TASK_ID_LENGTH = 1_024;
/** Largest `ttl` / `pollInterval` taken at face value (about 68 years of ms, the timer limit is separate). */
const MAX_DURATION = Number.MAX_SAFE_INTEGER;

const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
]);
const TASK_SUPPORT: ReadonlySet<string> = new Set<TaskSupport>(['forbidden', 'optional', 'required']);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(method: string, detail: string, taskId?: string): TaskProtocolError {
  return new TaskProtocolError(`Malformed ${method} from server: ${detail}`, { method, taskId });
}

/** A non-negative finite duration in ms, from a number or a numeric string; otherwise `undefined`. */
function duration(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return undefined;
  return Math.min(n, MAX_DURATION);
}

function clampMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.length > MAX_STATUS_MESSAGE_LENGTH ? `${value.slice(0, MAX_STATUS_MESSAGE_LENGTH - 1)}…` : value;
}

/**
 * Decodes a wire `Task` (from `CreateTaskResult.task`, `tasks/get`, `tasks/cancel`, `tasks/list`
 * or `notifications/tasks/status`).
 * @throws TaskProtocolError when `taskId` or `status` is missing or unusable.
 */
export function decodeTask(value: unknown, method: string): Task {
  if (!isObject(value)) throw malformed(method, 'task is not an object');
  const { taskId, status } = value;
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > MAX_TASK_ID_LENGTH) {
    throw malformed(method, 'taskId is missing or not a usable string');
  }
  if (typeof status !== 'string' || !STATUSES.has(status)) {
    throw malformed(method, `unknown status ${JSON.stringify(status)?.slice(0, 64)}`, taskId);
  }
  const statusMessage = clampMessage(value.statusMessage);
  const pollInterval = duration(value.pollInterval);
  const task: {
    -readonly [K in keyof Task]: Task[K];
  } = {
    taskId,
    status: status as TaskStatus,
    createdAt: typeof value.createdAt === 'string' ? value.createdAt : '',
    lastUpdatedAt: typeof value.lastUpdatedAt === 'string' ? value.lastUpdatedAt : '',
    // D1: a missing ttl (Python SDK) or a non-numeric one is reported as unknown/unlimited.
    ttl: duration(value.ttl) ?? null,
  };
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  if (pollInterval !== undefined) task.pollInterval = pollInterval;
  return task;
}

/**
 * Normalises a `CallToolResult`: `content` defaults to an empty array, a non-boolean `isError` is
 * dropped. Other keys pass through unchanged.
 * @throws TaskProtocolError when the value is not an object or `content` is not an array.
 */
export function decodeCallToolResult(value: unknown, method: string, taskId?: string): CallToolResult {
  if (!isObject(value)) throw malformed(method, 'result is not an object', taskId);
  const { content, isError } = value;
  if (content !== undefined && !Array.isArray(content)) throw malformed(method, 'content is not an array', taskId);
  const result: Json = { ...value, content: content ?? [] };
  if (isError !== undefined && typeof isError !== 'boolean') delete result.isError;
  return result as CallToolResult;
}

/**
 * Decodes the answer to a (possibly task-augmented) `tools/call`. A reply with `task` is a
 * `CreateTaskResult`; a reply without it is a plain result ([V1], D16), which must then carry
 * `content` when a task was asked for (an empty reply is neither).
 * @throws TaskProtocolError when `task` is present but malformed, or the reply is neither.
 */
export function decodeStart(value: unknown, askedForTask: boolean): StartOutcome {
  const method = 'tools/call';
  if (!isObject(value)) throw malformed(method, 'result is not an object');
  if (value.task === undefined) {
    if (askedForTask && !Array.isArray(value.content)) throw malformed(method, 'the reply has neither task nor content');
    return { kind: 'immediate', result: decodeCallToolResult(value, method) };
  }
  const task = decodeTask(value.task, method);
  const meta = value._meta;
  const hint = isObject(meta) ? meta[IMMEDIATE_RESPONSE_KEY] : undefined;
  return typeof hint === 'string' ? { kind: 'task', task, immediateResponse: hint } : { kind: 'task', task };
}

/**
 * Decodes a `tasks/result` payload for `taskId`. The related-task `_meta` is not required ([A9]),
 * but when present it must name this task (`tagged` tells whether it was there).
 * @throws TaskProtocolError for a payload that names another task or is not a result object.
 */
export function decodeTaskPayload(value: unknown, taskId: string): { result: CallToolResult; tagged: boolean } {
  const method = 'tasks/result';
  let tagged = false;
  if (isObject(value) && isObject(value._meta)) {
    const related = value._meta[RELATED_TASK_KEY];
    if (isObject(related) && typeof related.taskId === 'string') {
      if (related.taskId !== taskId) throw malformed(method, 'result belongs to another task', taskId);
      tagged = true;
    }
  }
  return { result: decodeCallToolResult(value, method, taskId), tagged };
}

/**
 * Decodes one `tasks/list` page. Malformed entries are skipped and reported through `onSkip`; an
 * empty-string cursor ends the listing (D13).
 * @throws TaskProtocolError when `tasks` is not an array.
 */
export function decodeTaskPage(value: unknown, onSkip: (error: TaskProtocolError) => void): TaskPage {
  const method = 'tasks/list';
  if (!isObject(value) || !Array.isArray(value.tasks)) throw malformed(method, 'tasks is not an array');
  const tasks: Task[] = [];
  for (const entry of value.tasks) {
    try {
      tasks.push(decodeTask(entry, method));
    } catch (error) {
      onSkip(error as TaskProtocolError);
    }
  }
  const cursor = value.nextCursor;
  return typeof cursor === 'string' && cursor !== '' ? { tasks, nextCursor: cursor } : { tasks };
}

/**
 * Decodes one `tools/list` page down to names and `execution.taskSupport` (absent or unknown
 * values mean `forbidden`, [R7]).
 * @throws TaskProtocolError when `tools` is not an array.
 */
export function decodeToolPage(value: unknown): ToolPage {
  if (!isObject(value) || !Array.isArray(value.tools)) throw malformed('tools/list', 'tools is not an array');
  const tools: Array<{ name: string; taskSupport: TaskSupport }> = [];
  for (const tool of value.tools) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    const support = isObject(tool.execution) ? tool.execution.taskSupport : undefined;
    tools.push({
      name: tool.name,
      taskSupport: typeof support === 'string' && TASK_SUPPORT.has(support) ? (support as TaskSupport) : 'forbidden',
    });
  }
  const cursor = value.nextCursor;
  return typeof cursor === 'string' && cursor !== '' ? { tools, nextCursor: cursor } : { tools };
}

/** The related task id in a message's `params._meta`, if any. */
export function relatedTaskId(params: unknown): string | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  const related = params._meta[RELATED_TASK_KEY];
  return isObject(related) && typeof related.taskId === 'string' ? related.taskId : undefined;
}
