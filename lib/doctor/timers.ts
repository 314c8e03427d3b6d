/**
 * The doctor's real-time waits: the timers of the port's request timeouts, and a sleep that a
 * probe's stop cuts short.
 */
import type { Timers } from '../port/port.js';
import { ProbeStopped } from './reply.js';

/** Timers for the port's request timeouts. */
export const TIMERS: Timers = {
  after(ms, run, weak) {
    const timer = setTimeout(run, ms);
    if (weak === true) timer.unref();
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
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', done);
        resolve();
      },
      Math.max(0, ms),
    );
    signal.addEventListener('abort', done, { once: true });
  });
}
