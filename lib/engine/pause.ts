/**
 * The paused state of an engine whose connection is lost: a flag, and the waiters (retries) that
 * go on when the connection comes back.
 */
import { onAbort } from '../util/abort.js';

/** A pause that waiters can await. */
export class Pause {
  private flag = false;
  private waiters: Array<{ wake(): void; fail(error: unknown): void }> = [];

  /** True while paused. */
  get paused(): boolean {
    return this.flag;
  }

  /** Enters the paused state. */
  pause(): void {
    this.flag = true;
  }

  /** Leaves the paused state and wakes every waiter; false if it was not paused. */
  unpause(): boolean {
    if (!this.flag) return false;
    this.flag = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.wake();
    return true;
  }

  /** Resolves when not paused; rejects with the signal's reason if it aborts first. */
  whenUnpaused(signal: AbortSignal): Promise<void> {
    if (!this.flag) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const waiter = {
        wake: (): void => {
          off();
          resolve();
        },
        fail: (error: unknown): void => {
          off();
          reject(error);
        },
      };
      this.waiters.push(waiter);
      const off = onAbort(signal, () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal.reason);
      });
    });
  }

  /** Rejects every waiter with `error` (on shutdown: no wait may stay pending forever). */
  clear(error: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.fail(error);
  }
}
