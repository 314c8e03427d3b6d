/**
 * Small abort helpers. Every listener added to a caller's signal is removed again, so a long-lived
 * signal collects nothing (the SDK's own `request()` never removes its listener, [S4]).
 */
import type { Scheduler } from '../engine/scheduler.js';

/** Why {@link raceStop} stopped waiting. */
export type StopReason = { readonly kind: 'abort'; readonly reason: unknown } | { readonly kind: 'timeout' };

/** Thrown by {@link raceStop} when the signal or the deadline won. */
export class Stopped {
  constructor(readonly stop: StopReason) {}
}

/**
 * Waits for `promise`, unless `signal` aborts or the clock reaches `deadlineAt` first; then
 * rejects with a {@link Stopped}. `promise` keeps running either way.
 */
export function raceStop<T>(
  promise: Promise<T>,
  scheduler: Scheduler,
  signal: AbortSignal | undefined,
  deadlineAt: number | undefined,
): Promise<T> {
  if (signal === undefined && deadlineAt === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const stop = (reason: StopReason): void => {
      cleanup();
      reject(new Stopped(reason));
    };
    const onAbort = (): void => stop({ kind: 'abort', reason: signal?.reason });
    const timer = deadlineAt === undefined ? undefined : scheduler.schedule(deadlineAt, () => stop({ kind: 'timeout' }));
    const cleanup = (): void => {
      scheduler.cancel(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
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
  const onAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', onAbort) };
}
