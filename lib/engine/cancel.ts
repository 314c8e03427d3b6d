/**
 * Cancelling a task: `tasks/cancel` that reports the truth (giving a task up locally, which
 * cancels through this, is in give-up.ts). Cancelling uses `tasks/cancel` only, never
 * `notifications/cancelled` ([R24]). Before a cancel the task is read once (the last look):
 * a task found ended is not cancelled. If a cancel reveals that the task had already finished
 * ([V23]), the truth wins: the handle settles as the task really ended.
 */
import {
  TaskAbortError,
  TaskClosedError,
  TaskExpiredError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskRpcError,
  TaskTimeoutError,
  asTaskError,
  describeRemoteCancel,
  type RemoteCancelOutcome,
} from '../errors.js';
import { isTerminalStatus, type Task } from '../types.js';
import type { CancelReply, WireSnapshot } from '../wire/wire.js';
import type { EngineCore as TaskEngine } from './types.js';
import { vanished } from './payload.js';
import type { TaskRecord } from './record.js';

/** Options of {@link cancelTask}. */
export interface CancelOptions {
  /** Send the cancel once, without retries (`close()`). */
  readonly once?: boolean | undefined;
  /**
   * Longest wait for the last look (the read before the cancel); none with 0.
   * @defaultValue {@link lookBound} of the engine's `cancelGraceMs`
   */
  readonly lookMs?: number | undefined;
  /**
   * The caller bounds its wait itself (a stop, by its grace): the promise is the cancel's own,
   * however long its retries take. Otherwise (`cancel()`) the wait is bounded: the task's request
   * timeout (one whole attempt) plus `cancelGraceMs` (the last look, the retries of transient
   * failures and the confirming read), 12 s with the defaults, where the retries of an unanswered
   * cancel alone took about 64 s; sooner when a deadline or an abort stops the task meanwhile
   * (see `bounded`).
   */
  readonly unbounded?: boolean | undefined;
}

/**
 * How long the last look before a cancel may take within a stop's `graceMs`: half of it, so that
 * a cancel still needed after a look that hangs gets the other half to be answered.
 */
export function lookBound(graceMs: number): number {
  return Math.floor(graceMs / 2);
}

/**
 * Reads the task once (the last look, bounded by `lookMs`), then, unless that showed it ended,
 * sends `tasks/cancel` and returns the final snapshot. When the look finds the task terminal, no
 * cancel is sent and that snapshot is returned (its payload is fetched as for any end). When the
 * server refuses the cancel (a task already terminal or unknown answers -32602, or another code),
 * the task is re-read: a terminal snapshot is returned, a task still running fails the cancel. The cancel request is not tied to the handle's tracking: once sent, it goes on (and is
 * retried while the client is open) even if the handle settles meanwhile, so the server still
 * hears of it.
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
    return gone(record) ?? Promise.resolve(record.task);
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
        kind: 'closed',
      }),
    );
  }
  const lookMs = options.lookMs ?? lookBound(engine.config.cancelGraceMs);
  let cancelling = record.cancelling;
  if (cancelling === undefined) {
    cancelling = sendCancel(engine, record, options.once === true, lookMs).finally(() => record.cancelEnded());
    record.cancelBegan(cancelling);
  }
  return options.unbounded === true ? cancelling : bounded(engine, record, cancelling);
}

/**
 * `cancelling`, waited for at most its bound (see {@link CancelOptions.unbounded}): every deadline bounds the whole call, the
 * remote cancel included. When the bound passes first, it rejects with a `TaskTimeoutError` whose
 * `remoteCancel` says what became of the remote task (`'unknown'`: the `tasks/cancel` was not
 * answered; `'acknowledged'`: only its confirming read is missing; `'failed'`: refused, and the
 * read after the refusal is missing); the `tasks/cancel` itself is not withdrawn (its retries of
 * transient failures go on in the background) and the task is still followed. When a stop settles
 * the task meanwhile (a deadline, an abort: they reuse this cancel and give up on it after their
 * grace), it rejects with the stop's error, which says the same; a task seen ended resolves with
 * its snapshot.
 */
function bounded(engine: TaskEngine, record: TaskRecord, cancelling: Promise<Task>): Promise<Task> {
  const boundMs = record.requestTimeoutMs + engine.config.cancelGraceMs;
  const clock = engine.config.clock;
  const startedAt = clock.now();
  const bound = engine.scheduler.expiry(boundMs);
  return new Promise<Task>((resolve, reject) => {
    const unlisten = record.onSettled((settlement) => {
      const error = settlement.ok ? undefined : settlement.error;
      // A stop that reused this cancel (a deadline, an abort) and settled saying what became of it.
      if (record.terminal) resolve(answer(record));
      else if (
        (error instanceof TaskTimeoutError || error instanceof TaskAbortError) &&
        error.remoteCancel !== 'disabled'
      )
        reject(error);
      else return;
      bound.clear();
    });
    cancelling.then(resolve, reject).finally(() => {
      bound.clear();
      unlisten();
    });
    void bound.expired.then(() => {
      unlisten();
      const fate = unconfirmed(record);
      reject(
        new TaskTimeoutError(`cancel() gave up after ${boundMs} ms: ${describeRemoteCancel(fate)}`, {
          task: record.task,
          toolName: record.toolName,
          timeoutMs: boundMs,
          elapsedMs: clock.now() - startedAt,
          remoteCancel: fate,
        }),
      );
    });
  });
}

async function sendCancel(engine: TaskEngine, record: TaskRecord, once: boolean, lookMs: number): Promise<Task> {
  if (lookMs > 0 && (await lastLook(engine, record, lookMs))) return answer(record);
  if (record.settlement !== undefined || record.terminal) return answer(record);
  let snapshot: WireSnapshot | undefined;
  /** The server's refusal of the cancel, which stands if the task is still running. */
  let refusal: unknown;
  // A new cancel: what the server said to an earlier one no longer counts.
  refused.delete(record);
  try {
    const reply = await cancelRequest(engine, record, once);
    record.cancelAcknowledged();
    if (reply.kind === 'snapshot') snapshot = reply.snapshot;
  } catch (error) {
    // [V23]: a task already terminal (or gone) answers with an error (-32602; Rust servers -32002,
    // or -32600 for a task already completed, D19): read what really happened. Errors that are
    // not the server's answer (a timeout, a lost connection, a failed send, a malformed reply)
    // fail the cancel as they are.
    if (!engine.wire.answeredByServer(error)) throw asTaskError(error, record);
    refusal = error;
    refused.add(record);
  }
  // Settled meanwhile (a deadline's stop that ran out of grace waiting for this very cancel): what
  // the server answered is still the truth about the task.
  if (record.settlement !== undefined)
    return snapshot !== undefined && isTerminalStatus(snapshot.task.status) ? snapshot.task : answer(record);
  if (snapshot === undefined) {
    // A bare acknowledgement ([E6]: cancellation is cooperative), a refusal, or the task had
    // already ended: one confirming read tells what became of it.
    try {
      snapshot = await engine.retrying(record, (scope) => engine.readTask(record, scope));
    } catch (readError) {
      // Settled meanwhile (a notification or a poll told the end first): that is the answer.
      if (record.settlement !== undefined) return answer(record);
      if (engine.classify(readError) === 'vanished') {
        vanished(engine, record, readError);
        return answer(record);
      }
      if (refusal === undefined) throw asTaskError(readError, record);
      // After a refusal, the refusal is what the cancel came to; the read's own failure is reported.
      engine.report(readError, record);
      throw asTaskError(refusal, record);
    }
  }
  engine.observe(record, snapshot, 'cancel');
  // Refused, and still running: the cancel failed, whatever code the server gave.
  if (refusal !== undefined && record.settlement === undefined && !record.terminal) throw asTaskError(refusal, record);
  return record.task;
}

/**
 * What a cancel comes to when the handle settled before it could tell (or before it began): the
 * settlement's error when the task was never seen to end and no cancel of it was accepted, and
 * the handle settled because the task is gone (unknown, expired) or the client closed; else the
 * task as last seen. Never a stale `working` snapshot (or a resumed handle's placeholder) for a
 * task that no longer exists or can no longer be followed. A task the server dropped after
 * accepting the cancel ends cancelled, and its last snapshot stands; a client closed meanwhile
 * still rejects (the task was not seen to end: the snapshot left is the stale one).
 */
function gone(record: TaskRecord): Promise<never> | undefined {
  const settlement = record.settlement;
  if (settlement === undefined || settlement.ok || record.terminal) return undefined;
  const error = settlement.error;
  if (error instanceof TaskClosedError) return Promise.reject(error);
  if (record.cancelAccepted) return undefined;
  return error instanceof TaskNotFoundError || error instanceof TaskExpiredError ? Promise.reject(error) : undefined;
}

/** {@link gone}, in an async function: throws the settlement's error, or returns the task as last seen. */
async function answer(record: TaskRecord): Promise<Task> {
  return gone(record) ?? record.task;
}

/** Records whose latest `tasks/cancel` the server refused: a stop that cannot wait for more says `'failed'`. */
const refused = new WeakSet<TaskRecord>();

/** The `tasks/cancel` request itself, outliving the record's tracking (see {@link Requests.background}). */
export function cancelRequest(engine: TaskEngine, record: TaskRecord, once: boolean): Promise<CancelReply> {
  const timeoutMs = record.requestTimeoutMs;
  return engine.background(
    record,
    (scope) =>
      engine.wire.cancelTask(
        record.taskId,
        engine.requestOptions(timeoutMs, scope, true, record.instrument, false, record.input),
      ),
    once,
  );
}

/** Records whose stop is still taking its last look: no `tasks/cancel` has gone out for them yet. */
const looking = new WeakSet<TaskRecord>();

/** Whether `record`'s stop is still taking its last look (no `tasks/cancel` has gone out yet). */
export function takingLastLook(record: TaskRecord): boolean {
  return looking.has(record);
}

/**
 * The last look before a cancel: some servers break [V23] and, asked to cancel a task that already
 * completed, rewrite it to `cancelled` and drop its result. A task that ended unseen (no
 * notification, between two polls) is found by this one read and is not cancelled. The read waits
 * at most `lookMs`; an answer that comes later is still taken (the cancel is then on its way). A
 * failed read is reported, and the cancel goes on; a task the server no longer knows ends as
 * vanished. True when no cancel is needed any more: the task is terminal, or its handle settled.
 */
async function lastLook(engine: TaskEngine, record: TaskRecord, lookMs: number): Promise<boolean> {
  const bound = engine.scheduler.expiry(lookMs);
  looking.add(record);
  const look = engine
    .attempt(record, (scope) => engine.readTask(record, scope))
    .then(
      (snapshot) => engine.observe(record, snapshot, 'poll'),
      (error: unknown) => {
        if (record.settlement !== undefined) return;
        if (engine.classify(error) === 'vanished') vanished(engine, record, error);
        else engine.report(error, record);
      },
    );
  try {
    await Promise.race([look, bound.expired]);
  } finally {
    bound.clear();
    looking.delete(record);
  }
  return record.settlement !== undefined || record.terminal;
}

/**
 * What became of a cancel whose confirmation did not come in time: `'failed'` when the server
 * refused the `tasks/cancel`, `'acknowledged'` when it accepted it (only the confirming read is
 * missing), else `'unknown'`.
 */
export function unconfirmed(record: TaskRecord): RemoteCancelOutcome {
  if (refused.has(record)) return 'failed';
  return record.cancelAccepted ? 'acknowledged' : 'unknown';
}
