/**
 * Typed lifecycle events with metrics. Emitting goes through {@link SafeEmitter.emit}, which runs
 * every listener even when one throws and reports the throw on the `error` event, so a listener
 * can never break tracking.
 */
import type { TaskClientEvents, TaskHandleEvents, TaskMetrics, TaskOutcomeKind } from '../../api/index.js';
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

/** One `on` or `once` call. */
interface Registration {
  readonly listener: Listener<unknown[]>;
  readonly once: boolean;
  removed: boolean;
}

/**
 * Typed events whose listeners are isolated from one another. `emit` is not public API: only the
 * library emits.
 *
 * Every `on`/`once` call is its own registration: the same function added twice is called twice,
 * a `once` registration runs at most once (whatever else is registered with the same function),
 * the remover that `on`/`once` returns removes exactly its registration, and
 * `off(event, listener)` removes every registration of `listener` on `event`. A registration
 * removed while an event is being emitted is not called for it. An event's registrations are an
 * array replaced (never changed) when one is added or removed, so emitting copies nothing.
 */
export class SafeEmitter<E extends { [K in keyof E]: unknown[] }> {
  private listeners = 0;
  /** The live registrations of each event that has any, in the order they were added. */
  private readonly registrations = new Map<string, readonly Registration[]>();

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
    for (const registration of this.registrations.get(event) ?? []) {
      if (registration.listener === listener) this.remove(event, registration);
    }
  }

  private register(event: string, listener: Listener<unknown[]>, once: boolean): () => void {
    const registration: Registration = { listener, once, removed: false };
    this.registrations.set(event, [...(this.registrations.get(event) ?? []), registration]);
    this.listeners += 1;
    return () => this.remove(event, registration);
  }

  private remove(event: string, registration: Registration): void {
    if (registration.removed) return;
    registration.removed = true;
    this.listeners -= 1;
    const rest = this.registrations.get(event)!.filter((other) => other !== registration);
    if (rest.length === 0) this.registrations.delete(event);
    else this.registrations.set(event, rest);
  }

  /** True when someone listens to `event` (lets the hot path skip building arguments). */
  has(event: keyof E & string): boolean {
    return this.registrations.has(event);
  }

  /** True when anyone listens to anything (the hot path skips all event work otherwise). */
  get active(): boolean {
    return this.listeners > 0;
  }

  /** Calls every listener; a throwing one is reported and the rest still run. */
  emit<K extends keyof E & string>(event: K, ...args: E[K]): void {
    const registrations = this.registrations.get(event);
    if (registrations === undefined) return;
    for (const registration of registrations) {
      if (registration.removed) continue;
      if (registration.once) this.remove(event, registration);
      try {
        registration.listener(...args);
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
