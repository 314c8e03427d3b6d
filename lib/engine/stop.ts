/**
 * Stopping a task: `tasks/cancel` that reports the truth, and giving up locally (deadline, abort,
 * dispose, close) without leaving remote work running. Cancelling uses `tasks/cancel` only,
 * never `notifications/cancelled` ([R24]). If a cancel reveals that the task had already finished
 * ([V23]), the truth wins: the handle settles as the task really ended.
 */
import {
  TaskClosedError,
  TaskNotSupportedError,
  TaskRpcError,
  asTaskError,
  type RemoteCancelOutcome,
  type TaskError,
} from '../errors.js';
import { isTerminalStatus, type Task } from '../types.js';
import type { WireSnapshot } from '../wire/wire.js';
import type { EngineCore as TaskEngine } from './types.js';
import { vanished } from './outcome.js';
import type { TaskRecord } from './record.js';

/** Options of {@link cancelTask}. */
export interface CancelOptions {
  /** Send the cancel once, without retries (`close()`). */
  readonly once?: boolean | undefined;
}

/**
 * Sends `tasks/cancel` and returns the final snapshot. When the server says the task is already
 * terminal (-32602), the task is re-read and that snapshot is returned. The request is not tied
 * to the handle's tracking: once sent, it goes on (and is retried while the client is open) even
 * if the handle settles meanwhile, so the server still hears of it.
 * @throws TaskClosedError when the handle was stopped by `close()` while the task still ran.
 * @throws TaskNotSupportedError when the server did not declare `tasks.cancel` ([R5]).
 * @throws TaskRpcError when the cancel request fails, or the connection is lost.
 */
export function cancelTask(engine: TaskEngine, record: TaskRecord, options: CancelOptions = {}): Promise<Task> {
  const settlement = record.settlement;
  if (settlement !== undefined) {
    // A task left running by close() cannot be cancelled through this client any more.
    if (!settlement.ok && settlement.error instanceof TaskClosedError && !record.terminal) {
      return Promise.reject(
        new TaskClosedError('The TaskClient was closed; this handle can no longer cancel the remote task', {
          task: record.task,
          toolName: record.toolName,
        }),
      );
    }
    return Promise.resolve(record.task);
  }
  if (record.terminal) return Promise.resolve(record.task);
  const common = { task: record.task, toolName: record.toolName };
  if (!engine.features.cancel) {
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
  record.cancelling ??= sendCancel(engine, record, options.once === true).finally(() => {
    record.cancelling = undefined;
  });
  return record.cancelling;
}

async function sendCancel(engine: TaskEngine, record: TaskRecord, once: boolean): Promise<Task> {
  const timeoutMs = record.requestTimeoutMs;
  let snapshot: WireSnapshot | undefined;
  try {
    const reply = await engine.background(
      record,
      (scope) => engine.wire.cancelTask(record.taskId, engine.requestOptions(timeoutMs, scope, true)),
      once,
    );
    record.cancelAcknowledged = true;
    if (reply.kind === 'snapshot') snapshot = reply.snapshot;
  } catch (error) {
    // [V23]: a task already terminal (or gone) answers -32602: read what really happened.
    if (engine.classify(error) !== 'vanished') throw asTaskError(error, record);
  }
  if (record.settlement !== undefined) return record.task;
  if (snapshot === undefined) {
    // A bare acknowledgement ([E6]: cancellation is cooperative), or the task had already ended:
    // one confirming read tells what became of it.
    try {
      snapshot = await engine.retrying(record, (scope) => engine.readTask(record, scope));
    } catch (readError) {
      // Settled meanwhile (a notification or a poll told the end first): that is the answer.
      if (record.settlement !== undefined) return record.task;
      if (engine.classify(readError) !== 'vanished') throw asTaskError(readError, record);
      vanished(engine, record, readError);
      return record.task;
    }
  }
  engine.observe(record, snapshot, 'cancel');
  return record.task;
}

/** How to give up. */
export interface GiveUp {
  /** Try `tasks/cancel` on the remote task. */
  readonly cancelRemote: boolean;
  /** Builds the error to settle with, given what became of the remote task. */
  readonly error: (remote: RemoteCancelOutcome) => TaskError;
  /** End iterators with that error (true) or normally (false). @defaultValue true */
  readonly throwFromIterators?: boolean;
  /**
   * Settle with this stop's error whatever happens (`close()`): take over a stop already under
   * way, and do not wait for the payload of a task that turns out to have finished.
   */
  readonly force?: boolean;
  /**
   * Longest wait, from now, for the remote cancel and for the payload of a task found to have
   * finished; the stop settles when it runs out, whatever is still under way.
   */
  readonly graceMs: number;
  /** Send the cancel once, without retries (`close()`). */
  readonly once?: boolean;
}

/** What {@link giveUp} did. */
export type GiveUpResult = RemoteCancelOutcome | 'already-settled' | 'finished-first';

/**
 * Stops observing `record`, cancels the remote task if asked, and settles. Everything it waits for
 * (the cancel, a terminal payload) is bounded together by `graceMs`: a server that never answers
 * costs the caller at most the grace, and the cancel's outcome is then `'unknown'` (or
 * `'acknowledged'` when the server accepted the cancel but its confirming read did not answer).
 */
export async function giveUp(engine: TaskEngine, record: TaskRecord, how: GiveUp): Promise<GiveUpResult> {
  if (record.settlement !== undefined) return 'already-settled';
  const settleNow = (remote: RemoteCancelOutcome): RemoteCancelOutcome => {
    const error = how.error(remote);
    engine.settle(record, { ok: false, error }, how.throwFromIterators === false ? undefined : error);
    return remote;
  };
  if (engine.isStopping(record)) {
    // A forced stop takes over (the other stop's cancel is still out: its outcome is unknown);
    // any other waits for the stop under way rather than racing it.
    if (how.force === true) return settleNow(record.terminal ? finishedFate(record) : unconfirmed(record));
    await new Promise<void>((resolve) => record.onSettled(() => resolve()));
    return 'already-settled';
  }
  engine.beginStop(record, { holdStream: how.throwFromIterators ?? true });
  const grace = engine.scheduler.expiry(how.graceMs);
  try {
    let remote: RemoteCancelOutcome;
    if (!how.cancelRemote) remote = 'disabled';
    else if (record.terminal) remote = finishedFate(record);
    else if (!engine.features.cancel) remote = 'not-supported';
    else {
      const cancel = cancelTask(engine, record, { once: how.once }).then(
        (task): RemoteCancelOutcome =>
          task.status === 'cancelled' ? 'cancelled' : isTerminalStatus(task.status) ? 'finished' : 'acknowledged',
        (): RemoteCancelOutcome => 'failed',
      );
      remote = (await Promise.race([cancel, grace.expired])) ?? unconfirmed(record);
    }
    if (record.settlement !== undefined) return 'finished-first';
    // The task had finished on the server: its payload is being fetched and settles the handle,
    // within what is left of the grace.
    if (record.terminal && record.task.status !== 'cancelled' && how.force !== true) {
      await Promise.race([new Promise<void>((resolve) => record.onSettled(() => resolve())), grace.expired]);
      if (record.settlement !== undefined) return 'finished-first';
      return settleNow('finished');
    }
    return settleNow(remote);
  } finally {
    grace.clear();
  }
}

/**
 * What became of a cancel whose confirmation did not come in time: `'acknowledged'` when the
 * server accepted the `tasks/cancel` (only the confirming read is missing), else `'unknown'`.
 */
function unconfirmed(record: TaskRecord): RemoteCancelOutcome {
  return record.cancelAcknowledged ? 'acknowledged' : 'unknown';
}

/** What a stop found about a task that is already terminal on the server. */
function finishedFate(record: TaskRecord): RemoteCancelOutcome {
  return record.task.status === 'cancelled' ? 'cancelled' : 'finished';
}
