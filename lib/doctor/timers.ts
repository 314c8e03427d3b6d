/**
 * The doctor's real-time waits: the timers of the port's request timeouts, and a sleep that a
 * probe's stop cuts short.
 */
import type { Timers } from '../port/port.js';
import { ProbeStopped } from './reply.js';

/** The longest a timer waits (2^31 - 1 ms, about 24.8 days): a longer delay would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * `ms` as a timer's delay: at most {@link MAX_TIMER_MS}. A bound is the sum of several (a probe's
 * bound, a request's timeout, a margin), each of which may be the longest a timer waits: waiting
 * that long instead is the same for any run.
 */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/** Timers for the port's request timeouts. */
export const TIMERS: Timers = {
  after(ms, run, weak) {
    const timer: unknown = setTimeout(run, timerDelay(ms));
    // Node's and Bun's timers can stop holding the process; a browser's or a Worker's is a number.
    if (weak === true) (timer as { unref?: () => void }).unref?.();
    return timer;
  },
  cancel(timer) {
    clearTimeout(timer as ReturnType<typeof setTimeout>);
  },
};

/** Waits `ms`, or rejects with {@link ProbeStopped} when `signal` aborts first. */
export function stoppableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ProbeStopped('stopped'));
    const done = (): void => {
      clearTimeout(timer);
      reject(new ProbeStopped('stopped'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, timerDelay(ms));
    signal.addEventListener('abort', done, { once: true });
  });
}
