/**
 * The client-side concurrency limit (`maxConcurrentTasks`): a slot is held from the start of a
 * call until its task settles. Calls beyond the limit wait in a FIFO queue, abortable by their
 * signal and bounded by their deadline, or are rejected at once when queueing is off.
 */
import type { Scheduler, Timer } from '../../util/scheduler.js';
import { TaskQueueFullError } from '../../errors.js';
import { onAbort } from '../../util/abort.js';
import { Stopped } from '../../util/race.js';

/** The release of a slot that holds nothing (no concurrency limit). */
export const NO_RELEASE = (): void => {};

/** The slot of a limiter without a limit: nothing to wait for or release. */
const NO_SLOT: Promise<() => void> = Promise.resolve(NO_RELEASE);

interface Waiter {
  readonly grant: (release: () => void) => void;
  readonly fail: (error: unknown) => void;
}

/** A FIFO counting semaphore. */
export class Limiter {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    /** Most slots held at once; `Infinity` disables the limit. */
    readonly max: number,
    private readonly scheduler: Scheduler,
    /** `reject`: {@link Limiter.slot} rejects at once when no slot is free, instead of queueing. */
    private readonly whenFull: 'queue' | 'reject' = 'queue',
  ) {}

  /** Calls waiting for a slot. */
  get pending(): number {
    return this.queue.length;
  }

  /** True without a limit: every call's slot is {@link NO_RELEASE}, at once. */
  get unlimited(): boolean {
    return this.max === Infinity;
  }

  /** True when a slot is free now. */
  get available(): boolean {
    return this.running < this.max;
  }

  /**
   * Waits for a slot (FIFO). Rejects with a {@link Stopped} when `signal` aborts or the clock
   * reaches `deadlineAt` first. The returned function releases the slot (once).
   */
  acquire(signal: AbortSignal | undefined, deadlineAt: number | undefined): Promise<() => void> {
    if (this.running < this.max && this.queue.length === 0) return Promise.resolve(this.take());
    return new Promise((resolve, reject) => {
      let timer: Timer | undefined;
      // eslint-disable-next-line prefer-const -- assigned after the waiter it removes exists
      let off: (() => void) | undefined;
      const cleanup = (): void => {
        this.scheduler.cancel(timer);
        off?.();
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
      };
      const waiter: Waiter = {
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        fail: (error) => {
          cleanup();
          reject(error);
        },
      };
      if (deadlineAt !== undefined) {
        timer = this.scheduler.schedule(deadlineAt, () => waiter.fail(new Stopped({ kind: 'timeout' })));
      }
      this.queue.push(waiter);
      off =
        signal === undefined
          ? undefined
          : onAbort(signal, () => waiter.fail(new Stopped({ kind: 'abort', reason: signal.reason })));
    });
  }

  /**
   * A slot for a call to `toolName`: {@link NO_RELEASE} at once without a limit, else as
   * {@link Limiter.acquire} gives it.
   * @throws TaskQueueFullError (as a rejection) with `whenFull: 'reject'` when no slot is free.
   */
  slot(toolName: string, signal: AbortSignal | undefined, deadlineAt: number | undefined): Promise<() => void> {
    if (this.max === Infinity) return NO_SLOT;
    if (this.whenFull === 'reject' && !this.available) {
      return Promise.reject(
        new TaskQueueFullError(`maxConcurrentTasks (${this.max}) reached; the call to "${toolName}" was rejected`, {
          toolName,
        }),
      );
    }
    return this.acquire(signal, deadlineAt);
  }

  /** Rejects every waiting call (on close). */
  rejectAll(error: unknown): void {
    for (const waiter of [...this.queue]) waiter.fail(error);
  }

  private take(): () => void {
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      const next = this.queue[0];
      if (next !== undefined && this.running < this.max) next.grant(this.take());
    };
  }
}
