/**
 * Small abort helpers. Every listener added to a caller's signal is removed again, so a long-lived
 * signal collects nothing (the SDK's own `request()` never removes its listener, [S4]).
 */
import { onAbort, raceAbort } from './abort.js';
import { noop } from './noop.js';

/** A timer queue on some clock (the engine's scheduler fits). */
export interface TimerQueue {
  /** Runs `run` at clock time `at`. */
  schedule(at: number, run: () => void): unknown;
  /** Cancels what {@link TimerQueue.schedule} returned. */
  cancel(timer: unknown): void;
}

/** Why {@link raceStop} stopped waiting. */
export type StopReason =
  { readonly kind: 'abort'; readonly reason: unknown } | { readonly kind: 'timeout' } | { readonly kind: 'closed' };

/** Thrown by {@link raceStop} when the signal or the deadline won. */
export class Stopped {
  constructor(readonly stop: StopReason) {}
}

/**
 * Waits for `promise`, unless `signal` aborts, the clock reaches `deadlineAt` or `closed` aborts
 * first; then rejects with a {@link Stopped}. `promise` keeps running either way: when it loses,
 * its own later rejection is handled here (never an unhandled rejection). Every listener and the
 * timer are removed as soon as one of them wins, so a caller's long-lived signal keeps nothing of
 * the call.
 */
export function raceStop<T>(
  promise: Promise<T>,
  scheduler: TimerQueue,
  signal: AbortSignal | undefined,
  deadlineAt: number | undefined,
  closed?: AbortSignal,
): Promise<T> {
  // Only `closed` to race (a call without a signal or deadline, the usual one): no timer, half the closures.
  if (signal === undefined && deadlineAt === undefined)
    return closed === undefined ? promise : raceAbort(promise, closed, closedStop);
  const early: StopReason | undefined =
    closed?.aborted === true
      ? { kind: 'closed' }
      : signal?.aborted === true
        ? { kind: 'abort', reason: signal.reason }
        : undefined;
  if (early !== undefined) {
    promise.then(undefined, noop);
    return Promise.reject(new Stopped(early));
  }
  return new Promise<T>((resolve, reject) => {
    let offSignal: (() => void) | undefined;
    let offClosed: (() => void) | undefined;
    const cleanup = (): void => {
      scheduler.cancel(timer);
      offSignal?.();
      offClosed?.();
    };
    const stop = (reason: StopReason): void => {
      cleanup();
      reject(new Stopped(reason));
    };
    const timer =
      deadlineAt === undefined ? undefined : scheduler.schedule(deadlineAt, () => stop({ kind: 'timeout' }));
    if (signal !== undefined) offSignal = onAbort(signal, () => stop({ kind: 'abort', reason: signal.reason }));
    if (closed !== undefined) offClosed = onAbort(closed, () => stop({ kind: 'closed' }));
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

/** What a race with only `closed` rejects with (a shared reason: nothing of the call in it). */
const CLOSED: StopReason = Object.freeze({ kind: 'closed' });

/** The rejection of a race that `closed` won. */
export const closedStop = (): Stopped => new Stopped(CLOSED);
