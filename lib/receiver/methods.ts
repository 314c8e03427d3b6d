/**
 * The `tasks/*` requests a receiver serves, for the tasks of its own connection only:
 * - `tasks/get`: the flat task snapshot ([V9], [V10]);
 * - `tasks/result`: blocks until the task is terminal ([V16]), then answers exactly what the
 *   request would have ([V15], [V17], [V18]), tagged with the task ([V19]); at most
 *   `maxResultWaiters` wait on one task, a further one is refused at once (§6);
 * - `tasks/list`: pages in creation order with opaque, unforgeable cursors ([V22], [R23]);
 * - `tasks/cancel`: moves a running task to `cancelled` before answering ([V24]); a terminal one
 *   is refused ([V23]).
 * Unknown (never created, expired, deleted) ids and cursors are -32602 ([V26]); a null cursor is
 * none, the first page (D21: peers whose JSON writer keeps absent fields). The `taskId`
 * param is the only thing read, never a related-task `_meta` ([R33]), and no answer but
 * `tasks/result`'s carries one ([V20]).
 */
import type { InboundRequest, JsonObject } from '../port/port.js';
import { isTerminalStatus } from '../types.js';
import type { Cursors } from './cursor.js';
import { snapshotOf, type ReceiverStore, type ReceiverTask } from './store.js';
import { INTERNAL_ERROR, INVALID_PARAMS, rpcFailure } from './types.js';
import { isObject } from '../util/json.js';

/** The `_meta` key that ties a message to a task. */
export const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/** What the methods need from their session. */
export interface MethodHost {
  readonly store: ReceiverStore;
  readonly cursors: Cursors;
  readonly pollIntervalMs: number;
  readonly pageSize: number;
  /** Most `tasks/result` requests waiting on one running task. */
  readonly maxResultWaiters: number;
  /** Cancels a running task (status, signal, notification, events). */
  cancel(task: ReceiverTask): void;
}

const NOT_FOUND =
  'Task not found: no such task on this connection (never created, or deleted when its ttl elapsed or to make room)';

/** The task a request names, or a -32602. */
function find(host: MethodHost, params: JsonObject): ReceiverTask {
  if (typeof params.taskId !== 'string') throw rpcFailure(INVALID_PARAMS, 'taskId must be a string');
  const task = host.store.get(params.taskId);
  if (task === undefined) throw rpcFailure(INVALID_PARAMS, NOT_FOUND);
  return task;
}

/** `tasks/get`. */
export function getTask(host: MethodHost, params: JsonObject): JsonObject {
  const task = find(host, params);
  task.polls += 1;
  return { ...snapshotOf(task, host.pollIntervalMs) };
}

/** What `tasks/result` answers for a terminal task. */
function payload(task: ReceiverTask): JsonObject {
  const ended = task.payload;
  if (ended === undefined) {
    // [A2]: a cancelled request has no result; answer with an error, as SDK receivers do.
    const why = task.statusMessage === undefined ? '' : `: ${task.statusMessage}`;
    throw rpcFailure(INTERNAL_ERROR, `The task was cancelled${why}`);
  }
  if (!ended.ok) throw Object.assign(new Error(ended.error.message), ended.error);
  const meta = isObject(ended.result._meta) ? ended.result._meta : {};
  return { ...ended.result, _meta: { ...meta, [RELATED_TASK_KEY]: { taskId: task.taskId } } };
}

/**
 * `tasks/result`. While the task runs, the answer waits for it; a request the server gives up on
 * (its `signal`) stops waiting, and a task deleted meanwhile while still running (its ttl
 * elapsed) answers -32602. Each waiting request holds memory here and in the port until then, so
 * past `maxResultWaiters` on one task a further one is refused at once with -32603, like a task
 * past `maxTasks` (§6: receivers SHOULD rate-limit task operations against denial of service).
 * While a final answer is handed to the transport, and once the transport took one, the task may
 * make room for a new one (over Streamable HTTP the server may read the answer and ask its next
 * question before the POST that carried it returns; such a task goes after every one whose answer
 * was sent, see `ReceiverStore`). An answer the transport refuses undoes only itself: one it took
 * still delivered the result ([V15]).
 */
export async function getResult(host: MethodHost, request: InboundRequest): Promise<JsonObject> {
  const { params, signal } = request;
  const task = find(host, params);
  if (!isTerminalStatus(task.status)) {
    if (task.waiters.size >= host.maxResultWaiters) {
      throw rpcFailure(
        INTERNAL_ERROR,
        `Too many tasks/result requests waiting on this task: all ${host.maxResultWaiters} allowed are still waiting; retry once one is answered, or poll tasks/get`,
      );
    }
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        task.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      task.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
    // Still running: the server gave up waiting, or the ttl elapsed and the task is gone ([V11]).
    if (!isTerminalStatus(task.status)) throw rpcFailure(INVALID_PARAMS, NOT_FOUND);
  }
  task.handedOff += 1;
  request.afterReply((sent) => {
    task.handedOff -= 1;
    if (sent) task.delivered = true;
  });
  return payload(task);
}

/** No cursor: absent, or null (D21: a peer that writes absent fields as null asks for the first page). */
function noCursor(params: JsonObject): boolean {
  return params.cursor === undefined || params.cursor === null;
}

/** `tasks/list`. A cursor of another type, or one never issued here, is -32602 ([R23], [V26]). */
export function listTasks(host: MethodHost, params: JsonObject): JsonObject {
  const cursor = params.cursor;
  let after = -1;
  if (!noCursor(params)) {
    const opened = typeof cursor === 'string' ? host.cursors.open(cursor) : undefined;
    if (opened === undefined) throw rpcFailure(INVALID_PARAMS, 'Invalid cursor: it was not issued on this connection');
    after = opened;
  }
  const page = host.store.page(after, host.pageSize);
  const tasks = page.tasks.map((task) => snapshotOf(task, host.pollIntervalMs));
  const last = page.tasks.at(-1);
  return page.more && last !== undefined ? { tasks, nextCursor: host.cursors.issue(last.seq) } : { tasks };
}

/** `tasks/cancel`. */
export function cancelTask(host: MethodHost, params: JsonObject): JsonObject {
  const task = find(host, params);
  if (isTerminalStatus(task.status)) {
    throw rpcFailure(INVALID_PARAMS, `Cannot cancel task: already in terminal status '${task.status}'`);
  }
  host.cancel(task);
  return { ...snapshotOf(task, host.pollIntervalMs) };
}

/**
 * What a connection whose receiver stopped serving answers (it still declares `tasks`, [R5]):
 * every task was deleted, so any `taskId` is -32602 ([V26]) and `tasks/list` is empty (a cursor,
 * issued before, is -32602 too). Throws the -32602.
 */
export function answerStopped(method: string, params: JsonObject): JsonObject {
  if (method === 'tasks/list') {
    if (noCursor(params)) return { tasks: [] };
    throw rpcFailure(INVALID_PARAMS, 'Invalid cursor: this client stopped serving receiver tasks on this connection');
  }
  if (typeof params.taskId !== 'string') throw rpcFailure(INVALID_PARAMS, 'taskId must be a string');
  throw rpcFailure(INVALID_PARAMS, STOPPED);
}

const STOPPED =
  'Task not found: this client stopped serving receiver tasks on this connection and deleted every task it held';
