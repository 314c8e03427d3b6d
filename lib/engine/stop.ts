/**
 * Giving up on a task locally (deadline, abort, dispose, close) without leaving remote work
 * running: cancel it with `tasks/cancel` when allowed and possible ([R24]: never with
 * `notifications/cancelled`), then settle with the caller's error, which says what became of
 * the remote task. If the cancel reveals that the task had already finished ([V23]), the truth wins:
 * the handle settles as the task really ended.
 */
import type { RemoteCancelOutcome, TaskError } from '../errors.js';
import type { TaskEngine } from './engine.js';
import type { TaskRecord } from './record.js';

/** How to give up. */
export interface GiveUp {
  /** Try `tasks/cancel` on the remote task. */
  readonly cancelRemote: boolean;
  /** Builds the error to settle with, given what became of the remote task. */
  readonly error: (remote: RemoteCancelOutcome) => TaskError;
  /** End iterators with that error (true) or normally (false). */
  readonly throwFromIterators?: boolean;
}

/** What {@link giveUp} did. */
export type GiveUpResult = RemoteCancelOutcome | 'already-settled' | 'finished-first';

/** Stops observing `record`, cancels the remote task if asked, and settles. */
export async function giveUp(engine: TaskEngine, record: TaskRecord, how: GiveUp): Promise<GiveUpResult> {
  if (record.settlement !== undefined) return 'already-settled';
  if (engine.isStopping(record)) {
    // Another stop is under way; wait for it rather than racing it.
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
      const task = await engine.cancel(record);
      remote = task.status === 'cancelled' ? 'cancelled' : 'failed';
    } catch {
      remote = 'failed';
    }
  }
  if (record.settlement !== undefined) return 'finished-first';
  // The task had finished on the server: its outcome is being fetched and settles the handle.
  if (record.terminal && record.task.status !== 'cancelled') return 'finished-first';
  const error = how.error(remote);
  engine.settle(record, { ok: false, error }, how.throwFromIterators === false ? undefined : error);
  return remote;
}
