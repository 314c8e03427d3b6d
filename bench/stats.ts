/**
 * Small numeric helpers for the benchmark: a seeded PRNG (so every contender gets the same task
 * durations), percentiles, and a wall-aligned clock shared by server and client.
 */
import { performance } from 'node:perf_hooks';

/**
 * Milliseconds on a wall-aligned monotonic clock: `performance.timeOrigin + performance.now()`.
 * In one process this is exactly `performance.now()` shifted by a constant, so in-process lags are
 * differences of one monotonic clock. Across processes (stdio) both sides use the same formula and
 * the harness estimates the residual offset with a ping exchange (see bench/README.md).
 */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** A seeded PRNG (mulberry32) returning values in [0, 1), so every contender gets the same durations. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The `p`-th percentile (0-100) of `values` by nearest rank; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Median of `values` (NaN when empty); the mean of the two middle values for an even count. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rounds to `digits` decimals, keeping non-finite values as they are. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
