/**
 * Lifecycle events of receiver tasks, on the client's emitter with `role: 'receiver'` ([R36]:
 * a host logs and shows them like its own tasks): `created`, `status` on every status change,
 * then one of `completed`, `failed`, `cancelled`, `expired`, and `settled`.
 */
import type { ReceiverResult, TaskClientEvents, TaskMetrics, TaskOutcomeKind } from '../api/index.js';
import { TaskCancelledError, TaskClosedError, TaskExpiredError, TaskFailedError, type TaskError } from '../errors.js';
import type { JsonObject } from '../port/port.js';
import type { JsonRpcErrorInfo } from '../types.js';
import { snapshotOf, type ReceiverTask } from './store.js';
import type { ReceiverHost, ReceiverKind } from './types.js';

/** The numbers of a receiver task at `now`. */
export function receiverMetrics(task: ReceiverTask, now: number): TaskMetrics {
  return {
    role: 'receiver',
    taskId: task.taskId,
    toolName: task.method,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    startedAt: task.createdAtMs,
    completedAt: task.settledAtMs,
    durationMs: (task.settledAtMs ?? now) - task.createdAtMs,
    polls: task.polls,
    notifications: task.notifications,
    retries: 0,
    error: task.error,
  };
}

/** How a receiver task ended, for its events (a completed result was checked by `resultFlaw`). */
export type Ending =
  | { readonly kind: 'completed'; readonly result: JsonObject }
  | { readonly kind: 'failed'; readonly error: JsonRpcErrorInfo }
  | { readonly kind: 'cancelled' }
  /** Its `CreateTaskResult` never reached the server ([V14]), `why` says how: ended before its callback ran. */
  | { readonly kind: 'withdrawn'; readonly why: string }
  /** The call that tracks the server's task it belongs to ended: its answer is no longer wanted. */
  | { readonly kind: 'abandoned' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'closed' };

/** The error an ending carries (kept on the task for its metrics). */
export function endingError(task: ReceiverTask, ending: Ending, pollIntervalMs: number): TaskError | undefined {
  const about = { taskId: task.taskId, task: snapshotOf(task, pollIntervalMs), toolName: task.method };
  const kind: ReceiverKind = task.kind;
  switch (ending.kind) {
    case 'completed':
      return undefined;
    case 'failed':
      return new TaskFailedError(`The receiver task for ${task.method} failed: ${ending.error.message}`, {
        ...about,
        rpcError: ending.error,
      });
    case 'cancelled':
      return new TaskCancelledError(`The server cancelled the receiver task for ${task.method}`, about);
    case 'withdrawn':
      return new TaskCancelledError(
        `The receiver task for ${task.method} was withdrawn before its ${kind} callback ran: ${ending.why}`,
        about,
      );
    case 'abandoned':
      return new TaskCancelledError(
        `The receiver task for ${task.method} was cancelled: the call that tracks the server task it belongs to ended`,
        about,
      );
    case 'expired':
      return new TaskExpiredError(
        `The receiver task for ${task.method} was deleted when its ttl (${task.ttl} ms) elapsed before the ${kind} callback answered`,
        about,
      );
    case 'closed':
      return new TaskClosedError(`Serving stopped before the ${kind} callback answered the receiver task`, about);
  }
}

/** Emits `created`. */
export function emitCreated(host: ReceiverHost, task: ReceiverTask, now: number): void {
  if (host.listening('created')) host.emit('created', receiverMetrics(task, now));
}

/** Emits `status` for the task's current snapshot. */
export function emitStatus(host: ReceiverHost, task: ReceiverTask, now: number, pollIntervalMs: number): void {
  if (host.listening('status')) host.emit('status', receiverMetrics(task, now), snapshotOf(task, pollIntervalMs));
}

const OUTCOME: Readonly<Record<Ending['kind'], Extract<TaskOutcomeKind, keyof TaskClientEvents> | 'closed'>> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  withdrawn: 'cancelled',
  abandoned: 'cancelled',
  expired: 'expired',
  closed: 'closed',
};

/** Emits the ending's own event (none for `closed`; `cancelled` for a withdrawn or abandoned task), then `settled`. */
export function emitEnding(host: ReceiverHost, task: ReceiverTask, ending: Ending, now: number): void {
  const outcome = OUTCOME[ending.kind];
  if (!host.listening(outcome === 'closed' ? 'settled' : outcome) && !host.listening('settled')) return;
  const metrics = receiverMetrics(task, now);
  const error = task.error;
  if (ending.kind === 'completed')
    host.emit('completed', { ...metrics, role: 'receiver', result: ending.result as ReceiverResult });
  else if (error instanceof TaskFailedError) host.emit('failed', { ...metrics, error });
  else if (error instanceof TaskCancelledError) host.emit('cancelled', { ...metrics, error });
  else if (error instanceof TaskExpiredError) host.emit('expired', { ...metrics, error });
  host.emit('settled', { ...metrics, outcome });
}
