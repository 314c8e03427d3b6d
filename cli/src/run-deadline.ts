/**
 * `--timeout` as one deadline for the whole run: connecting, the task, its remote cancel and the
 * shutdown all end by it. The task is given up a reserve before the end, so that the remote
 * cancel (the library's `cancelGraceMs`) and closing the connection fit in the time; every wait
 * after that (a cancel's answer, the answer to a call given up, closing the connection) stops at
 * the deadline, and then the CLI leaves without waiting more.
 */
import { CANCEL_GRACE_MS } from './target-connect.js';

/** The part of the reserve that closing the connection gets, at most. */
export const SHUTDOWN_MS = 500;

/**
 * What `--timeout` keeps back for the end of the run: the cancel grace plus the shutdown
 * ({@link CANCEL_GRACE_MS} + {@link SHUTDOWN_MS}, 2.5 s), or a quarter of `--timeout` when that is
 * less. Four fifths of it is the remote cancel's grace, the rest closing.
 */
export function reserveOf(timeoutMs: number): { readonly reserveMs: number; readonly cancelGraceMs: number } {
  const reserveMs = Math.min(CANCEL_GRACE_MS + SHUTDOWN_MS, Math.floor(timeoutMs / 4));
  const shutdownMs = Math.floor(reserveMs / 5);
  return { reserveMs, cancelGraceMs: reserveMs - shutdownMs };
}

/** A timer that resolves when the deadline passes; `clear` stops it (the promise then never resolves). */
export interface Expiry {
  readonly passed: Promise<void>;
  clear(): void;
}

/** The run's deadline, `timeoutMs` after `startedAt` (clock times of `now`). */
export class RunDeadline {
  /** The clock time the run must end by. */
  readonly at: number;
  /** What is kept back for the remote cancel and the shutdown ({@link reserveOf}). */
  readonly reserveMs: number;
  /** The library's `cancelGraceMs` for this run. */
  readonly cancelGraceMs: number;

  constructor(
    readonly timeoutMs: number,
    startedAt: number,
    private readonly now: () => number = Date.now,
  ) {
    this.at = startedAt + timeoutMs;
    const reserve = reserveOf(timeoutMs);
    this.reserveMs = reserve.reserveMs;
    this.cancelGraceMs = reserve.cancelGraceMs;
  }

  /** How long is left, in ms (0 once passed). */
  left(): number {
    return Math.max(0, this.at - this.now());
  }

  /** The library's deadline for a call (or a resumed task) starting now: until the reserve begins, at least 1 ms. */
  taskMs(): number {
    return Math.max(1, this.at - this.reserveMs - this.now());
  }

  /** `waitMs`, or what is left when that is less. */
  bound(waitMs: number): number {
    return Math.min(waitMs, this.left());
  }

  /** Resolves when the deadline passes. */
  expiry(): Expiry {
    let timer: NodeJS.Timeout | undefined;
    const passed = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.left())));
    return { passed, clear: () => clearTimeout(timer) };
  }
}

/** `ms` in seconds, for messages: `2 s`, `0.4 s`. */
export function inSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
