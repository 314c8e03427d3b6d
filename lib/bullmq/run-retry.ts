/**
 * A run's try that failed, and what follows from the error's verdict: the run ends (the job fails
 * for good, or this BullMQ attempt does), a lost or failed task is forgotten in the job so the
 * next try calls the tool again, or the run waits (with backoff, within the job's deadline)
 * before its next try.
 */
import type { Job } from 'bullmq';
import { TaskFailedError } from '../index.js';
import { backoff, isLastAttempt, verdictOf } from './outcome.js';
import { RunEnded, type RunContext } from './run-context.js';
import { Overtaken, cancelStoredTask, goneEnd, messageOf, sleep } from './run-store.js';
import type { ToolJobData } from './types.js';

/** The parts of a run that a failed try uses. */
export interface FailedTry {
  readonly context: RunContext;
  readonly job: Job;
  readonly jobId: string;
  /** The job's data as the run knows it. */
  readonly data: ToolJobData;
  /** Takes the job's data as it is once its task was forgotten. */
  keep(data: ToolJobData): void;
  /** Aborts every wait of the run. */
  readonly interrupt: AbortSignal;
  /** Throws the run's end when it was cancelled or its processor closes. */
  checkInterrupted(error: unknown): void;
  /** `ms`, cut to the time left before the job's deadline (0 once it passed). */
  withinDeadline(ms: number): number;
  /** Whether the run still holds its job's lock (no other worker took the job). */
  holdsJob(): Promise<boolean>;
  /** Whether the job was cancelled (a cancel request, BullMQ's signal). */
  cancelled(): boolean;
}

/**
 * After a try that failed: ends the run, or forgets a lost task, or waits before the next try.
 * @returns what another run stored, when forgetting the task was refused because of it.
 */
export async function afterError(
  run: FailedTry,
  error: unknown,
  attempt: number,
  calling: boolean,
): Promise<Overtaken | undefined> {
  const { retry } = run.context;
  if (run.cancelled() && run.data.task !== undefined && verdictOf(error, calling) === 'retry') {
    // The job ends cancelled, but its try could not cancel the task: its connection could not be
    // opened, or was lost. The task is cancelled over a new connection, as when a job fails for
    // good (a bounded wait; a connection that comes later still cancels it).
    await cancelStoredTask(run.context, run.jobId, run.data);
  }
  run.checkInterrupted(error);
  try {
    const verdict = verdictOf(error, calling);
    if (verdict === 'lost') await lost(run, error, attempt);
    else if (verdict === 'final') throw await final(run, error);
    else if (attempt > retry.attempts) {
      const message = `Gave up after ${retry.attempts} retries: ${messageOf(error)}`;
      if (!isLastAttempt(run.job)) throw new RunEnded({ kind: 'attempt', message, cause: error });
      // No attempt follows: nobody would resume the task, so it is cancelled. Unless the job is no
      // longer this run's: its lock expired (a stalled event loop, Redis away) and another worker
      // took the job and follows the same task, or the job is back in the queue for one to resume
      // it. This run cannot fail that job, and cancelling its task would end it for that worker.
      if (run.data.task !== undefined && !(await run.holdsJob())) {
        run.context.emit({
          type: 'warning',
          jobId: run.jobId,
          error: new Error(
            'The job failed for good here, but its lock is no longer this worker’s (another worker holds the job, or it is back in the queue): its task is left running for the worker that resumes it, not cancelled',
          ),
        });
      } else {
        await cancelStoredTask(run.context, run.jobId, run.data);
      }
      throw new RunEnded({ kind: 'final', message, cause: error });
    } else {
      // The job's deadline bounds the wait too: the next try then ends the job at once.
      const delayMs = run.withinDeadline(backoff(attempt, retry.minDelayMs, retry.maxDelayMs));
      run.context.emit({
        type: 'retry',
        jobId: run.jobId,
        error: error instanceof Error ? error : new Error(String(error)),
        attempt,
        delayMs,
      });
      await sleep(delayMs, run.interrupt);
    }
  } catch (thrown) {
    if (thrown instanceof Overtaken) return thrown;
    throw thrown;
  }
  return undefined;
}

/**
 * The task is gone from the server: fail, or (when asked to) forget it and call the tool again.
 * Calling again counts as a retry: a server that keeps losing tasks does not keep the job forever.
 */
async function lost(run: FailedTry, error: unknown, attempt: number): Promise<void> {
  const message = `${messageOf(error)}. The task cannot be resumed: the server no longer knows it (a stdio server dies with its worker, and its tasks with it; a server that restarted, or whose ttl for the task elapsed, no longer has it)`;
  if (run.context.lostTask !== 'call-again') throw new RunEnded({ kind: 'final', message, cause: error });
  if (attempt > run.context.retry.attempts) {
    throw new RunEnded({
      kind: 'attempt',
      message: `Gave up after ${run.context.retry.attempts} retries: ${message}`,
      cause: error,
    });
  }
  await forgetTask(run);
}

/** The error that ends the job, as a {@link RunEnded}. */
async function final(run: FailedTry, error: unknown): Promise<RunEnded> {
  const message = messageOf(error);
  if (run.context.retryFailedTasks && error instanceof TaskFailedError) {
    // The next attempt (if the job has one left) calls the tool again: the failed task is forgotten.
    await forgetTask(run);
    return new RunEnded({ kind: 'attempt', message, cause: error });
  }
  return new RunEnded({ kind: 'final', message, cause: error });
}

/**
 * Forgets the run's task in the job (the next try calls the tool again), unless another run
 * stored its own task or mark meanwhile (it lost the same task and called first).
 * @throws Overtaken with what that run stored.
 */
async function forgetTask(run: FailedTry): Promise<void> {
  const { task, calling, ...rest } = run.data;
  if (task === undefined && calling === undefined) return;
  // Without a reference (a result that came with the answer), it is the run's mark that goes.
  const guard = task === undefined ? { mark: calling?.at } : { forget: task.reference.taskId };
  const wrote = await run.context.write(run.jobId, rest, guard);
  if (wrote.kind === 'gone') throw goneEnd(undefined);
  if (wrote.kind === 'refused') throw new Overtaken(wrote.stored);
  run.keep(rest);
}
