/**
 * The {@link HandleBackend} of a TaskClient's handles: what a handle's `cancel()`, `detach()`,
 * `dispose()`, `toJSON()` and metrics do with its record, on the client's engine.
 */
import type { TaskEngine } from '../engine/engine.js';
import type { TaskView } from '../engine/task-view.js';
import type { TaskError } from '../errors.js';
import { metricsOf } from './events.js';
import type { HandleBackend } from './handle.js';
import { referenceOf } from './reference.js';
import { detachRecord, disposeRecord } from './stops.js';

/** What the backend needs from its TaskClient besides the engine. */
export interface BackendHost {
  /** Lets an input callback still answering for `record` keep going (it outlives the handle). */
  keepInput(record: TaskView): void;
  now(): number;
  /** Reports a throwing listener (on the client's `error` event). */
  report(error: TaskError): void;
}

/** The backend of every handle of a TaskClient whose engine is `engine`. */
export function handleBackend(engine: TaskEngine, host: BackendHost): HandleBackend {
  return {
    activate: (record) => engine.activate(record),
    // A resumed task nobody observed yet is observed from its cancel on: what the cancel showed
    // (a cancelled or finished task) settles the handle, and one still running is followed.
    cancel: (record) =>
      engine.cancel(record).then((task) => {
        engine.activate(record);
        return task;
      }),
    detach: (record) => {
      const reference = referenceOf(record, engine.wire);
      // detach() leaves the remote task running: an input callback still answering keeps going.
      host.keepInput(record);
      detachRecord(engine, record);
      return reference;
    },
    dispose: (record) => disposeRecord(engine, record),
    reference: (record) => referenceOf(record, engine.wire),
    metrics: (record) => metricsOf(record, host.now()),
    report: (error) => host.report(error),
  };
}
