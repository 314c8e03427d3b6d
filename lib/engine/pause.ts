/**
 * The paused state of an engine whose connection is lost: a flag, and the waiters (retries) that
 * go on when the connection comes back.
 */

/** A pause that waiters can await. */
export class Pause {
  private flag = false;
  private waiters: Array<() => void> = [];

  /** True while paused. */
  get paused(): boolean {
    return this.flag;
  }

  /** Enters the paused state. */
  pause(): void {
    this.flag = true;
  }

  /** Leaves the paused state and wakes every waiter; false if it was not paused. */
  resume(): boolean {
    if (!this.flag) return false;
    this.flag = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
    return true;
  }

  /** Resolves when not paused; rejects with the signal's reason if it aborts first. */
  whenResumed(signal: AbortSignal): Promise<void> {
    if (!this.flag) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        reject(signal.reason);
      };
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(wake);
    });
  }

  /** Forgets every waiter (on shutdown). */
  clear(): void {
    this.waiters = [];
  }
}
