/**
 * Retrying transient failures with `p-retry`. The waits between attempts run on the engine's
 * scheduler (the injected clock), so tests stay deterministic and an idle retry keeps no stray
 * Node timer; `p-retry` does the attempt bookkeeping and the abort handling.
 */
import pRetry from 'p-retry';
import { TaskProtocolError, TaskRpcError } from '../errors.js';
import type { Scheduler } from './scheduler.js';
import { backoffDelay, type RetryPolicy } from './timing.js';

/** JSON-RPC codes that are never retried: the request itself is wrong. */
const PROTOCOL_CODES: ReadonlySet<number> = new Set([-32600, -32601, -32602]);

/** True for failures worth another attempt: timeouts, lost connections, HTTP 5xx and 429. */
export function isTransient(error: unknown): boolean {
  return error instanceof TaskRpcError && error.transient && !PROTOCOL_CODES.has(error.code);
}

/** Waits `ms` on `scheduler`; rejects with the signal's reason when `signal` aborts. */
export function sleep(scheduler: Scheduler, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      scheduler.cancel(timer);
      reject(signal?.reason);
    };
    const timer = scheduler.after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What {@link withRetry} needs besides the operation. */
export interface RetryContext {
  readonly policy: RetryPolicy;
  readonly scheduler: Scheduler;
  readonly random: () => number;
  readonly now: () => number;
  /** Stops retrying (and the current wait) when aborted. */
  readonly signal?: AbortSignal | undefined;
  /** Called before each retry with the error and the wait chosen. */
  readonly onRetry?: ((error: unknown, attempt: number, delayMs: number) => void) | undefined;
  /**
   * While paused (connection lost), failures use up no attempt and no time budget: the retry
   * waits for `whenResumed()` instead of backing off.
   */
  readonly pause?: { isPaused(): boolean; whenResumed(): Promise<void> } | undefined;
}

/**
 * Runs `operation`, retrying transient failures ({@link isTransient}) with exponential backoff and
 * jitter, within `policy.retries` attempts and `policy.maxElapsedMs`. Protocol errors
 * (-32600, -32601, -32602) and malformed replies are never retried.
 * @throws the last error when retrying stops, or the signal's reason when aborted.
 */
export function withRetry<T>(operation: (attempt: number) => Promise<T>, context: RetryContext): Promise<T> {
  const { policy, scheduler, random, now, signal, onRetry, pause } = context;
  if (policy.retries <= 0 && pause === undefined) return operation(1);
  let started = now();
  return pRetry(operation, {
    retries: policy.retries,
    minTimeout: 0,
    signal,
    shouldConsumeRetry: () => pause?.isPaused() !== true,
    shouldRetry: async ({ error, attemptNumber }) => {
      if (error instanceof TaskProtocolError || !isTransient(error)) return false;
      if (pause?.isPaused() === true) {
        await pause.whenResumed();
        started = now();
        return true;
      }
      const delay = backoffDelay(attemptNumber, policy, random);
      if (now() + delay - started > policy.maxElapsedMs) return false;
      onRetry?.(error, attemptNumber, delay);
      await sleep(scheduler, delay, signal);
      return true;
    },
  });
}
