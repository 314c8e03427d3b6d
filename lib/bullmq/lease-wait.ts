/**
 * The bounded wait for a connection from the pool, shared by a run's own lease (run-lease.ts) and
 * the cancel of a job's stored task as it fails for good (run-store.ts): a `connect` that never
 * settles holds neither the job nor `close()`. The wait ends at its bound, when an interrupt aborts
 * or when the processor closes; a connection that comes after is used for what the caller chose as
 * the wait was given up (cancelling the stored task), then released, nothing of it left pending or
 * unhandled.
 */
import type { Lease } from './pool.js';
import type { RunContext } from './run-context.js';
import { later } from './timer.js';

/** How long, and until what, a connection is waited for. */
export interface LeaseWait {
  /**
   * The longest wait in ms (`undefined` or `Infinity`: no bound of its own). Counted by a timer,
   * so that a connection already in the pool, handed over at once, wins even at 0 ms.
   */
  readonly ms: number | undefined;
  /**
   * Ends the wait when it aborts (besides the processor closing). One already aborted does not: a
   * run already cancelled waits for its connection to cancel its task.
   */
  readonly interrupt?: AbortSignal | undefined;
  /**
   * Called as the wait is given up: what to do with the connection if it still comes, before it
   * is released (`undefined`: only release it). Its failure, as the connect's, is swallowed.
   */
  late(): ((lease: Lease) => unknown) | undefined;
}

/** A connection in hand, or the wait given up: at its bound (`time`) or stopped, after `waitedMs`. */
export type Waited =
  | { readonly lease: Lease }
  | { readonly lease: undefined; readonly why: 'time' | 'stopped'; readonly waitedMs: number };

/**
 * A connection to `server` (in `sessionId`) from the pool, waited for as `wait` says. Rejects when
 * the connect fails before the wait ends.
 */
export async function waitForLease(
  context: RunContext,
  server: string,
  sessionId: string | undefined,
  wait: LeaseWait,
): Promise<Waited> {
  const started = Date.now();
  const acquiring = context.acquire(server, sessionId);
  let stop!: (why: 'time' | 'stopped') => void;
  const stopped = new Promise<'time' | 'stopped'>((resolve) => (stop = resolve));
  const interrupted = (): void => stop('stopped');
  const bounded = wait.ms !== undefined && wait.ms !== Infinity;
  const timer = bounded ? later(() => stop('time'), wait.ms) : undefined;
  // The processor's close listeners (a set, not the shared `closing` signal: many runs wait at
  // once, and an AbortSignal warns past ten listeners).
  wait.interrupt?.addEventListener('abort', interrupted, { once: true });
  const unlistenClose = context.onClose(interrupted);
  if (context.closing.aborted) interrupted();
  let outcome: Lease | 'time' | 'stopped';
  try {
    outcome = await Promise.race([acquiring, stopped]);
  } finally {
    timer?.clear();
    wait.interrupt?.removeEventListener('abort', interrupted);
    unlistenClose();
  }
  if (typeof outcome !== 'string') return { lease: outcome };
  const act = wait.late();
  // In a promise chain: an action that throws (a resume on a closed client) must not escape, and the
  // connection goes back whatever it does.
  acquiring.then(
    (lease) =>
      Promise.resolve()
        .then(() => act?.(lease))
        .catch(() => {})
        .finally(() => lease.release()),
    () => {},
  );
  return { lease: undefined, why: outcome, waitedMs: Date.now() - started };
}
