/**
 * The read-only view of a tracked task that the layer above the engine holds (handles, events,
 * references, input routing): what it may read of the task, and how it follows it. It changes
 * nothing: a task's state changes only inside the engine, through the event methods of its record
 * (see the ownership map at the top of `record.ts`). The engine's operations on a task (cancel,
 * give up, detach, deadline, input answers) are methods of `TaskEngine` that take this view.
 */
import type { CallToolResult, Task } from '../types.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { Settlement } from './record-extras.js';

export type { Settlement };

/** A tracked task, read-only: its snapshot, its settlement, its counters and its observers. */
export interface TaskView {
  /** The task id. */
  readonly taskId: string;
  /** Name of the tool that created the task. */
  readonly toolName: string;
  /** Latest accepted snapshot (a placeholder while {@link TaskView.provisional}). */
  readonly task: Task;
  /** A placeholder snapshot stands in until the first real one (a resumed task not read yet). */
  readonly provisional: boolean;
  /**
   * A local stop (a deadline, an abort, `dispose()`, `close()`) or a cancel is under way, or the
   * server accepted a cancel of the task (which may still run, D10): the task is being given up or
   * cancelled, and what it asks is no longer wanted.
   */
  readonly ending: boolean;
  /** How the task ended for this client, once it did. */
  readonly settlement: Settlement | undefined;
  /** Clock time of the settlement. */
  readonly settledAt: number | undefined;
  /** Clock time tracking began (the call, or the resume). */
  readonly startedAt: number;
  /** `tasks/get` requests sent for the task. */
  readonly polls: number;
  /** Status notifications received for the task. */
  readonly notifications: number;
  /** Retries of the task's requests. */
  readonly retries: number;
  /**
   * The input request keys the task has outstanding, as the latest current snapshot that said so
   * told (the tasks extension); `undefined` until one did.
   */
  readonly outstandingInput: ReadonlySet<string> | undefined;
  /**
   * Adds an observer: it gets the current snapshot at once, then every change, then `end`.
   * @returns a function that removes the observer.
   */
  observe(observer: TaskObserver): () => void;
  /** Calls `listener` once with the settlement (at once if already settled). @returns its remover. */
  onSettled(listener: (settlement: Settlement) => void): () => void;
  /** A new promise of the task's result: fulfilled with the result, or rejected with the settlement's error. */
  resultPromise(): Promise<CallToolResult>;
}
