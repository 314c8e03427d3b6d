/**
 * `TaskHandle`: the caller's view of one tool call run as a task (or answered at once). A thin
 * facade: the promise and iterator adapters over the engine's callback core, and the stop
 * operations delegated to the client.
 */
import { TaskOptionError, type TaskError } from '../errors.js';
import { SafeEmitter, type TaskHandleEvents } from './events.js';
import { failedError } from '../engine/failure.js';
import type { TaskRecord } from '../engine/record.js';
import { onAbort } from '../util/abort.js';
import { SnapshotIterator, abortError } from '../util/snapshot-iterator.js';
import type { TaskReference } from './reference.js';
import type { CallToolResult, Task } from '../types.js';

/** Options of {@link TaskHandle.result}. */
export interface ResultOptions {
  /** Stops this wait only: the task and other waiters carry on. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link TaskHandle.updates}. */
export interface UpdatesOptions {
  /** Ends this iterator only (it throws a `TaskAbortError`); the task and other consumers carry on. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Snapshots buffered for a slow consumer before the oldest are dropped (the terminal one never is).
   * @default 1024
   */
  readonly bufferSize?: number | undefined;
}

/** The client operations a handle delegates to (not for direct use). */
export interface HandleBackend {
  /** Starts observing a resumed task. */
  activate(record: TaskRecord): void;
  cancel(record: TaskRecord): Promise<Task>;
  detach(record: TaskRecord): TaskReference;
  dispose(record: TaskRecord): Promise<void>;
  reference(record: TaskRecord): TaskReference;
  /** Reports a throwing listener. */
  report(error: TaskError): void;
}

type Source =
  | { readonly kind: 'task'; readonly record: TaskRecord; readonly backend: HandleBackend }
  | { readonly kind: 'immediate'; readonly result: CallToolResult };

/** What kind of handle: `task` when the server created a task, `immediate` for a plain result. */
export type HandleKind = 'task' | 'immediate';

/**
 * A tool call in progress or done, of kind `K`. You get a {@link TaskHandle} (either kind) from
 * `TaskClient.callToolAsTask`; checking `handle.kind === 'task'` narrows it to
 * `TaskHandleOf<'task'>`, whose `taskId` is a `string`. Cheap: all state lives in the client's
 * engine; any number of `result()` awaiters and iterators can share it.
 */
export class TaskHandleOf<K extends HandleKind = HandleKind> implements AsyncIterable<Task> {
  /** `task` when the server created a task; `immediate` when it answered with a plain result. */
  readonly kind: K;
  /** The task id; `undefined` for an immediate handle. */
  readonly taskId: K extends 'task' ? string : undefined;
  /** The tool that was called. */
  readonly toolName: string;
  /** The server's `io.modelcontextprotocol/model-immediate-response` hint, if it sent one ([R39]). */
  readonly immediateResponse: string | undefined;
  private readonly source: Source;
  private memo: Promise<CallToolResult> | undefined;
  private emitter: SafeEmitter<TaskHandleEvents> | undefined;

  private constructor(toolName: string, source: Source, immediateResponse: string | undefined) {
    this.toolName = toolName;
    this.source = source;
    this.kind = source.kind as K;
    this.taskId = (source.kind === 'task' ? source.record.taskId : undefined) as K extends 'task' ? string : undefined;
    this.immediateResponse = immediateResponse;
  }

  /** @internal Made by `TaskClient` (`callToolAsTask`, `resume`) only. */
  static create(toolName: string, source: Source, immediateResponse?: string): TaskHandle {
    return new TaskHandleOf(toolName, source, immediateResponse) as TaskHandle;
  }

  /**
   * The latest snapshot; `undefined` for an immediate handle, and for a resumed task not yet read
   * from the server.
   */
  get task(): Task | undefined {
    const source = this.source;
    return source.kind === 'task' && !source.record.provisional ? source.record.task : undefined;
  }

  /** Starts observing (a resumed task is read only once someone observes it). */
  private observed(): void {
    if (this.source.kind === 'task') this.source.backend.activate(this.source.record);
  }

  /** @internal This handle's emitter, if anyone ever listened. */
  get events(): SafeEmitter<TaskHandleEvents> | undefined {
    return this.emitter;
  }

  /**
   * Listens to this task's lifecycle events (`status`, `inputRequired`, `progress`, `completed`,
   * `failed`, `cancelled`, `timeout`, `expired`, `settled`); see {@link TaskHandleEvents}. A listener
   * that throws is reported on the client's `error` event. An immediate handle emits nothing.
   * @returns a function that removes the listener.
   */
  on<K extends keyof TaskHandleEvents>(event: K, listener: (...args: TaskHandleEvents[K]) => void): () => void {
    return this.listen()?.on(event, listener) ?? (() => {});
  }

  /** Like {@link TaskHandle.on}, for one event only. */
  once<K extends keyof TaskHandleEvents>(event: K, listener: (...args: TaskHandleEvents[K]) => void): () => void {
    return this.listen()?.once(event, listener) ?? (() => {});
  }

  /** The emitter, made on first use (listening also starts observing); none for an immediate handle. */
  private listen(): SafeEmitter<TaskHandleEvents> | undefined {
    const source = this.source;
    if (source.kind === 'immediate') return undefined;
    this.emitter ??= new SafeEmitter<TaskHandleEvents>((error) => source.backend.report(error));
    this.observed();
    return this.emitter;
  }

  /** Removes a listener added with {@link TaskHandle.on}. */
  off<K extends keyof TaskHandleEvents>(event: K, listener: (...args: TaskHandleEvents[K]) => void): void {
    this.emitter?.off(event, listener);
  }

  /** True once `result()` would settle at once. */
  get settled(): boolean {
    return this.source.kind === 'immediate' || this.source.record.settlement !== undefined;
  }

  /**
   * The tool's result, fetched once and shared by every caller.
   * @throws TaskFailedError when the task failed (with the server's payload and message).
   * @throws TaskCancelledError when the task was cancelled.
   * @throws TaskTimeoutError, TaskAbortError, TaskExpiredError, TaskNotFoundError, TaskDetachedError,
   *   TaskClosedError when the wait ended locally or the task vanished.
   * @throws TaskAbortError when `options.signal` aborts (this wait only).
   */
  result(options: ResultOptions = {}): Promise<CallToolResult> {
    this.observed();
    this.memo ??= this.settle();
    const signal = options.signal;
    if (signal === undefined) return this.memo;
    if (signal.aborted) return Promise.reject(abortError(signal, this.taskId));
    const memo = this.memo;
    return new Promise((resolve, reject) => {
      const off = onAbort(signal, () => reject(abortError(signal, this.taskId)));
      memo.then(
        (value) => {
          off();
          resolve(value);
        },
        (error: unknown) => {
          off();
          reject(error);
        },
      );
    });
  }

  private settle(): Promise<CallToolResult> {
    const source = this.source;
    if (source.kind === 'immediate') {
      const result = source.result;
      if (result.isError !== true) return Promise.resolve(result);
      return Promise.reject(failedError(this.toolName, undefined, { result }));
    }
    return new Promise((resolve, reject) => {
      source.record.onSettled((settlement) => {
        if (settlement.ok) resolve(settlement.result);
        else reject(settlement.error);
      });
    });
  }

  /**
   * A new iterator over this task's snapshots: the current one first, then every change, ending
   * after the terminal one. Each iterator is independent; `break` affects no other consumer.
   * An immediate handle yields nothing.
   * @throws (from `next()`) the error that stopped tracking early: TaskTimeoutError, TaskAbortError,
   *   TaskClosedError, TaskExpiredError, TaskNotFoundError.
   */
  updates(options: UpdatesOptions = {}): AsyncIterableIterator<Task, undefined> {
    const bufferSize = options.bufferSize;
    if (bufferSize !== undefined && !(Number.isInteger(bufferSize) && bufferSize >= 1)) {
      throw new TaskOptionError(`Option "bufferSize" must be an integer >= 1, got ${String(bufferSize)}`, {
        option: 'bufferSize',
        taskId: this.taskId,
      });
    }
    const source = this.source;
    if (source.kind === 'immediate') {
      return new SnapshotIterator(
        (observer) => {
          observer.end();
          return () => {};
        },
        { signal: options.signal },
      );
    }
    this.observed();
    return new SnapshotIterator((observer) => source.record.observe(observer), {
      signal: options.signal,
      bufferSize: options.bufferSize,
      taskId: this.taskId,
    });
  }

  /** Same as {@link TaskHandle.updates} without options, so `for await (const t of handle)` works. */
  [Symbol.asyncIterator](): AsyncIterator<Task> {
    return this.updates();
  }

  /**
   * Cancels the remote task with `tasks/cancel` and returns the final snapshot. When the task had
   * already finished (the server answers -32602, [V23]) it re-reads the task and returns that
   * truth instead of failing. `result()` then rejects with `TaskCancelledError` (or settles as the
   * task really ended). A settled or immediate handle returns its last snapshot.
   * @throws TaskNotSupportedError when the server did not declare `tasks.cancel`.
   * @throws TaskRpcError when the cancel request fails.
   */
  async cancel(): Promise<Task | undefined> {
    return this.source.kind === 'task' ? this.source.backend.cancel(this.source.record) : undefined;
  }

  /**
   * Stops tracking locally and leaves the remote task running. Pending `result()` calls reject with
   * `TaskDetachedError`; iterators end. Returns what `TaskClient.resume` needs to pick it up again.
   * Returns `undefined` for an immediate handle.
   */
  detach(): TaskReference | undefined {
    return this.source.kind === 'task' ? this.source.backend.detach(this.source.record) : undefined;
  }

  /** A resume reference for this task (see {@link TaskHandle.detach}); `undefined` when immediate. */
  toJSON(): TaskReference | undefined {
    return this.source.kind === 'task' ? this.source.backend.reference(this.source.record) : undefined;
  }

  /**
   * Cancels the remote task if it is still running and stops tracking; free on a settled handle.
   * This is what `await using` calls on scope exit. Call {@link TaskHandle.detach} first to keep
   * the task running instead.
   */
  async dispose(): Promise<void> {
    if (this.source.kind === 'task') await this.source.backend.dispose(this.source.record);
  }

  /** `await using handle = await tasks.callToolAsTask(...)` support; see {@link TaskHandle.dispose}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/**
 * What `TaskClient.callToolAsTask` and `TaskClient.resume` give: a {@link TaskHandleOf} of either
 * kind. Narrow it with `handle.kind === 'task'`; `handle instanceof TaskHandle` also works.
 */
export type TaskHandle = TaskHandleOf<'task'> | TaskHandleOf<'immediate'>;

/** The runtime class of every {@link TaskHandle}, for `instanceof` checks. */
export const TaskHandle: typeof TaskHandleOf = TaskHandleOf;
