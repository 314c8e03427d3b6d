/**
 * The receiver tasks of one connection: created in order, each deleted `ttl` after its creation
 * whatever its status ([V11]). Before its ttl a task is deleted only to make room when `maxTasks`
 * is reached, and only one whose result the server can no longer need: a cancelled one ([V25]),
 * else a finished one whose result `tasks/result` already delivered ([V15]), one whose answer is
 * still on its way last.
 * Expiry timers sit on the client's scheduler (weak: they never hold the process open; a ttl
 * beyond what a Node timer can hold is re-armed by the scheduler, never handed over unclamped).
 */
import { randomUUID } from '../util/random.js';
import { MAX_STATUS_MESSAGE_LENGTH, clip } from '../util/text.js';
import type { TaskError } from '../errors.js';
import type { Scheduler, Timer } from '../util/scheduler.js';
import type { JsonObject } from '../port/port.js';
import { isTerminalStatus, type JsonRpcErrorInfo, type Task, type TaskStatus } from '../types.js';
import type { ReceiverKind } from './types.js';

/** A receiver task's final payload: the callback's result, or the JSON-RPC error its request answers ([V17]). */
export type ReceiverPayload =
  { readonly ok: true; readonly result: JsonObject } | { readonly ok: false; readonly error: JsonRpcErrorInfo };

/** One receiver task. */
export interface ReceiverTask {
  /** Unguessable ([V4], §6 "cryptographically secure task IDs"). */
  readonly taskId: string;
  /** Creation order on this connection (list order and cursor position). */
  readonly seq: number;
  readonly kind: ReceiverKind;
  readonly method: string;
  /** The server's own task the request belongs to, if it said so ([V7]). */
  readonly relatedTaskId: string | undefined;
  readonly createdAtMs: number;
  readonly createdAt: string;
  /** The retention granted, from creation ([V10]). */
  readonly ttl: number;
  status: TaskStatus;
  statusMessage: string | undefined;
  lastUpdatedAt: string;
  /** Local time the task reached a terminal status. */
  settledAtMs: number | undefined;
  /** Set with the terminal status. */
  payload: ReceiverPayload | undefined;
  /** True once the transport took a `tasks/result` answer with the final result (its send resolved). */
  delivered: boolean;
  /** `tasks/result` answers with the final result handed to the transport, their send not settled yet. */
  handedOff: number;
  /**
   * True once its `CreateTaskResult` was handed to the transport (or may have reached the server):
   * before that, nothing else about the task may reach the server ([V14]).
   */
  announced: boolean;
  /** A status notification is owed, held until the task is {@link ReceiverTask.announced}. */
  untold: boolean;
  /** The error of the lifecycle event it ended with, if any (for metrics). */
  error: TaskError | undefined;
  /** Aborted when the callback's answer is no longer wanted (cancel, expiry, close). */
  readonly controller: AbortController;
  expiry: Timer | undefined;
  /** `tasks/result` requests waiting for the terminal status ([V16]). */
  readonly waiters: Set<() => void>;
  /** `tasks/get` requests served. */
  polls: number;
  /** `notifications/tasks/status` sent. */
  notifications: number;
}

/** What a new task is made of. */
export interface NewTask {
  readonly kind: ReceiverKind;
  readonly method: string;
  readonly relatedTaskId: string | undefined;
  readonly ttl: number;
}

/** The wire `Task` of a receiver task: flat, with `createdAt`, `lastUpdatedAt` and the granted `ttl` ([V9], [V10]). */
export function snapshotOf(task: ReceiverTask, pollIntervalMs: number): Task {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttl,
    pollInterval: pollIntervalMs,
  };
}

/** The tasks of one connection. */
export class ReceiverStore {
  private readonly tasks = new Map<string, ReceiverTask>();
  private seq = 0;
  private live = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly now: () => number,
    private readonly maxTasks: number,
    /** Called when a task's ttl elapsed, after it was deleted. */
    private readonly expired: (task: ReceiverTask) => void,
  ) {}

  /** Tasks held. */
  get size(): number {
    return this.tasks.size;
  }

  /** Tasks not yet terminal. */
  get running(): number {
    return this.live;
  }

  /**
   * Creates a `working` task ([V5]), making room first when `maxTasks` is reached (see
   * {@link ReceiverStore.evict}); `undefined` when no task held may be deleted.
   */
  create(init: NewTask): ReceiverTask | undefined {
    if (this.tasks.size >= this.maxTasks && !this.evict()) return undefined;
    const at = this.now();
    const iso = new Date(at).toISOString();
    const task: ReceiverTask = {
      taskId: randomUUID(),
      seq: this.seq++,
      kind: init.kind,
      method: init.method,
      relatedTaskId: init.relatedTaskId,
      createdAtMs: at,
      createdAt: iso,
      ttl: init.ttl,
      status: 'working',
      statusMessage: undefined,
      lastUpdatedAt: iso,
      settledAtMs: undefined,
      payload: undefined,
      delivered: false,
      handedOff: 0,
      announced: false,
      untold: false,
      error: undefined,
      controller: new AbortController(),
      expiry: undefined,
      waiters: new Set(),
      polls: 0,
      notifications: 0,
    };
    this.tasks.set(task.taskId, task);
    this.live += 1;
    task.expiry = this.scheduler.schedule(at + init.ttl, () => this.expire(task), true);
    return task;
  }

  /** The task with this id, if it is held. */
  get(taskId: unknown): ReceiverTask | undefined {
    return typeof taskId === 'string' ? this.tasks.get(taskId) : undefined;
  }

  /** Moves a task to `status`; a terminal status is final ([V5], [V6]). Returns false when it was already terminal. */
  move(task: ReceiverTask, status: TaskStatus, statusMessage: string | undefined, payload?: ReceiverPayload): boolean {
    if (isTerminalStatus(task.status)) return false;
    task.status = status;
    // Repeated in every snapshot, list page and notification of the task: a callback's error of
    // any length is cut, as the library cuts what it reads.
    task.statusMessage = statusMessage === undefined ? undefined : clip(statusMessage, MAX_STATUS_MESSAGE_LENGTH);
    task.lastUpdatedAt = new Date(this.now()).toISOString();
    if (isTerminalStatus(status)) {
      task.payload = payload;
      task.settledAtMs = this.now();
      this.live -= 1;
      const waiters = [...task.waiters];
      task.waiters.clear();
      for (const wake of waiters) wake();
    }
    return true;
  }

  /** Up to `size` tasks created after sequence number `after` (all with `-1`), and whether more follow. */
  page(after: number, size: number): { readonly tasks: ReceiverTask[]; readonly more: boolean } {
    const tasks: ReceiverTask[] = [];
    for (const task of this.tasks.values()) {
      if (task.seq <= after) continue;
      if (tasks.length === size) return { tasks, more: true };
      tasks.push(task);
    }
    return { tasks, more: false };
  }

  /** Every task, oldest first. */
  all(): ReceiverTask[] {
    return [...this.tasks.values()];
  }

  /** Deletes every task and cancels every timer (the tasks themselves are left as they are). */
  clear(): void {
    for (const task of this.tasks.values()) this.scheduler.cancel(task.expiry);
    this.tasks.clear();
    this.live = 0;
  }

  /** Deletes a task before its ttl, without the expiry callback. */
  delete(task: ReceiverTask): void {
    if (this.tasks.get(task.taskId) !== task) return;
    this.tasks.delete(task.taskId);
    this.scheduler.cancel(task.expiry);
    if (!isTerminalStatus(task.status)) this.live -= 1;
  }

  private expire(task: ReceiverTask): void {
    if (this.tasks.get(task.taskId) !== task) return;
    this.delete(task);
    this.expired(task);
  }

  /**
   * Deletes the oldest cancelled task ([V25]: at any time), else the oldest finished task whose
   * result was delivered (the transport took a `tasks/result` answer), else the oldest whose answer
   * the transport has in hand, not yet sent (the server may have read it and ask again before the
   * POST that carries it returns; if that POST fails, the result is gone: [V15], [V17]); false when
   * there is none. A task still running, or whose result the server has not fetched, stays until
   * its ttl ([V10], [V11], [V15]).
   */
  private evict(): boolean {
    let delivered: ReceiverTask | undefined;
    let handedOff: ReceiverTask | undefined;
    for (const task of this.tasks.values()) {
      if (task.status === 'cancelled') {
        this.delete(task);
        return true;
      }
      if (task.delivered) delivered ??= task;
      else if (task.handedOff > 0) handedOff ??= task;
    }
    const gone = delivered ?? handedOff;
    if (gone !== undefined) this.delete(gone);
    return gone !== undefined;
  }
}
