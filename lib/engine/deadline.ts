/**
 * A task's deadline (`timeoutMs`): its timer, on the engine's scheduler, and what passing it does.
 * The task is given up as its caller asked (`giveUp` in `give-up.ts`: the remote task cancelled or
 * left running per `cancelOnTimeout`, the whole stop bounded by `cancelGraceMs`) and settles with
 * the caller's error. The timer is cancelled when the task settles first (`TaskEngine.settle`).
 */
import type { RemoteCancelOutcome, TaskError } from '../errors.js';
import type { TaskRecord } from './record.js';
import { giveUp } from './give-up.js';
import type { TaskView } from './task-view.js';
import type { EngineCore } from './types.js';

/** A task's deadline as its caller set it: which task, whether it cancels, and the error it settles with. */
export interface Deadline {
  /** The task the deadline is for. */
  readonly task: TaskView;
  /** Whether passing the deadline sends `tasks/cancel` for the remote task. */
  readonly cancelRemote: boolean;
  /** The error the task settles with, given what became of the remote task. */
  error(remote: RemoteCancelOutcome): TaskError;
}

/** What deadlines need of their engine. */
export interface DeadlineEngine extends EngineCore {
  /** A deadline's timer fired (one function for every task: no closure per deadline). */
  readonly deadlineDue: (deadline: Deadline) => void;
}

/**
 * Arms the deadline of `record` for clock time `at`. A task already under an earlier (or the same)
 * deadline keeps it; a later one replaces it: the earliest deadline bounds the task (a `resume()`
 * of a task already tracked may bring one of its own).
 */
export function armDeadline(engine: DeadlineEngine, record: TaskRecord, at: number, deadline: Deadline): void {
  const armed = record.deadlineTimer;
  if (armed !== undefined && armed.live) {
    if (armed.at <= at) return;
    engine.scheduler.cancel(armed);
  }
  record.deadlineArmed(engine.scheduler.call(at, engine.deadlineDue, deadline));
}

/** The deadline of `record` passed: the task is given up as its caller asked. */
export function deadlinePassed(engine: EngineCore, record: TaskRecord, deadline: Deadline): void {
  record.deadlinePassed();
  void giveUp(engine, record, {
    cancelRemote: deadline.cancelRemote,
    graceMs: engine.config.cancelGraceMs,
    error: (remote) => deadline.error(remote),
  });
}
