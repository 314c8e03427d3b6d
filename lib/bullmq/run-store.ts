/**
 * A run's job data and stored task, and the small pieces it shares with `run.ts`: the data checked,
 * storing the task's reference (retried while a write fails), cancelling the stored task when the
 * job fails for good, how a run ends when its job is gone, {@link Overtaken} when another run
 * stored first, and a wait that an abort cuts short.
 */
import type { TaskHandle } from '../index.js';
import type { JobWrite } from './job-write.js';
import { readJobData } from './job-data.js';
import { backoff } from './outcome.js';
import { RunEnded, type RunContext } from './run-context.js';
import { waitForLease } from './lease-wait.js';
import type { Lease } from './pool.js';
import { later } from './timer.js';
import type { ToolJobData } from './types.js';

/** Waits `ms`, or less when `signal` aborts (at once when it has already). */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = later(done, ms);
    function done(): void {
      timer.clear();
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** The message of a thrown value. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Another run of the job got there first: its `calling` mark or its task's reference is stored.
 * The run takes the stored data and goes round again, without counting a retry: it then waits
 * for that run's reference or resumes its task.
 */
export class Overtaken extends Error {
  constructor(readonly stored: unknown) {
    super("another run of the job stored its calling mark or its task's reference first");
  }
}

/** The job's data, checked; a malformed job ends the run. */
export function checkedData(data: unknown): ToolJobData {
  try {
    return readJobData(data);
  } catch (error) {
    throw new RunEnded({ kind: 'final', message: messageOf(error), cause: error });
  }
}

/**
 * Cancels the job's stored task (if any) as the job fails for good: resumed over a connection of
 * its own and disposed. It may fail as the run did (a server that cannot be reached): a warning
 * says so, and the task runs on until its ttl.
 *
 * The wait for the connection (the user's `connect`, which may never settle) is bounded: by
 * `reconnectGraceMs`, cut to the time left before the job's deadline, and by the processor
 * closing, so that neither the job's failure nor `close()` waits for it. Given up, a warning says
 * so; a connection that still comes cancels the task then and is released (closed, when the pool
 * closed meanwhile or it was opened for the task's session alone), and nothing of it is left
 * pending or unhandled. Once the connection is in hand, `dispose()` is bounded by the
 * `TaskClient`'s `cancelGraceMs`, as every cancel of the library.
 */
export async function cancelStoredTask(context: RunContext, jobId: string, data: ToolJobData): Promise<void> {
  const reference = data.task?.reference;
  if (reference === undefined) return;
  const left = data.deadlineAt === undefined ? Infinity : Math.max(0, data.deadlineAt - Date.now());
  const waitMs = Math.min(context.reconnectGraceMs, left);
  const cancel = (lease: Lease): Promise<void> => lease.tasks.resume(reference).dispose();
  try {
    // A connection in hand lets the cancel finish (bounded by its grace): only the wait for it is
    // given up. A connection already in the pool is handed over even when the deadline has passed.
    const waited = await waitForLease(context, data.server, reference.sessionId, { ms: waitMs, late: () => cancel });
    if (waited.lease === undefined) {
      const why =
        waited.why === 'time'
          ? `after ${waitMs} ms: no connection to the server "${data.server}" came in time`
          : `after ${waited.waitedMs} ms: the processor closed`;
      context.emit({
        type: 'warning',
        jobId,
        error: new Error(
          `The job failed for good and the cancel of its task was given up ${why}; a connection that still comes cancels it then`,
        ),
      });
      return;
    }
    const lease = waited.lease;
    // The lease goes back whatever the cancel does (a resume that throws: a closed client).
    await Promise.resolve()
      .then(() => cancel(lease))
      .finally(() => lease.release());
  } catch (error) {
    context.emit({
      type: 'warning',
      jobId,
      error: new Error(`The job failed for good and its task could not be cancelled: ${messageOf(error)}`, {
        cause: error,
      }),
    });
  }
}

/** The end of a run whose job was removed or finished meanwhile (nothing was written to it). */
export function goneEnd(taskId: string | undefined): RunEnded {
  const task = taskId === undefined ? '' : ': its task was cancelled';
  return new RunEnded({
    kind: 'final',
    message: `The job was removed or has finished while it ran${task}`,
    cause: undefined,
  });
}

/** The parts of a run that storing its task's reference uses. */
export interface ReferenceWriter {
  readonly context: RunContext;
  readonly jobId: string;
  /** Aborted when the job is cancelled. */
  readonly stop: AbortSignal;
  /** Aborts every wait of the run. */
  readonly interrupt: AbortSignal;
  /** Throws the run's end when it was cancelled or its processor closes. */
  checkInterrupted(error: unknown): void;
}

/**
 * The task id of the reference the job's data holds, read back: `null` when it holds none (a
 * write that failed was not made), `undefined` when the job could not be read (or is gone).
 */
async function storedTaskOf(context: RunContext, jobId: string): Promise<string | null | undefined> {
  try {
    const data = await context.reload(jobId);
    if (data === undefined) return undefined;
    return readJobData(data).task?.reference.taskId ?? null;
  } catch {
    return undefined;
  }
}

/**
 * Stores the task's reference in the job. A write that failed (Redis away, a command that timed
 * out, a client that gave up) may or may not have been made; made again for the same task it
 * changes nothing, so it is retried with backoff, the handle kept (the task runs on), until it is
 * made, refused, or finds the job gone. Only a cancel, the processor closing or the job's
 * deadline stop the retries: a cancel or the deadline cancels the task (the job ends for good);
 * closing hands the job back with its calling mark, leaving the task running when the job may
 * hold its reference, and cancelling it when the job, read back, holds none or another run's
 * (the next worker calls the tool again or resumes that one, and this task would run on unseen).
 */
async function storeReference(
  run: ReferenceWriter,
  handle: TaskHandle,
  data: ToolJobData,
  taskId: string,
): Promise<JobWrite> {
  const { context, jobId } = run;
  const { retry } = context;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await context.write(jobId, data, { taskId });
    } catch (error) {
      const left = data.deadlineAt === undefined ? Infinity : data.deadlineAt - Date.now();
      if (run.stop.aborted || left <= 0) {
        await handle.dispose().catch(() => {});
        if (run.stop.aborted) run.checkInterrupted(error);
        throw new RunEnded({
          kind: 'final',
          message: `The job's deadline passed while the task's reference was being stored: ${messageOf(error)}`,
          cause: error,
        });
      }
      if (context.closing.aborted) {
        // The next worker resumes the task only if the reference reached the job: a task of which
        // the job knows nothing would run on beside the one that worker calls, unseen.
        const stored = await storedTaskOf(context, jobId);
        if (stored === taskId || stored === undefined) handle.detach();
        else await handle.dispose().catch(() => {});
        throw new RunEnded({ kind: 'release', taskId: undefined });
      }
      context.emit({
        type: 'warning',
        jobId,
        error: new Error(`The task's reference could not be stored in the job (retried): ${messageOf(error)}`, {
          cause: error,
        }),
      });
      await sleep(Math.min(left, backoff(attempt, retry.minDelayMs, retry.maxDelayMs)), run.interrupt);
    }
  }
}

/**
 * After the call: stores the new task's reference in the job before anything waits on it (see
 * {@link storeReference}), and tells the processor's listeners that the job started.
 * @returns the job's data with the reference (as it was, for a call the server ran without a task).
 * @throws the run's end when the job is gone meanwhile, {@link Overtaken} when another run's task
 *   is stored: either way the new task, which nobody will read, is cancelled.
 */
export async function storeStarted(run: ReferenceWriter, handle: TaskHandle, data: ToolJobData): Promise<ToolJobData> {
  const { context, jobId } = run;
  const reference = handle.toJSON();
  if (reference === undefined) {
    context.emit({
      type: 'started',
      jobId,
      taskId: undefined,
      tool: data.tool,
      storeMs: undefined,
      windowMs: undefined,
    });
    return data;
  }
  const inHand = Date.now();
  const withTask: ToolJobData = { ...data, calling: undefined, task: { reference, storedAt: inHand } };
  const stored = await storeReference(run, handle, withTask, reference.taskId);
  if (stored.kind === 'gone') {
    // The job was removed or finished meanwhile: nobody will ever read this task, so it is cancelled.
    await handle.dispose().catch(() => {});
    throw goneEnd(reference.taskId);
  }
  if (stored.kind === 'refused') {
    // Another run's task is stored (both called the tool): this one, which nobody will read, is
    // cancelled, and the stored one is resumed.
    await handle.dispose().catch(() => {});
    context.emit({
      type: 'warning',
      jobId,
      error: new Error(
        `The tool "${data.tool}" was called by two runs of the job; task ${reference.taskId} was cancelled, the other run's task is resumed`,
      ),
    });
    throw new Overtaken(stored.stored);
  }
  const storedAt = Date.now();
  const created = Date.parse(reference.createdAt);
  context.emit({
    type: 'started',
    jobId,
    taskId: reference.taskId,
    tool: data.tool,
    storeMs: storedAt - inHand,
    windowMs: Number.isNaN(created) ? undefined : storedAt - created,
  });
  return withTask;
}
