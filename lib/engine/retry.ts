/**
 * Retrying transient failures with `p-retry`. The waits between attempts run on the engine's
 * scheduler (the injected clock), so tests stay deterministic and an idle retry keeps no stray
 * Node timer; `p-retry` does the attempt bookkeeping and the abort handling.
 */
import pRetry from 'p-retry';
import { onAbort } from '../util/abort.js';
import type { Scheduler } from '../util/scheduler.js';
import type { RetryPolicy } from '../api/index.js';
import { backoffDelay } from './timing.js';

/**
 * Waits `ms` on `scheduler`; rejects with the signal's reason when `signal` aborts. A `weak` wait
 * does not keep the process alive.
 */
export function sleep(scheduler: Scheduler, ms: number, signal?: AbortSignal, weak = false): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = scheduler.after(
      ms,
      () => {
        off?.();
        resolve();
      },
      weak,
    );
    const off =
      signal === undefined
        ? undefined
        : onAbort(signal, () => {
            scheduler.cancel(timer);
            reject(signal.reason);
          });
  });
}

/** What {@link retryAfter} needs besides the operation. */
export interface RetryContext {
  /** True for a failure worth another attempt (the wire decides: timeouts, lost connections, ...). */
  readonly retryable: (error: unknown) => boolean;
  readonly policy: RetryPolicy;
  readonly scheduler: Scheduler;
  readonly random: () => number;
  readonly now: () => number;
  /** Stops retrying (and the current wait) when aborted; read only once a retry is needed. */
  readonly signal?: (() => AbortSignal | undefined) | undefined;
  /** Called before each retry with the error and the wait chosen. */
  readonly onRetry?: ((error: unknown, attempt: number, delayMs: number) => void) | undefined;
  /**
   * While paused (connection lost), failures use up no attempt and no time budget: the retry
   * waits for `whenUnpaused()` instead of backing off.
   */
  readonly pause?: { isPaused(): boolean; whenUnpaused(): Promise<void> } | undefined;
  /** Background work: waits between attempts never keep the process alive. */
  readonly weak?: boolean | undefined;
}

/**
 * Goes on after a first attempt of `operation` failed with `first` (the first attempt runs
 * without any retry machinery, so the common path costs nothing): retries the failures
 * `context.retryable` accepts with exponential backoff and jitter, within `policy.retries`
 * retries and `policy.maxElapsedMs`, or rejects with `first` when it is not worth a retry.
 * @throws the last error when retrying stops, or the signal's reason when aborted.
 */
export async function retryAfter<T>(
  first: unknown,
  operation: (attempt: number) => Promise<T>,
  context: RetryContext,
): Promise<T> {
  const { policy, scheduler, random, now, onRetry, pause, retryable } = context;
  const paused = (): boolean => pause?.isPaused() === true;
  if (!retryable(first) || (policy.retries <= 0 && !paused())) throw first;
  const signal = context.signal?.();
  let started = now();
  /** Waits before retry number `attempt` (1-based): until the connection is back, or a backoff. */
  const wait = async (error: unknown, attempt: number): Promise<boolean> => {
    if (paused()) {
      await pause?.whenUnpaused();
      started = now();
      return true;
    }
    const delay = backoffDelay(attempt, policy, random);
    if (now() + delay - started > policy.maxElapsedMs) return false;
    onRetry?.(error, attempt, delay);
    await sleep(scheduler, delay, signal, context.weak === true);
    return true;
  };
  const firstConsumed = !paused();
  if (!(await wait(first, 1))) throw first;
  let retried = firstConsumed ? 1 : 0;
  return pRetry((attempt) => operation(attempt + 1), {
    retries: Math.max(0, policy.retries - retried),
    minTimeout: 0,
    signal,
    shouldConsumeRetry: () => !paused(),
    shouldRetry: async ({ error }) => {
      if (!retryable(error)) return false;
      if (!paused()) retried += 1;
      return wait(error, Math.max(retried, 1));
    },
  });
}
