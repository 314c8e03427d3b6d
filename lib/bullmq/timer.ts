/**
 * A timer for any delay. `setTimeout` holds at most 2^31-1 ms (about 24.8 days): a longer delay
 * (a `retry.maxDelayMs` or a `reconnectGraceMs` of a month) would fire at once, Node waiting 1 ms
 * instead. A longer one is made of several timers here.
 */

/** Longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2_147_483_647;

/** A timer made by {@link later}. */
export interface Later {
  /** Cancels it (harmless once it ran). */
  clear(): void;
}

/** Runs `run` after `ms`; with `held: false` the timer does not keep the process alive. */
export function later(run: () => void, ms: number, held = true): Later {
  let left = ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    const step = Math.min(left, MAX_TIMER_MS);
    left -= step;
    timer = setTimeout(() => (left > 0 ? arm() : run()), step);
    if (!held) timer.unref();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

/**
 * `promise`, or `fallback` once `ms` passed without it; the timer goes with the race (with
 * `held: false` it never keeps the process alive).
 */
export function atMost<T>(promise: Promise<T>, ms: number, fallback: T, held = true): Promise<T> {
  let timer: Later | undefined;
  const late = new Promise<T>((resolve) => (timer = later(() => resolve(fallback), ms, held)));
  return Promise.race([promise, late]).finally(() => timer?.clear());
}
