/**
 * What an error means for a tool job: retry it here (a transient failure: the job keeps its BullMQ
 * attempts), treat the task as lost (the server no longer knows it), or end the job with it.
 */
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClosedError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskProtocolError,
  TaskQueueFullError,
  TaskRpcError,
  TaskTimeoutError,
  isTaskError,
} from '../index.js';
import type { Job } from 'bullmq';

/** How the run goes on after an error. */
export type ErrorVerdict =
  /** Try again here (a new connection, a resume), without using a BullMQ attempt. */
  | 'retry'
  /** The server no longer knows the task (a stdio server that died, a restart, an expired ttl). */
  | 'lost'
  /** The job ends with this error. */
  | 'final';

/**
 * The verdict on `error`, thrown while calling the tool (`calling`) or while waiting on its task.
 * Errors that are not the library's (a connection that could not be opened, Redis away) are
 * transient, except BullMQ's `UnrecoverableError` (a `connect` that says the job can never run),
 * and so is a connection that failed, except to a peer that does not speak MCP.
 */
export function verdictOf(error: unknown, calling: boolean): ErrorVerdict {
  // By name: the error may come from another copy of bullmq than this module's.
  if (error instanceof Error && error.name === 'UnrecoverableError') return 'final';
  if (!isTaskError(error)) return 'retry';
  // TaskConnectError (the doctor's entry, e.g. from a `connect` that probes its target): by name and
  // reason, as this entry does not import it.
  if (error.name === 'TaskConnectError')
    return (error as { reason?: unknown }).reason === 'not-mcp' ? 'final' : 'retry';
  if (error instanceof TaskNotFoundError || error instanceof TaskExpiredError) return 'lost';
  if (error instanceof TaskClosedError || error instanceof TaskQueueFullError) return 'retry';
  if (error instanceof TaskRpcError) {
    // The server refused the call itself (an unknown tool, bad arguments): calling again would
    // not help. Tracking that gave up on failed polls can resume over a new connection.
    return calling && !error.transient ? 'final' : 'retry';
  }
  if (error instanceof TaskProtocolError) return calling ? 'final' : 'retry';
  if (
    error instanceof TaskFailedError ||
    error instanceof TaskCancelledError ||
    error instanceof TaskTimeoutError ||
    error instanceof TaskAbortError ||
    error instanceof TaskOptionError ||
    error instanceof TaskNotSupportedError
  ) {
    return 'final';
  }
  return 'retry';
}

/** The delay before retry `attempt` (1-based): doubling from `minMs` up to `maxMs`, with ±20% jitter. */
export function backoff(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, minMs * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Whether this is the job's last BullMQ attempt (its `attempts`, 1 by default): a failed one fails the job. */
export function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
