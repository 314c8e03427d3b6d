/**
 * Typed lifecycle events with metrics. Registration is eventemitter3's; emitting goes through
 * {@link SafeEmitter.emit}, which runs every listener even when one throws and reports the throw
 * on the `error` event, so a listener can never break tracking.
 */
import type { TaskClientEvents, TaskHandleEvents, TaskMetrics, TaskOutcomeKind } from '../../api/index.js';
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
} from '../../errors.js';
import type { TaskView } from '../../engine/task-view.js';
import { scrub } from '../../util/fingerprint.js';
import { messageOf } from '../../util/text.js';

type Listener<A extends unknown[]> = (...args: A) => void;

/**
 * eventemitter3 registration with isolated listeners. `emit` is not public API: only the library
 * emits.
 *
 * Every `on`/`once` call is its own registration, kept under a wrapper of its own: the same
 * function added twice is called twice, a `once` registration runs at most once (whatever else
 * is registered with the same function), the remover that `on`/`once` returns removes exactly
 * its registration, and `off(event, listener)` removes every registration of `listener` on
 * `event`. A registration removed while an event is being emitted is not called for it.
 */
export class SafeEmitter<E extends { [K in keyof E]: unknown[] }> {
  private readonly emitter = new EventEmitter();
  private listeners = 0;
  /** The removers of the live registrations, by event and by the function the caller passed. */
  private readonly registrations = new Map<string, Map<unknown, Set<() => void>>>();

  constructor(private readonly onListenerError: (error: TaskError) => void) {}

  /** Adds a listener. @returns a function that removes this registration (only). */
  on<K extends keyof E & string>(event: K, listener: Listener<E[K]>): () => void {
    return this.register(event, listener as Listener<unknown[]>, false);
  }

  /** Adds a listener that runs once. @returns a function that removes this registration (only). */
  once<K extends keyof E & string>(event: K, listener: Listener<E[K]>): () => void {
    return this.register(event, listener as Listener<unknown[]>, true);
  }

  /** Removes every registration of `listener` on `event`, whether added with `on` or `once`. */
  off<K extends keyof E & string>(event: K, listener: Listener<E[K]>): void {
    const removers = this.registrations.get(event)?.get(listener);
    if (removers === undefined) return;
    for (const remove of [...removers]) remove();
  }

  private register(event: string, listener: Listener<unknown[]>, once: boolean): () => void {
    let removed = false;
    const remove = (): void => {
      if (removed) return;
      removed = true;
      this.emitter.off(event, entry);
      this.listeners -= 1;
      const byListener = this.registrations.get(event);
      const removers = byListener?.get(listener);
      removers?.delete(remove);
      if (removers?.size !== 0) return;
      byListener!.delete(listener);
      if (byListener!.size === 0) this.registrations.delete(event);
    };
    const entry: Listener<unknown[]> = (...args) => {
      if (removed) return;
      if (once) remove();
      listener(...args);
    };
    let byListener = this.registrations.get(event);
    if (byListener === undefined) this.registrations.set(event, (byListener = new Map<unknown, Set<() => void>>()));
    let removers = byListener.get(listener);
    if (removers === undefined) byListener.set(listener, (removers = new Set()));
    removers.add(remove);
    this.emitter.on(event, entry);
    this.listeners += 1;
    return remove;
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
        // The event's metrics name its task: the report then belongs to it, and its text (which
        // may quote the task id) names it by fingerprint.
        const about = args[0] as { taskId?: unknown } | undefined;
        const taskId =
          typeof about === 'object' && about !== null && typeof about.taskId === 'string' ? about.taskId : undefined;
        this.onListenerError(
          new TaskError(scrub(`A "${event}" listener threw: ${messageOf(error)}`, taskId), { cause: error, taskId }),
        );
      }
    }
  }
}

/** Metrics of a record at `now`. */
export function metricsOf(record: TaskView, now: number): TaskMetrics {
  const settlement = record.settlement;
  const task = record.task;
  return {
    role: 'requestor',
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
  record: TaskView,
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
