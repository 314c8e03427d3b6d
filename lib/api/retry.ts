/**
 * Public types of retrying: how failed requests are retried, and the options that tune it.
 */

/** How failed requests are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  readonly retries: number;
  /** Delay before the first retry. */
  readonly minDelayMs: number;
  /** Largest delay between two attempts. */
  readonly maxDelayMs: number;
  /** Growth factor per attempt. */
  readonly factor: number;
  /** Fraction of each delay that is randomised (0 = none, 1 = full jitter). */
  readonly jitter: number;
  /** Give up once this much time passed since the first attempt. */
  readonly maxElapsedMs: number;
}

/** Retries of transient failures, field by field; an absent or `undefined` field keeps its default. */
export type RetryOptions = { readonly [K in keyof RetryPolicy]?: RetryPolicy[K] | undefined };
