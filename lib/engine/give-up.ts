/**
 * Giving a task up locally (a deadline, an abort, `dispose()`, `close()`) without leaving remote
 * work running: the remote cancel goes through {@link cancelTask} (a last look, then `tasks/cancel`
 * only, [R24]), and everything the stop waits for is bounded by its grace.
 */
import type { RemoteCancelOutcome, TaskError } from '../errors.js';
import { isTerminalStatus } from '../types.js';
import type { EngineCore as TaskEngine } from './types.js';
import { cancelRequest, cancelTask, lookBound, takingLastLook, unconfirmed } from './cancel.js';
import type { TaskRecord } from './record.js';

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
   * way, and do not wait for the payload of a task that turns out to have finished, unless
   * `cancelRemote` (`close({ cancelRunning: true })`, which waits for its cancels anyway).
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
 * costs the caller at most the grace, and the remote task's fate is then `'unknown'` (or
 * `'acknowledged'` when the server accepted the cancel but its confirming read did not answer, and
 * `'failed'` when it refused the cancel).
 */
export async function giveUp(engine: TaskEngine, record: TaskRecord, how: GiveUp): Promise<GiveUpResult> {
  if (record.settlement !== undefined) return 'already-settled';
  const settleNow = (remote: RemoteCancelOutcome): RemoteCancelOutcome => {
    const error = how.error(remote);
    engine.settle(record, { ok: false, error }, how.throwFromIterators === false ? undefined : error);
    return remote;
  };
  if (engine.isStopping(record)) {
    // A forced stop takes over (the other stop's cancel is still out, or not sent yet: see
    // takenOver); any other waits for the stop under way rather than racing it, but no longer
    // than its own grace: the stop under way may wait longer (`close({ cancelRunning: true })`
    // waits up to `closeTimeoutMs` for a cancel or a payload), and a deadline bounds the whole
    // call at `timeoutMs + cancelGraceMs` (as an abort or `dispose()` bounds it at their grace).
    if (how.force === true)
      return settleNow(record.terminal ? finishedFate(record) : takenOver(engine, record, how.cancelRemote));
    const grace = engine.scheduler.expiry(how.graceMs);
    try {
      await Promise.race([settledOf(record), grace.expired]);
    } finally {
      grace.clear();
    }
    if (record.settlement !== undefined) return 'already-settled';
    // As a forced stop does: when the stop under way is still taking its last look, no cancel has
    // gone out yet, and this one sends it (once) rather than leave the remote task running; so it
    // does when the stop it waited for meant to (a close({ cancelRunning: true }) still looking),
    // whose look its settling ends.
    return settleNow(
      record.terminal ? finishedFate(record) : takenOver(engine, record, how.cancelRemote || record.stopCancels),
    );
  }
  // A resumed task nobody observed yet is observed from now on: what its last look shows is acted
  // on (a task that had finished is settled with its result, as a stop promises).
  engine.activate(record);
  engine.beginStop(record, { holdStream: how.throwFromIterators ?? true, cancels: how.cancelRemote });
  const grace = engine.scheduler.expiry(how.graceMs);
  try {
    let remote: RemoteCancelOutcome;
    // Known before anything is sent: a task seen ended had finished; a cancel already out (a
    // cancel() under way) is what became of it, even for a stop that would send none.
    if (record.terminal) remote = finishedFate(record);
    else if (!how.cancelRemote) remote = record.cancelling === undefined ? 'disabled' : unconfirmed(record);
    else if (!engine.features.cancel) remote = 'not-supported';
    else {
      const cancel = cancelTask(engine, record, {
        once: how.once,
        lookMs: lookBound(how.graceMs),
        unbounded: true,
      }).then(
        (task): RemoteCancelOutcome =>
          task.status === 'cancelled' ? 'cancelled' : isTerminalStatus(task.status) ? 'finished' : 'acknowledged',
        (): RemoteCancelOutcome => 'failed',
      );
      remote = (await Promise.race([cancel, grace.expired])) ?? unconfirmed(record);
    }
    if (record.settlement !== undefined) return 'finished-first';
    // The task had finished on the server: its payload is being fetched and settles the handle,
    // within what is left of the grace. A close() that cancels waits for it too: the task it
    // would have cancelled had done its work.
    if (record.terminal && record.task.status !== 'cancelled' && (how.force !== true || how.cancelRemote)) {
      await Promise.race([settledOf(record), grace.expired]);
      if (record.settlement !== undefined) return 'finished-first';
      return settleNow('finished');
    }
    return settleNow(remote);
  } finally {
    grace.clear();
  }
}

/**
 * What became of a task still running whose stop `close()` takes over (or a stop whose grace ran
 * out waiting for the one under way). A stop still taking its
 * last look has sent no cancel yet: `close({ cancelRunning: true })` sends it now, once, without
 * waiting for it (as for the cancel of any stop it takes over), and plain `close()` leaves the task
 * running.
 */
function takenOver(engine: TaskEngine, record: TaskRecord, cancelRemote: boolean): RemoteCancelOutcome {
  if (!takingLastLook(record)) return unconfirmed(record);
  if (!cancelRemote) return 'disabled';
  if (engine.paused) return 'failed';
  void cancelRequest(engine, record, true).catch(() => undefined);
  return 'unknown';
}

/** Resolves when `record` settles. */
function settledOf(record: TaskRecord): Promise<void> {
  return new Promise((resolve) => record.onSettled(() => resolve()));
}

/** What a stop found about a task that is already terminal on the server. */
function finishedFate(record: TaskRecord): RemoteCancelOutcome {
  return record.task.status === 'cancelled' ? 'cancelled' : 'finished';
}
