/**
 * The async-iterator adapter over the callback core: one subscriber with its own queue. `break`
 * (which calls `return()`), `throw()` or an aborted signal unsubscribes this iterator only.
 */
import { TaskAbortError, type TaskError } from '../errors.js';
import { onAbort } from './abort.js';
import type { Task } from '../types.js';

/** Receives every accepted snapshot of a task, then one `end`. */
export interface TaskObserver {
  /** A new snapshot (the current one first, on subscribe). */
  next(task: Task): void;
  /** No more snapshots: after the terminal one (`error` undefined), or because tracking stopped. */
  end(error?: TaskError): void;
}

/** Snapshots queued per iterator before the oldest non-terminal ones are dropped. */
export const DEFAULT_ITERATOR_BUFFER = 1_024;

interface Waiter {
  resolve(result: IteratorResult<Task, undefined>): void;
  reject(error: unknown): void;
}

/** An `AsyncIterableIterator` of task snapshots fed by an observer subscription. */
export class SnapshotIterator implements AsyncIterableIterator<Task, undefined> {
  private readonly queue: Task[] = [];
  private waiter: Waiter | undefined;
  private finished = false;
  private failure: unknown = undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly signal: AbortSignal | undefined;
  private offAbort: (() => void) | undefined;

  constructor(
    subscribe: (observer: TaskObserver) => () => void,
    options: { signal?: AbortSignal | undefined; bufferSize?: number | undefined; taskId?: string | undefined } = {},
  ) {
    const limit = options.bufferSize ?? DEFAULT_ITERATOR_BUFFER;
    this.signal = options.signal;
    if (this.signal?.aborted) {
      this.finished = true;
      this.failure = abortError(this.signal, options.taskId);
      return;
    }
    const unsubscribe = subscribe({
      next: (task) => {
        if (this.finished) return;
        const waiter = this.waiter;
        if (waiter !== undefined) {
          this.waiter = undefined;
          waiter.resolve({ value: task, done: false });
          return;
        }
        // A slow consumer keeps the newest snapshots; a terminal one is always last, never dropped.
        if (this.queue.length >= limit) this.queue.shift();
        this.queue.push(task);
      },
      end: (error?: TaskError) => this.finish(error),
    });
    // The subscription may have ended synchronously (a settled task): then release it at once.
    if (this.finished) unsubscribe();
    else this.unsubscribe = unsubscribe;
    if (this.signal !== undefined && !this.finished) {
      const signal = this.signal;
      this.offAbort = onAbort(signal, () => this.finish(abortError(signal, options.taskId), true));
    }
  }

  private finish(error: unknown, dropQueue = false): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    if (dropQueue) this.queue.length = 0;
    this.cleanup();
    const waiter = this.waiter;
    if (waiter === undefined) return;
    this.waiter = undefined;
    if (error === undefined) waiter.resolve({ value: undefined, done: true });
    else {
      this.failure = undefined;
      waiter.reject(error);
    }
  }

  private cleanup(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.offAbort?.();
    this.offAbort = undefined;
  }

  next(): Promise<IteratorResult<Task, undefined>> {
    const value = this.queue.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.finished) {
      const failure = this.failure;
      if (failure !== undefined) {
        this.failure = undefined;
        return Promise.reject(failure);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    if (this.waiter !== undefined)
      return Promise.reject(new TypeError('next() called while a previous next() is pending'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<Task, undefined>> {
    this.queue.length = 0;
    this.finish(undefined);
    this.failure = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<Task, undefined>> {
    this.queue.length = 0;
    this.finish(undefined);
    this.failure = undefined;
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** A {@link TaskAbortError} for an aborted waiter. */
export function abortError(signal: AbortSignal, taskId: string | undefined): TaskAbortError {
  return new TaskAbortError('The wait was aborted', { reason: signal.reason, taskId });
}
