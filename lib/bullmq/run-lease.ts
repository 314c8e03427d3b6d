/**
 * A run's connection from the pool, and the wait for it: bounded by the job's deadline, a cancel
 * and the processor closing, so a `connect` that never settles holds neither the job nor
 * `close()`. A connection that comes after the wait gave up goes back to the pool, after it
 * cancelled the stored task of a job that ends for good.
 */
import type { Lease } from './pool.js';
import { RunEnded, type RunContext } from './run-context.js';
import { waitForLease } from './lease-wait.js';
import type { ToolJobData } from './types.js';

/** The parts of a run that waiting for its connection uses. */
export interface LeaseWaiter {
  readonly context: RunContext;
  /** The job's data as the run knows it (its stored task, if any). */
  readonly data: ToolJobData;
  /** Aborted when the job is cancelled. */
  readonly stop: AbortSignal;
  /** Aborts every wait of the run. */
  readonly interrupt: AbortSignal;
  /** Throws the run's end when it was cancelled or its processor closes. */
  checkInterrupted(error: unknown): void;
}

/**
 * A connection from the pool, waited for until the job's deadline (`remaining` ms), a cancel or
 * the processor closing: a `connect` that never settles holds neither the job nor `close()`. A
 * connection that comes after the wait gave up goes back to the pool.
 */
export async function leaseConnection(
  run: LeaseWaiter,
  server: string,
  sessionId: string | undefined,
  remaining: number | undefined,
): Promise<Lease> {
  const { context } = run;
  // A run already cancelled comes here to cancel its task (see attempts() in run.ts): only its deadline,
  // or the processor closing (the task is then cancelled once the connection comes), stops that wait.
  const waited = await waitForLease(context, server, sessionId, {
    ms: remaining,
    interrupt: run.interrupt,
    // The job ends for good (its deadline, a cancel) unless the processor hands it back: its stored
    // task, if any, is then cancelled over the connection once it comes.
    late: () => {
      const reference = run.data.task?.reference;
      const cancelLate = reference !== undefined && (run.stop.aborted || !context.closing.aborted);
      return cancelLate ? (late) => late.tasks.resume(reference).dispose() : undefined;
    },
  });
  if (waited.lease !== undefined) return waited.lease;
  run.checkInterrupted(undefined);
  throw new RunEnded({
    kind: 'final',
    message: `The job's deadline passed while connecting to the server "${server}"`,
    cause: undefined,
  });
}
