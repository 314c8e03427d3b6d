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
  /**
   * Calls of `next()` waiting for a snapshot, oldest first. Like an async generator's, calls made
   * before the previous one settled are queued and settle in order, each with its own snapshot.
   */
  private readonly waiters: Waiter[] = [];
  private finished = false;
  private failure: unknown = undefined;
  private unsubscribe: (() => void) | undefined = undefined;
  private readonly signal: AbortSignal | undefined;
  private offAbort: (() => void) | undefined = undefined;

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
        const waiter = this.waiters.shift();
        if (waiter !== undefined) {
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
    const waiters = this.waiters.splice(0);
    const first = waiters[0];
    if (first === undefined) return;
    // The oldest waiting call gets the error, as an async generator's would; the others, and
    // every later call, find the iterator done.
    if (error === undefined) first.resolve({ value: undefined, done: true });
    else {
      this.failure = undefined;
      first.reject(error);
    }
    for (let i = 1; i < waiters.length; i += 1) waiters[i]?.resolve({ value: undefined, done: true });
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
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
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
