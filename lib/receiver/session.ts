/**
 * The receiver on one connection (one session port): it answers a task-augmented
 * `elicitation/create` or `sampling/createMessage` at once with a `CreateTaskResult` ([V14]) and
 * runs the callback in the background, serves `tasks/*` for the tasks of this connection only
 * (§6: the connection is the requestor's context), sends `notifications/tasks/status` on every
 * status change ([V21]), and frees everything when serving stops or the connection closes.
 *
 * A plain request (no `params.task`) is never taken here: it goes on to the side-channel input
 * path, as for a client that serves no tasks ([V1]).
 */
import type { InputContext } from '../api/index.js';
import { TaskError } from '../errors.js';
import type { Scheduler } from '../util/scheduler.js';
import type { InboundRequest, JsonObject, RequestTap, SessionPort } from '../port/port.js';
import { isTerminalStatus, type Task, type TaskStatus } from '../types.js';
import { onAbort } from '../util/abort.js';
import { servedTaskMethods, type TaskMethod } from './capabilities.js';
import { Cursors } from './cursor.js';
import { emitCreated, emitEnding, emitStatus, endingError, type Ending } from './lifecycle.js';
import { RELATED_TASK_KEY, cancelTask, getResult, getTask, listTasks, type MethodHost } from './methods.js';
import { runCallback } from './run.js';
import { messageOf } from '../util/text.js';
import { ReceiverStore, snapshotOf, type ReceiverTask } from './store.js';
import { grantedTtl } from './options.js';
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  METHOD_OF,
  rpcFailure,
  type ReceiverConfig,
  type ReceiverHost,
  type ReceiverKind,
} from './types.js';
import { isObject } from '../util/json.js';
import { requestRefusal } from '../util/request-shape.js';

/** The related task a request names in its `_meta`, if any ([V7]). */
function relatedTaskOf(params: JsonObject): string | undefined {
  const meta = isObject(params._meta) ? params._meta : undefined;
  const related = isObject(meta?.[RELATED_TASK_KEY]) ? meta[RELATED_TASK_KEY] : undefined;
  return typeof related?.taskId === 'string' ? related.taskId : undefined;
}

/** A synchronous handler's answer (or throw) as a tap's promise. */
export function answerNow(run: () => JsonObject): Promise<JsonObject> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Resolves (with `undefined`) when `signal` aborts; `off` stops listening. */
function whenAborted(signal: AbortSignal): { readonly aborted: Promise<undefined>; off(): void } {
  let off = (): void => {};
  const aborted = new Promise<undefined>((resolve) => {
    off = onAbort(signal, () => resolve(undefined));
  });
  return { aborted, off: () => off() };
}

/** The receiver tasks of one connection. */
export class ReceiverSession implements MethodHost {
  readonly store: ReceiverStore;
  readonly cursors = new Cursors();
  readonly pollIntervalMs: number;
  readonly pageSize: number;
  readonly maxResultWaiters: number;
  private readonly offs: Array<() => void> = [];
  private isClosed = false;

  constructor(
    readonly port: SessionPort,
    private readonly config: ReceiverConfig,
    private readonly host: ReceiverHost,
    scheduler: Scheduler,
    private readonly now: () => number,
  ) {
    this.pollIntervalMs = config.pollIntervalMs;
    this.pageSize = config.pageSize;
    this.maxResultWaiters = config.maxResultWaiters;
    this.store = new ReceiverStore(scheduler, now, config.maxTasks, (task) => this.expired(task));
  }

  /** True once this session stopped serving. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Starts serving on the port. */
  start(): void {
    for (const kind of ['elicitation', 'sampling'] as const) {
      if (!this.serves(kind)) continue;
      this.offs.push(
        this.port.onRequest(METHOD_OF[kind], (request) =>
          this.claims(kind, request.params) ? this.create(kind, request) : undefined,
        ),
      );
    }
    const taps: Readonly<Record<TaskMethod, RequestTap>> = {
      'tasks/get': (request) => answerNow(() => getTask(this, request.params)),
      'tasks/result': (request) => getResult(this, request),
      'tasks/list': (request) => answerNow(() => listTasks(this, request.params)),
      'tasks/cancel': (request) => answerNow(() => cancelTask(this, request.params)),
    };
    for (const method of servedTaskMethods(this.port.clientCapabilities()))
      this.offs.push(this.port.onRequest(method, taps[method]));
    this.offs.push(this.port.onClose(() => this.close(false)));
  }

  /** Whether a callback serves `kind` here. */
  serves(kind: ReceiverKind): boolean {
    return (kind === 'elicitation' ? this.config.elicitation : this.config.sampling) !== undefined;
  }

  /** Whether this session takes the request: a task-augmented one of a kind it serves. */
  claims(kind: ReceiverKind, params: JsonObject): boolean {
    return !this.isClosed && this.serves(kind) && params.task !== undefined && params.task !== null;
  }

  /** Snapshots of every task held, oldest first. */
  snapshots(): Task[] {
    return this.store.all().map((task) => snapshotOf(task, this.pollIntervalMs));
  }

  /** The retention to grant for a requested `task` ([V10]), or a -32602 for a malformed one. */
  private grantTtl(task: unknown): number {
    if (!isObject(task)) throw rpcFailure(INVALID_PARAMS, 'params.task must be an object');
    const requested = task.ttl;
    // None asked: the host's own `ttlMs` (already capped), as it chose it.
    if (requested === undefined || requested === null) return this.config.ttlMs;
    if (typeof requested !== 'number' || !Number.isFinite(requested) || requested < 0) {
      throw rpcFailure(INVALID_PARAMS, 'task.ttl must be a number of milliseconds >= 0');
    }
    return grantedTtl(requested, this.config);
  }

  /**
   * Creates a task for a task-augmented request and answers with its `CreateTaskResult` ([V14]);
   * the callback starts in the microtask the transport took that answer, so nothing about the
   * task reaches the server before it. An answer that never reached the transport withdraws the
   * task instead ({@link ReceiverSession.withdraw}): its callback never runs.
   */
  private create(kind: ReceiverKind, request: InboundRequest): Promise<JsonObject> {
    const params = request.params;
    let ttl: number;
    try {
      ttl = this.grantTtl(params.task);
    } catch (error) {
      return Promise.reject(error);
    }
    // [V26]: a request the callback could not be given as typed, or an elicitation in a mode the
    // client did not declare, is refused before any task exists, as the SDK client refuses it (-32602).
    const refusal = requestRefusal(kind, params, this.port.clientCapabilities());
    if (refusal !== undefined) return Promise.reject(rpcFailure(INVALID_PARAMS, refusal));
    const relatedTaskId = relatedTaskOf(params);
    const task = this.store.create({ kind, method: METHOD_OF[kind], relatedTaskId, ttl });
    if (task === undefined) {
      return Promise.reject(
        rpcFailure(
          INTERNAL_ERROR,
          `Too many receiver tasks: all ${this.config.maxTasks} held on this connection are still running or hold a result the server has not fetched with tasks/result; retry once one is fetched, cancelled or expired`,
        ),
      );
    }
    // [V5]: the answer is the task as created (`working`), taken before any listener runs (one
    // that closes the receiver must not turn it into `cancelled`).
    const result: JsonObject = { task: snapshotOf(task, this.pollIntervalMs) };
    // [R31]: a response to a request that belongs to a task names that task.
    if (relatedTaskId !== undefined) result._meta = { [RELATED_TASK_KEY]: { taskId: relatedTaskId } };
    // `created`, then `status` for the first snapshot, as for the client's own tasks.
    emitCreated(this.host, task, this.now());
    emitStatus(this.host, task, this.now(), this.pollIntervalMs);
    // The call that owns the task, and the callback that answers it, as they are now: the call may
    // settle before the transport took the answer, and its question must not go to another callback.
    const route = (): (() => void) => {
      const owner = this.host.owner(relatedTaskId);
      const callback =
        this.host.callback(kind, relatedTaskId) ??
        (kind === 'elicitation' ? this.config.elicitation : this.config.sampling);
      return () => void this.run(task, params, owner, callback).catch((error: unknown) => this.crashed(task, error));
    };
    // [V7]: the request may overtake the CreateTaskResult of the task it belongs to: it waits for
    // that task to be tracked (bounded), as the client's own input does, so that the owning call's
    // callback answers it and its end cancels it. It is routed when the wait ends, not when the
    // transport took our answer: a call that ends in between is still its owner (`run` then
    // cancels the task), and its question never falls through to another callback.
    const early = relatedTaskId === undefined ? undefined : this.host.whenTracked(relatedTaskId);
    const start = early === undefined ? route() : undefined;
    // `undefined`: its call was given up and its task is being cancelled, no callback is asked.
    const routed = early
      ?.then((verdict) => (verdict === 'drop' ? undefined : route()))
      .catch((error: unknown) => () => this.crashed(task, error));
    request.afterReply((sent) => {
      if (!sent) return this.withdraw(task, request.signal.aborted);
      this.announce(task);
      if (start !== undefined) return start();
      void routed!.then((go) => (go === undefined ? this.abandon(task) : go()));
    });
    return Promise.resolve(result);
  }

  /**
   * The task's `CreateTaskResult` was not sent, and its callback never runs: the task ends
   * `cancelled`. [V14]: a server that cancelled the request first never gets the answer, so it
   * cannot know the task: no notification, and the task is deleted at once. An answer the
   * transport refused may still have reached the server (an HTTP POST that failed after the server
   * read it): the server is told the task was cancelled, and the task stays, answering for itself,
   * until it is evicted (cancelled tasks go first) or its ttl passes.
   */
  private withdraw(task: ReceiverTask, cancelledByServer: boolean): void {
    // A refused answer may still have reached the server: from now on it may hear of the task.
    if (!cancelledByServer) this.announce(task);
    if (!this.holds(task)) return;
    const why = cancelledByServer
      ? 'the server cancelled the request before its CreateTaskResult was sent'
      : 'its CreateTaskResult could not be sent';
    this.end(task, 'cancelled', `Withdrawn: ${why}`, { kind: 'withdrawn', why }, !cancelledByServer);
    if (cancelledByServer) this.store.delete(task);
  }

  /** Runs the callback and ends the task with what it answered; ignored once the task ended otherwise ([V6]). */
  private async run(
    task: ReceiverTask,
    params: JsonObject,
    owner: ReturnType<ReceiverHost['owner']>,
    callback: ReturnType<ReceiverHost['callback']>,
  ): Promise<void> {
    if (!this.holds(task) || isTerminalStatus(task.status)) return;
    // `callback` was routed when the request came, as a side-channel request of the same task
    // would be (docs/input.md, Routing): the owning call's callback first, so two tool tasks never
    // get each other's questions.
    if (callback === undefined) return;
    // The call that tracks the server's task ended (not detached), maybe while the answer was on
    // its way: its questions are no longer wanted, as side-channel ones are not (docs/input.md),
    // so the task is cancelled.
    if (owner?.signal.aborted === true) return this.abandon(task);
    const offOwner = owner === undefined ? undefined : onAbort(owner.signal, () => this.abandon(task));
    const context: InputContext = {
      taskId: task.relatedTaskId,
      handle: owner?.handle,
      toolName: owner?.handle.toolName,
      delivery: 'receiver-task',
      receiverTaskId: task.taskId,
      signal: task.controller.signal,
    };
    // A callback still running when the task ends otherwise is let go (nothing waits on it).
    const abort = whenAborted(task.controller.signal);
    const end = await Promise.race([runCallback(task.kind, () => callback(params as never, context)), abort.aborted]);
    abort.off();
    offOwner?.();
    if (end === undefined || !this.holds(task) || isTerminalStatus(task.status)) return;
    if (end.ok) this.end(task, 'completed', undefined, { kind: 'completed', result: end.result });
    else this.end(task, 'failed', end.error.message, { kind: 'failed', error: end.error });
  }

  /**
   * Last line of defence: `run` rejected (a bug, or a host hook that threw), which `runCallback`
   * never does for anything the callback did. The task still ends `failed` with a -32603, so
   * `tasks/result` answers ([V15], [V18]), and the client's `error` event says what happened.
   * Never throws: nothing escapes as an unhandled rejection.
   */
  private crashed(task: ReceiverTask, error: unknown): void {
    const message = `The receiver task for ${task.method} failed unexpectedly: ${messageOf(error)}`;
    try {
      if (this.holds(task) && !isTerminalStatus(task.status)) {
        this.end(task, 'failed', message, { kind: 'failed', error: { code: INTERNAL_ERROR, message } });
      }
    } catch {
      // Ending it threw too: the report below is all that is left.
    }
    try {
      this.host.report(new TaskError(message, { taskId: task.taskId, toolName: task.method, cause: error }));
    } catch {
      // The error channel itself failed: nothing more to do.
    }
  }

  /** True while the task is held here. */
  private holds(task: ReceiverTask): boolean {
    return !this.isClosed && this.store.get(task.taskId) === task;
  }

  /** The call that tracks the server's task this one belongs to ended: cancelled, the server told. */
  private abandon(task: ReceiverTask): void {
    if (this.holds(task)) this.end(task, 'cancelled', 'The client no longer needs the answer', { kind: 'abandoned' });
  }

  /** `tasks/cancel` on a running task ([V24]). */
  cancel(task: ReceiverTask): void {
    this.end(task, 'cancelled', 'The server cancelled the task', { kind: 'cancelled' });
  }

  /**
   * Moves a task to a terminal status, aborts its callback, tells the server (unless `tell` is
   * false: the server cannot hear it, or knows no such task) and emits the events.
   */
  private end(
    task: ReceiverTask,
    status: TaskStatus,
    statusMessage: string | undefined,
    ending: Ending,
    tell = true,
  ): void {
    const payload =
      ending.kind === 'completed'
        ? { ok: true as const, result: ending.result }
        : ending.kind === 'failed'
          ? { ok: false as const, error: ending.error }
          : undefined;
    if (!this.store.move(task, status, statusMessage, payload)) return;
    task.error = endingError(task, ending, this.pollIntervalMs);
    // The answer is no longer wanted: the callback's signal fires (not after it answered).
    if (ending.kind !== 'completed' && ending.kind !== 'failed') task.controller.abort(task.error);
    if (tell) this.notify(task);
    const now = this.now();
    emitStatus(this.host, task, now, this.pollIntervalMs);
    emitEnding(this.host, task, ending, now);
  }

  /**
   * Sends the task's snapshot as `notifications/tasks/status` ([V21]: without related-task `_meta`);
   * held until its `CreateTaskResult` was handed to the transport ({@link ReceiverSession.announce}):
   * a listener that stops serving while that answer is on its way must not tell the server of a
   * task it does not know yet ([V14]).
   */
  private notify(task: ReceiverTask): void {
    if (!task.announced) {
      task.untold = true;
      return;
    }
    if (this.port.closed) return;
    task.notifications += 1;
    this.port.notify('notifications/tasks/status', { ...snapshotOf(task, this.pollIntervalMs) });
  }

  /** The task's `CreateTaskResult` went out: a status notification held meanwhile goes now. */
  private announce(task: ReceiverTask): void {
    task.announced = true;
    if (!task.untold) return;
    task.untold = false;
    this.notify(task);
  }

  /** The ttl elapsed: the task is gone ([V11]); a running callback is abandoned. */
  private expired(task: ReceiverTask): void {
    for (const wake of [...task.waiters]) wake();
    if (isTerminalStatus(task.status)) return;
    task.error = endingError(task, { kind: 'expired' }, this.pollIntervalMs);
    task.settledAtMs = this.now();
    task.controller.abort(task.error);
    emitEnding(this.host, task, { kind: 'expired' }, this.now());
  }

  /**
   * Stops serving: every running task is cancelled (the server is told, when the connection is
   * still open; the `status` event fires either way), its callback's signal aborted, and every
   * task deleted. Idempotent.
   */
  close(tellServer = true): void {
    if (this.isClosed) return;
    // Without tellServer the connection is gone: no notification, but the events all the same.
    const why = tellServer ? 'The client stopped serving receiver tasks' : 'The connection closed';
    for (const task of this.store.all()) {
      if (!isTerminalStatus(task.status)) this.end(task, 'cancelled', why, { kind: 'closed' }, tellServer);
    }
    this.isClosed = true;
    for (const off of this.offs.splice(0)) off();
    this.store.clear();
  }
}
