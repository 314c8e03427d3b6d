/**
 * Typed lifecycle events with metrics. Registration is eventemitter3's; emitting goes through
 * {@link SafeEmitter.emit}, which runs every listener even when one throws and reports the throw
 * on the `error` event, so a listener can never break tracking.
 */
import { EventEmitter } from 'eventemitter3';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClosedError,
  TaskDetachedError,
  TaskError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskTimeoutError,
} from '../errors.js';
import type { TaskRecord } from '../engine/record.js';
import type { CallToolResult, Task, TaskStatus } from '../types.js';

/** How a tracked task ended for this client. */
export type TaskOutcomeKind =
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'aborted'
  | 'expired'
  | 'detached'
  | 'closed'
  | 'error';

/** Numbers about one task, carried by every lifecycle event. */
export interface TaskMetrics {
  /** The task id (a secret; the logger fingerprints it). */
  readonly taskId: string;
  /** The tool that was called. */
  readonly toolName: string;
  /** The latest status. */
  readonly status: TaskStatus;
  /** The latest status message, if any. */
  readonly statusMessage: string | undefined;
  /** Server-side creation time (ISO 8601). */
  readonly createdAt: string;
  /** Local time (ms since epoch) the call started. */
  readonly startedAt: number;
  /** Local time (ms since epoch) the task settled; `undefined` while it runs. */
  readonly completedAt: number | undefined;
  /** Local milliseconds from the call to settlement (or to now, while it runs). */
  readonly durationMs: number;
  /** `tasks/get` requests sent for this task. */
  readonly polls: number;
  /** `notifications/tasks/status` received for this task. */
  readonly notifications: number;
  /** Retried requests for this task. */
  readonly retries: number;
  /** The error the task settled with, if any. */
  readonly error: TaskError | undefined;
}

/** Progress reported by the server for a call's `progressToken` ([R35]). */
export interface TaskProgress {
  /** Progress so far (increases with each notification). */
  readonly progress: number;
  /** Total, when the server knows it. */
  readonly total?: number | undefined;
  /** A human-readable progress message, if any. */
  readonly message?: string | undefined;
}

/** Events of a {@link TaskClient}, with their listener arguments. */
export interface TaskClientEvents {
  /** A task was created on the server and is now tracked. */
  created: [metrics: TaskMetrics];
  /** A task's snapshot changed (every accepted change). */
  status: [metrics: TaskMetrics, task: Task];
  /** A task entered `input_required`: it waits for its user. */
  inputRequired: [metrics: TaskMetrics, task: Task];
  /** Progress for a task's `progressToken`. */
  progress: [metrics: TaskMetrics, progress: TaskProgress];
  /** A task completed; its result is in hand. */
  completed: [metrics: TaskMetrics & { readonly result: CallToolResult }];
  /** A task failed. */
  failed: [metrics: TaskMetrics & { readonly error: TaskFailedError }];
  /** A task was cancelled (by anyone). */
  cancelled: [metrics: TaskMetrics & { readonly error: TaskCancelledError }];
  /** A task's deadline passed. */
  timeout: [metrics: TaskMetrics & { readonly error: TaskTimeoutError }];
  /** The server dropped a task: its ttl elapsed (`TaskExpiredError`) or it vanished early (`TaskNotFoundError`). */
  expired: [metrics: TaskMetrics & { readonly error: TaskExpiredError | TaskNotFoundError }];
  /**
   * A task still running is close to the end of its ttl: the server may drop it at `expiresAt`
   * ([V11]). Time to extend, persist or give up.
   */
  expiring: [metrics: TaskMetrics, expiry: { readonly expiresAt: number; readonly remainingMs: number }];
  /** The connection to the server closed; tracking is paused until it comes back. */
  connectionLost: [];
  /** A new connection took over (`reconnect`); every unsettled task is read again. */
  connectionRestored: [];
  /** Any settlement, whatever the outcome (also aborted, detached, closed). */
  settled: [metrics: TaskMetrics & { readonly outcome: TaskOutcomeKind }];
  /** A library-internal problem that did not fail a task (a failed poll, a malformed message, a throwing listener). */
  error: [error: TaskError, metrics: TaskMetrics | undefined];
}

/** Events of one {@link TaskHandle}: the same shapes, for that task only. */
export type TaskHandleEvents = Pick<
  TaskClientEvents,
  | 'status'
  | 'inputRequired'
  | 'progress'
  | 'expiring'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'expired'
  | 'settled'
>;

type Listener<A extends unknown[]> = (...args: A) => void;

/**
 * eventemitter3 registration with isolated listeners. `emit` is not public API: only the library
 * emits.
 */
export class SafeEmitter<E extends { [K in keyof E]: unknown[] }> {
  private readonly emitter = new EventEmitter();
  private listeners = 0;
  /** `once` wrappers by event and original listener, so `off(original)` finds them. */
  private readonly wrappers = new Map<string, Map<unknown, Listener<unknown[]>>>();

  constructor(private readonly onListenerError: (error: TaskError) => void) {}

  /** Adds a listener. @returns a function that removes it. */
  on<K extends keyof E & string>(event: K, listener: Listener<E[K]>): () => void {
    this.emitter.on(event, listener as Listener<unknown[]>);
    this.listeners += 1;
    return () => this.off(event, listener);
  }

  /** Adds a listener that runs once. @returns a function that removes it. */
  once<K extends keyof E & string>(event: K, listener: Listener<E[K]>): () => void {
    const wrapped = ((...args: E[K]) => {
      this.off(event, listener);
      listener(...args);
    }) as Listener<E[K]>;
    let byListener = this.wrappers.get(event);
    if (byListener === undefined) this.wrappers.set(event, (byListener = new Map<unknown, Listener<unknown[]>>()));
    byListener.set(listener, wrapped as Listener<unknown[]>);
    this.emitter.on(event, wrapped as Listener<unknown[]>);
    this.listeners += 1;
    return () => this.off(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof E & string>(event: K, listener: Listener<E[K]>): void {
    const wrapped = this.wrappers.get(event)?.get(listener);
    if (wrapped !== undefined) this.wrappers.get(event)?.delete(listener);
    const before = this.emitter.listenerCount(event);
    this.emitter.off(event, wrapped ?? (listener as Listener<unknown[]>));
    this.listeners -= before - this.emitter.listenerCount(event);
  }

  /** True when someone listens to `event` (lets the hot path skip building arguments). */
  has(event: keyof E & string): boolean {
    return this.emitter.listenerCount(event) > 0;
  }

  /** True when anyone listens to anything (the hot path skips all event work otherwise). */
  get active(): boolean {
    return this.listeners > 0;
  }

  /** Calls every listener; a throwing one is reported and the rest still run. */
  emit<K extends keyof E & string>(event: K, ...args: E[K]): void {
    if (this.emitter.listenerCount(event) === 0) return;
    for (const listener of this.emitter.listeners(event) as Array<Listener<E[K]>>) {
      try {
        listener(...args);
      } catch (error) {
        if (event === 'error') continue;
        this.onListenerError(
          new TaskError(`A "${event}" listener threw: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          }),
        );
      }
    }
  }
}

/** Metrics of a record at `now`. */
export function metricsOf(record: TaskRecord, now: number): TaskMetrics {
  const settlement = record.settlement;
  const task = record.task;
  return {
    taskId: task.taskId,
    toolName: record.toolName,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    startedAt: record.startedAt,
    completedAt: record.settledAt,
    durationMs: (record.settledAt ?? now) - record.startedAt,
    polls: record.polls,
    notifications: record.notifications,
    retries: record.retries,
    error: settlement !== undefined && !settlement.ok ? settlement.error : undefined,
  };
}

/** What kind of ending a settlement error means. */
export function outcomeOf(error: TaskError | undefined): TaskOutcomeKind {
  if (error === undefined) return 'completed';
  if (error instanceof TaskFailedError) return 'failed';
  if (error instanceof TaskCancelledError) return 'cancelled';
  if (error instanceof TaskTimeoutError) return 'timeout';
  if (error instanceof TaskAbortError) return 'aborted';
  if (error instanceof TaskExpiredError || error instanceof TaskNotFoundError) return 'expired';
  if (error instanceof TaskDetachedError) return 'detached';
  if (error instanceof TaskClosedError) return 'closed';
  return 'error';
}

/**
 * Emits the lifecycle events of a settled record on each emitter: the specific one
 * (`completed`, `failed`, ...) and then `settled`.
 */
export function emitSettled(
  emitters: ReadonlyArray<SafeEmitter<TaskHandleEvents> | SafeEmitter<TaskClientEvents>>,
  record: TaskRecord,
  now: number,
): void {
  const settlement = record.settlement;
  if (settlement === undefined || !emitters.some((emitter) => emitter.active)) return;
  const metrics = metricsOf(record, now);
  const error = settlement.ok ? undefined : settlement.error;
  const outcome = outcomeOf(error);
  for (const emitter of emitters as Array<SafeEmitter<TaskHandleEvents>>) {
    if (settlement.ok) emitter.emit('completed', { ...metrics, result: settlement.result });
    else if (error instanceof TaskFailedError) emitter.emit('failed', { ...metrics, error });
    else if (error instanceof TaskCancelledError) emitter.emit('cancelled', { ...metrics, error });
    else if (error instanceof TaskTimeoutError) emitter.emit('timeout', { ...metrics, error });
    else if (error instanceof TaskExpiredError || error instanceof TaskNotFoundError) {
      emitter.emit('expired', { ...metrics, error });
    }
    emitter.emit('settled', { ...metrics, outcome });
  }
}
