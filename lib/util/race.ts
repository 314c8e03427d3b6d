/**
 * Small abort helpers. Every listener added to a caller's signal is removed again, so a long-lived
 * signal collects nothing (the SDK's own `request()` never removes its listener, [S4]).
 */
import { onAbort, raceAbort } from './abort.js';

/** A timer queue on some clock (the engine's scheduler fits). */
export interface TimerQueue {
  /** Runs `run` at clock time `at`. */
  schedule(at: number, run: () => void): unknown;
  /** Cancels what {@link TimerQueue.schedule} returned. */
  cancel(timer: unknown): void;
}

/** Why {@link raceStop} stopped waiting. */
export type StopReason =
  | { readonly kind: 'abort'; readonly reason: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'closed' };

/** Thrown by {@link raceStop} when the signal or the deadline won. */
export class Stopped {
  constructor(readonly stop: StopReason) {}
}

/**
 * Waits for `promise`, unless `signal` aborts, the clock reaches `deadlineAt` or `closed` aborts
 * first; then rejects with a {@link Stopped}. `promise` keeps running either way.
 */
export function raceStop<T>(
  promise: Promise<T>,
  scheduler: TimerQueue,
  signal: AbortSignal | undefined,
  deadlineAt: number | undefined,
  closed?: AbortSignal,
): Promise<T> {
  if (closed !== undefined) {
    return raceAbort(raceStop(promise, scheduler, signal, deadlineAt), closed, () => new Stopped({ kind: 'closed' }));
  }
  if (signal === undefined && deadlineAt === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const stop = (reason: StopReason): void => {
      cleanup();
      reject(new Stopped(reason));
    };
    let off: (() => void) | undefined;
    const timer = deadlineAt === undefined ? undefined : scheduler.schedule(deadlineAt, () => stop({ kind: 'timeout' }));
    const cleanup = (): void => {
      scheduler.cancel(timer);
      off?.();
    };
    if (signal?.aborted) {
      stop({ kind: 'abort', reason: signal.reason });
      return;
    }
    if (signal !== undefined) off = onAbort(signal, () => stop({ kind: 'abort', reason: signal.reason }));
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}

/**
 * A controller that aborts when `parent` does, for one request. Call `release()` when the request
 * is over to detach from `parent`.
 */
export function childController(parent: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (parent === undefined) return { signal: controller.signal, release: () => {} };
  const release = onAbort(parent, () => controller.abort(parent.reason));
  return { signal: controller.signal, release };
}
