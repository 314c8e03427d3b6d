/**
 * Explicit, lenient decoders for the MCP 2025-11-25 task messages. They accept what real servers
 * send (D1-D4: missing `ttl`, no `pollInterval`, ids with colons, whole-second timestamps), clamp
 * what is merely odd, and throw {@link TaskProtocolError} for what is truly malformed.
 */
import type { TaskProtocolError } from '../../errors.js';
import type { CallToolResult, Task } from '../../types.js';
import { decodeCallToolResult, decodeTaskFields, isObject, malformed } from '../decode.js';
import type { StartReply, TaskPage, TaskSupport, ToolPage } from '../wire.js';

const TASK_SUPPORT: ReadonlySet<string> = new Set<TaskSupport>(['forbidden', 'optional', 'required']);
/** The names of a task's duration fields on this wire. */
export const TASK_FIELDS = { ttl: 'ttl', pollInterval: 'pollInterval' } as const;

/** `_meta` key that ties a message to a task ([R31], [V19]). */
export const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';
/** `_meta` key of the optional model hint on `CreateTaskResult` ([R39]). */
export const IMMEDIATE_RESPONSE_KEY = 'io.modelcontextprotocol/model-immediate-response';

/**
 * Decodes a wire `Task` (from `CreateTaskResult.task`, `tasks/get`, `tasks/cancel`, `tasks/list`
 * or `notifications/tasks/status`).
 * @throws TaskProtocolError when `taskId` or `status` is missing or unusable.
 */
export function decodeTask(value: unknown, method: string): Task {
  return decodeTaskFields(value, method, TASK_FIELDS);
}

/**
 * Decodes the answer to a (possibly task-augmented) `tools/call`. A reply with `task` is a
 * `CreateTaskResult`; a reply without it is a plain result ([V1], D16), which must then carry
 * `content` when a task was asked for (an empty reply is neither).
 * @throws TaskProtocolError when `task` is present but malformed, or the reply is neither.
 */
export function decodeStart(value: unknown, askedForTask: boolean): StartReply {
  const method = 'tools/call';
  if (!isObject(value)) throw malformed(method, 'result is not an object');
  // `task: null` is no task (D21: servers that write every absent field as null).
  if (value.task === undefined || value.task === null) {
    if (askedForTask && !Array.isArray(value.content))
      throw malformed(method, 'the reply has neither task nor content');
    const result = decodeCallToolResult(value, method);
    if (value.task === null) delete (result as Record<string, unknown>).task;
    return { kind: 'immediate', result };
  }
  const snapshot = { task: decodeTask(value.task, method) };
  const meta = value._meta;
  const hint = isObject(meta) ? meta[IMMEDIATE_RESPONSE_KEY] : undefined;
  return typeof hint === 'string' ? { kind: 'task', snapshot, immediateResponse: hint } : { kind: 'task', snapshot };
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
    if (related !== undefined && related !== null) {
      if (!isObject(related) || typeof related.taskId !== 'string')
        throw malformed(method, 'the related-task _meta has no taskId', taskId);
      if (related.taskId !== taskId) throw malformed(method, 'result belongs to another task', taskId);
      tagged = true;
    }
  }
  return { result: decodeCallToolResult(value, method, taskId), tagged };
}

/**
 * Decodes one `tasks/list` page. Malformed entries are skipped and reported through `onSkip`; an
 * empty-string cursor ends the listing (D13). `tasks: null` is an empty page: mcp-go sends its nil
 * slice that way when the session has no tasks (D13); a `nextCursor` beside it is still followed,
 * like that of any empty page.
 * @throws TaskProtocolError when `tasks` is neither an array nor `null`, or `nextCursor` is not a string.
 */
export function decodeTaskPage(value: unknown, onSkip: (error: TaskProtocolError) => void): TaskPage {
  const method = 'tasks/list';
  if (!isObject(value)) throw malformed(method, 'result is not an object');
  const entries = value.tasks === null ? [] : value.tasks;
  if (!Array.isArray(entries)) throw malformed(method, 'tasks is not an array');
  // Before the entries: a page refused for its cursor reports none of them as skipped.
  const cursor = cursorOf(value, method);
  const tasks: Task[] = [];
  for (const entry of entries) {
    try {
      tasks.push(decodeTask(entry, method));
    } catch (error) {
      onSkip(error as TaskProtocolError);
    }
  }
  return cursor === undefined ? { tasks } : { tasks, nextCursor: cursor };
}

/**
 * A page's `nextCursor`: a non-empty string, or none (absent, `null` or `''`, D13). A cursor of
 * another type is malformed: it cannot be passed back unchanged as the string a cursor is ([R23]),
 * and ending the listing there would drop the later pages unseen.
 * @throws TaskProtocolError for a `nextCursor` that is not a string.
 */
function cursorOf(value: Record<string, unknown>, method: string): string | undefined {
  const cursor = value.nextCursor;
  if (typeof cursor === 'string') return cursor === '' ? undefined : cursor;
  if (cursor === undefined || cursor === null) return undefined;
  throw malformed(method, `nextCursor is not a string (${typeof cursor})`);
}

/**
 * Decodes one `tools/list` page: names, `execution.taskSupport` (absent or unknown values mean
 * `forbidden`, [R7]), and what a host hands on (title, description, schemas, annotations; a
 * schema or annotations that is not an object is left out).
 * @throws TaskProtocolError when `tools` is not an array, or `nextCursor` is not a string.
 */
export function decodeToolPage(value: unknown): ToolPage {
  if (!isObject(value) || !Array.isArray(value.tools)) throw malformed('tools/list', 'tools is not an array');
  const tools: ToolPage['tools'][number][] = [];
  for (const tool of value.tools) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    const support = isObject(tool.execution) ? tool.execution.taskSupport : undefined;
    const annotations = isObject(tool.annotations) ? tool.annotations : {};
    const title =
      typeof tool.title === 'string'
        ? tool.title
        : typeof annotations.title === 'string'
          ? annotations.title
          : undefined;
    tools.push({
      name: tool.name,
      taskSupport: typeof support === 'string' && TASK_SUPPORT.has(support) ? (support as TaskSupport) : 'forbidden',
      ...(title === undefined ? {} : { title }),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      ...(isObject(tool.inputSchema) ? { inputSchema: tool.inputSchema } : {}),
      ...(isObject(tool.outputSchema) ? { outputSchema: tool.outputSchema } : {}),
      ...(isObject(tool.annotations) ? { annotations: tool.annotations } : {}),
    });
  }
  const cursor = cursorOf(value, 'tools/list');
  return cursor === undefined ? { tools } : { tools, nextCursor: cursor };
}

/** The related task id in a message's `params._meta`, if any. */
export function relatedTaskId(params: unknown): string | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  const related = params._meta[RELATED_TASK_KEY];
  return isObject(related) && typeof related.taskId === 'string' ? related.taskId : undefined;
}
