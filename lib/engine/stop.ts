/**
 * Stopping a task: `tasks/cancel` that reports the truth, and giving up locally (deadline, abort,
 * dispose, close) without leaving remote work running. Cancelling uses `tasks/cancel` only,
 * never `notifications/cancelled` ([R24]). If a cancel reveals that the task had already finished
 * ([V23]), the truth wins: the handle settles as the task really ended.
 */
import {
  TaskNotSupportedError,
  TaskRpcError,
  asTaskError,
  type RemoteCancelOutcome,
  type TaskError,
} from '../errors.js';
import type { Task } from '../types.js';
import type { TaskEngine } from './engine.js';
import { isNotFound, vanished } from './outcome.js';
import type { TaskRecord } from './record.js';

/**
 * Sends `tasks/cancel` and returns the final snapshot. When the server says the task is already
 * terminal (-32602), the task is re-read and that snapshot is returned.
 * @throws TaskNotSupportedError when the server did not declare `tasks.cancel` ([R5]).
 * @throws TaskRpcError when the cancel request fails, or the connection is lost.
 */
export function cancelTask(engine: TaskEngine, record: TaskRecord): Promise<Task> {
  if (record.settlement !== undefined || record.terminal) return Promise.resolve(record.task);
  const common = { task: record.task, toolName: record.toolName };
  if (!engine.wire.capabilities().cancel) {
    return Promise.reject(
      new TaskNotSupportedError('The server does not support tasks/cancel (no tasks.cancel capability)', {
        ...common,
        feature: 'cancel',
      }),
    );
  }
  if (engine.paused) {
    return Promise.reject(
      new TaskRpcError('tasks/cancel failed: the connection to the server is lost', {
        ...common,
        method: 'tasks/cancel',
        code: -32000,
        transient: true,
      }),
    );
  }
  record.cancelling ??= sendCancel(engine, record).finally(() => {
    record.cancelling = undefined;
  });
  return record.cancelling;
}

async function sendCancel(engine: TaskEngine, record: TaskRecord): Promise<Task> {
  const timeoutMs = record.requestTimeoutMs;
  let task: Task;
  try {
    task = await engine.retrying(record, (signal) => engine.wire.cancelTask(record.taskId, { timeoutMs, signal }));
  } catch (error) {
    if (!isNotFound(error)) throw asTaskError(error, record);
    // Already terminal (or gone): read what really happened.
    try {
      task = await engine.retrying(record, (signal) => engine.readTask(record, signal));
    } catch (readError) {
      if (!isNotFound(readError)) throw asTaskError(readError, record);
      vanished(engine, record, readError);
      return record.task;
    }
  }
  engine.observe(record, task, 'cancel');
  return record.task;
}

/** How to give up. */
export interface GiveUp {
  /** Try `tasks/cancel` on the remote task. */
  readonly cancelRemote: boolean;
  /** Builds the error to settle with, given what became of the remote task. */
  readonly error: (remote: RemoteCancelOutcome) => TaskError;
  /** End iterators with that error (true) or normally (false). @default true */
  readonly throwFromIterators?: boolean;
  /**
   * Settle with this stop's error whatever happens (`close()`): take over a stop already under
   * way, and do not wait for the payload of a task that turns out to have finished.
   */
  readonly force?: boolean;
}

/** What {@link giveUp} did. */
export type GiveUpResult = RemoteCancelOutcome | 'already-settled' | 'finished-first';

/** Stops observing `record`, cancels the remote task if asked, and settles. */
export async function giveUp(engine: TaskEngine, record: TaskRecord, how: GiveUp): Promise<GiveUpResult> {
  if (record.settlement !== undefined) return 'already-settled';
  const settleNow = (remote: RemoteCancelOutcome): RemoteCancelOutcome => {
    const error = how.error(remote);
    engine.settle(record, { ok: false, error }, how.throwFromIterators === false ? undefined : error);
    return remote;
  };
  if (engine.isStopping(record)) {
    // A forced stop takes over (its settlement aborts the other stop's requests); any other
    // waits for the stop under way rather than racing it.
    if (how.force === true) return settleNow('failed');
    await new Promise<void>((resolve) => record.onSettled(() => resolve()));
    return 'already-settled';
  }
  engine.beginStop(record, { holdStream: how.throwFromIterators ?? true });
  let remote: RemoteCancelOutcome;
  if (!how.cancelRemote) remote = 'disabled';
  else if (record.terminal) remote = record.task.status === 'cancelled' ? 'cancelled' : 'failed';
  else if (!engine.wire.capabilities().cancel) remote = 'not-supported';
  else {
    try {
      const task = await cancelTask(engine, record);
      remote = task.status === 'cancelled' ? 'cancelled' : 'failed';
    } catch {
      remote = 'failed';
    }
  }
  if (record.settlement !== undefined) return 'finished-first';
  // The task had finished on the server: its payload is being fetched and settles the handle.
  if (record.terminal && record.task.status !== 'cancelled' && how.force !== true) return 'finished-first';
  return settleNow(remote);
}
