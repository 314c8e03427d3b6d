/**
 * The {@link HandleBackend} of a TaskClient's handles: what a handle's `cancel()`, `detach()`,
 * `dispose()`, `toJSON()` and metrics do with its record, on the client's engine, and the errors
 * `detach()` and `dispose()` settle it with.
 */
import type { TaskEngine } from '../../engine/engine.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskCancelledError, TaskDetachedError, describeRemoteCancel, type TaskError } from '../../errors.js';
import { metricsOf } from '../events/emitter.js';
import type { HandleBackend } from './handle.js';
import { referenceOf } from './reference.js';

/** The parts of its TaskClient that the backend uses (see facade/parts.ts). */
export interface BackendParts {
  readonly engine: TaskEngine;
  /** `keepInput` lets an input callback still answering for a task keep going (it outlives the handle). */
  readonly live: { keepInput(record: TaskView): void };
  now(): number;
  /** Reports a throwing listener (on the client's `error` event). */
  report(error: TaskError): void;
}

/** The backend of every handle of a TaskClient. */
export function handleBackend(parts: BackendParts): HandleBackend {
  const { engine } = parts;
  return {
    activate: (record) => engine.activate(record),
    // A resumed task nobody observed yet is observed from its cancel on: what the cancel showed
    // (a cancelled or finished task) settles the handle, and one still running is followed, a
    // cancel that failed (refused, say) included.
    cancel: (record) =>
      engine.cancel(record).then(
        (task) => {
          engine.activate(record);
          return task;
        },
        (error: unknown) => {
          engine.activate(record);
          throw error;
        },
      ),
    detach: (record) => {
      const reference = referenceOf(record, engine.wire);
      // detach() leaves the remote task running: an input callback still answering keeps going.
      parts.live.keepInput(record);
      detachRecord(engine, record);
      return reference;
    },
    dispose: (record) => disposeRecord(engine, record),
    reference: (record) => referenceOf(record, engine.wire),
    metrics: (record) => metricsOf(record, parts.now()),
    report: (error) => parts.report(error),
  };
}

/** Stops tracking without touching the remote task: `result()` rejects with `TaskDetachedError`, iterators end. */
export function detachRecord(engine: TaskEngine, record: TaskView): void {
  engine.detach(
    record,
    new TaskDetachedError('The handle was detached; the remote task keeps running', {
      task: record.task,
      toolName: record.toolName,
    }),
  );
}

/**
 * Cancels the remote task if it still runs and stops tracking (`await using`); free when settled.
 * `result()` then rejects with `TaskCancelledError` when the cancel went through, otherwise with
 * `TaskDetachedError` saying what became of the remote task; iterators end normally.
 */
export async function disposeRecord(engine: TaskEngine, record: TaskView): Promise<void> {
  await engine.giveUp(record, {
    cancelRemote: true,
    graceMs: engine.config.cancelGraceMs,
    throwFromIterators: false,
    error: (remote) => {
      const message = `The handle was disposed; ${describeRemoteCancel(remote)}`;
      const common = { task: record.task, toolName: record.toolName };
      return remote === 'cancelled' ? new TaskCancelledError(message, common) : new TaskDetachedError(message, common);
    },
  });
}
