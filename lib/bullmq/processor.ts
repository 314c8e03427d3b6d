/**
 * `taskProcessor`: the BullMQ processor that runs tool jobs, with its options, its pooled
 * connections and its control channel, and `close()`, which hands running jobs back to the queue.
 */
import { DelayedError, UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { TaskOptionError, type CallToolResult, type ElicitationCallback, type SamplingCallback } from '../index.js';
import { ControlWatch, type ToolQueue } from './control.js';
import { holdsLock, writeJobData } from './job-write.js';
import { ServerPool, type ConnectServer } from './pool.js';
import { JobRun } from './run.js';
import { RunEnded, type RunContext } from './run-context.js';
import type { ToolJobEvent } from './types.js';

/** How a worker retries transient failures within one BullMQ attempt (see {@link TaskProcessorOptions.retry}). */
export interface TransientRetryOptions {
  /** Retries before the BullMQ attempt fails. @defaultValue 8 */
  readonly attempts?: number | undefined;
  /** Delay before the first retry, in ms; it doubles (±20%) with each one. @defaultValue 500 */
  readonly minDelayMs?: number | undefined;
  /** The longest delay, in ms. @defaultValue 30000 */
  readonly maxDelayMs?: number | undefined;
}

/** Options of {@link taskProcessor}. */
export interface TaskProcessorOptions {
  /**
   * A `Queue` on the same queue as the worker (same name, prefix and Redis): the processor reads
   * the answers and cancel requests stored for its jobs through it.
   */
  readonly queue: ToolQueue;
  /**
   * Connects to a server by the key a producer put in the job. Called once per key (the
   * connection is shared by every job of the worker) and once per HTTP session a resumed task
   * belongs to; see {@link ConnectContext}. Its errors are retried (see `retry`), except BullMQ's
   * `UnrecoverableError` (for a server key that can never work) and a `TaskConnectError` whose
   * `reason` is `'not-mcp'`: these fail the job at once.
   */
  readonly connect: ConnectServer;
  /**
   * Answers elicitations in the worker. Without it, a task's question waits on its job (the job's
   * progress lists it) until some process answers it with `answerJobInput`.
   */
  readonly onElicitation?: ElicitationCallback | undefined;
  /** Answers sampling requests in the worker; without it they wait for `answerJobInput`, as elicitations do. */
  readonly onSampling?: SamplingCallback | undefined;
  /**
   * What a worker does with a job whose previous worker stopped after sending `tools/call` and
   * before storing the task's reference (the tool may or may not have run): `'call-again'` (at
   * least once) or `'fail'` (at most once: the job fails without calling again).
   * @defaultValue 'call-again'
   */
  readonly uncertainCall?: 'call-again' | 'fail' | undefined;
  /**
   * A worker that finds another worker's calling mark without a reference first waits for that
   * reference until this long after the mark: the other worker may be alive and still calling
   * (it lost the job's lock to a stalled event loop or to Redis being away), and then stores its
   * reference, which is resumed instead of calling the tool again. Only after this grace does
   * `uncertainCall` apply. Keep it above the longest a `tools/call` can take to answer.
   * @defaultValue 60000
   */
  readonly callingGraceMs?: number | undefined;
  /**
   * What a worker does when the server no longer knows a job's task (a stdio server that died
   * with its worker, a server restart, an elapsed ttl): `'fail'` the job, or `'call-again'`.
   * @defaultValue 'fail'
   */
  readonly lostTask?: 'fail' | 'call-again' | undefined;
  /**
   * A task that failed on the server fails the job for good by default. With `true` the failure
   * ends only the BullMQ attempt: a job with attempts left calls the tool again.
   * @defaultValue false
   */
  readonly retryFailedTasks?: boolean | undefined;
  /**
   * Retries of transient failures (a server that cannot be reached, a connection lost for good, a
   * tracking that gave up): the task is resumed over a new connection, without using a BullMQ
   * attempt. The delay doubles from `minDelayMs` to `maxDelayMs`; after `attempts` retries the
   * BullMQ attempt fails (the job keeps its task, so its next attempt resumes it; on the job's
   * last attempt the job fails and its task is cancelled).
   * @defaultValue `{ attempts: 8, minDelayMs: 500, maxDelayMs: 30000 }`
   */
  readonly retry?: TransientRetryOptions | undefined;
  /**
   * How long a lost connection may stay lost (a `reconnect` factory of the `TaskClient` may bring
   * it back) before the processor closes it and resumes its tasks over a new one. Also how long a
   * job that fails for good (on its last attempt) waits at most for the connection that cancels its
   * task, before its deadline if sooner: a connection that comes later still cancels it.
   * @defaultValue 10000
   */
  readonly reconnectGraceMs?: number | undefined;
  /**
   * How often the worker looks for new answers and cancel requests while it holds jobs (one Redis
   * script per look, whatever the number of jobs). Each look also checks that the jobs are still
   * there: the task of a job removed while it runs is cancelled. Once a minute at most, a look also
   * deletes what jobs that ended without a worker (removed while they waited) left on the channel.
   * @defaultValue 1000
   */
  readonly controlPollMs?: number | undefined;
  /** Receives what the processor does with each job (started, resumed, status, input, retry, released, warning). */
  readonly onEvent?: ((event: ToolJobEvent) => void) | undefined;
}

/** A BullMQ processor for tool jobs (pass it to `new Worker(name, processor, options)`), and its `close()`. */
export interface ToolProcessor {
  /**
   * Runs one job: resolves with the tool's result (the job's return value). A failure that must not
   * be retried (the task failed on the server, the job was cancelled, its deadline passed) is
   * thrown as BullMQ's `UnrecoverableError`.
   */
  (job: Job, token?: string, signal?: AbortSignal): Promise<CallToolResult>;
  /** Jobs running now. */
  readonly active: number;
  /**
   * Hands every running job back to the queue with its task running (another worker, or this one
   * after a restart, resumes it at once instead of after the stall interval), then closes the
   * connections. Run it beside `worker.close()`: `await Promise.all([worker.close(), processor.close()])`.
   * A job that the Worker still hands to the processor once it is closed goes back to the queue at
   * once; handed to it a second time (a Worker left open takes it again at once, over and over), it
   * goes back delayed by 5 s, with a `warning` event.
   */
  close(): Promise<void>;
}

/**
 * How long a job that the Worker hands to a closed processor a second time is held back (the
 * Worker was not closed with it): BullMQ fetches the next job as soon as one is handed back, so a
 * job put back in the queue at once would come straight back, over and over.
 */
const CLOSED_HOLD_MS = 5_000;

function count(option: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TaskOptionError(`Option "${option}" must be a finite number >= ${min}, got ${String(value)}`, { option });
  }
  return value;
}

function choice<T extends string>(option: string, value: T | undefined, allowed: readonly T[]): T {
  if (value === undefined) return allowed[0] as T;
  if (!allowed.includes(value))
    throw new TaskOptionError(`Option "${option}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}`, { option });
  return value;
}

/**
 * The BullMQ processor that runs tool jobs enqueued with `enqueueToolTask`:
 *
 * ```ts
 * const processor = taskProcessor({ queue, connect: (server, { sessionId }) => connectTo(server, sessionId) });
 * const worker = new Worker(queue.name, processor, { connection, maxStalledCount: 10 });
 * ```
 *
 * For each job it calls the tool as a task over a pooled connection, stores the task's reference
 * in the job before it waits, mirrors the task's status and questions into the job's progress,
 * and returns the tool's result. A job that comes back after its worker died (BullMQ's stalled-job
 * recovery) resumes its task instead of calling the tool again.
 * @throws TaskOptionError for invalid options.
 */
export function taskProcessor(options: TaskProcessorOptions): ToolProcessor {
  if (typeof options !== 'object' || options === null)
    throw new TaskOptionError('taskProcessor needs options { queue, connect }', { option: 'options' });
  if (typeof options.connect !== 'function')
    throw new TaskOptionError('Option "connect" must be a function (server, { sessionId }) => Promise<TaskClient>', {
      option: 'connect',
    });
  if (typeof options.queue?.toKey !== 'function')
    throw new TaskOptionError('Option "queue" must be a BullMQ Queue', { option: 'queue' });
  const emit = (event: ToolJobEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A throwing listener never breaks a job.
    }
  };
  const closing = new AbortController();
  /** What each running job does when the processor closes (one entry per job, not a listener per job on one signal). */
  const closers = new Set<() => void>();
  const reconnectGraceMs = count('reconnectGraceMs', options.reconnectGraceMs, 10_000, 0);
  const pool = new ServerPool(options.connect, reconnectGraceMs);
  const watch = new ControlWatch(
    options.queue,
    count('controlPollMs', options.controlPollMs, 1000, 10),
    (jobId, error) => emit({ type: 'warning', jobId, error }),
  );
  const context: RunContext = {
    callbacks: { onElicitation: options.onElicitation, onSampling: options.onSampling },
    uncertainCall: choice('uncertainCall', options.uncertainCall, ['call-again', 'fail']),
    callingGraceMs: count('callingGraceMs', options.callingGraceMs, 60_000, 0),
    lostTask: choice('lostTask', options.lostTask, ['fail', 'call-again']),
    retryFailedTasks: options.retryFailedTasks === true,
    retry: {
      attempts: count('retry.attempts', options.retry?.attempts, 8, 0),
      minDelayMs: count('retry.minDelayMs', options.retry?.minDelayMs, 500, 0),
      maxDelayMs: count('retry.maxDelayMs', options.retry?.maxDelayMs, 30_000, 0),
    },
    reconnectGraceMs,
    closing: closing.signal,
    onClose: (listener) => {
      closers.add(listener);
      return () => closers.delete(listener);
    },
    reload: async (jobId): Promise<unknown> =>
      ((await options.queue.getJob(jobId)) as { data?: unknown } | undefined)?.data,
    write: (jobId, data, guard) => writeJobData(options.queue, jobId, data, guard),
    holds: (jobId, token) => holdsLock(options.queue, jobId, token, reconnectGraceMs),
    acquire: (server, sessionId) => pool.acquire(server, sessionId),
    watch: (job, token) => watch.watch(job, token),
    emit,
  };
  /** The jobs (timestamp and id) handed to this processor once it was closed. */
  const handedBack = new Set<string>();
  /** The jobs under way, each settled once its process call has returned (its hand-back included). */
  const running = new Set<Promise<void>>();

  // Three parameters: BullMQ passes the job's AbortSignal only to a processor that declares it.
  const processJob = async (job: Job, token?: string, signal?: AbortSignal): Promise<CallToolResult> => {
    if (closing.signal.aborted) {
      // Once after close() a job goes back to the queue at once, as a running job does: a Worker
      // that closes may still fetch one (the job handed back wakes its fetch under way), and the
      // next worker takes it without delay. The same job handed to this processor again means a
      // Worker left open, which would fetch it over and over: it is held back.
      const key = `${job.timestamp}:${job.id ?? ''}`;
      if (handedBack.has(key)) return holdBack(job, token ?? job.token);
      handedBack.add(key);
    }
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    running.add(finished);
    try {
      return await new JobRun(context, job, signal, token ?? job.token).run();
    } catch (error) {
      if (!(error instanceof RunEnded)) throw error;
      const end = error.end;
      if (end.kind === 'release') {
        // Back to the queue, lock released: the next worker takes it at once and resumes the task.
        // If that fails (the lock was lost, Redis is away), the job is left as it is: a job whose
        // lock is lost is another worker's already, and one still locked here is taken over once
        // the lock expires. Either way BullMQ must not fail it: WaitingError leaves it alone.
        try {
          await job.moveToWait(token);
          emit({ type: 'released', jobId: job.id ?? '', taskId: end.taskId });
        } catch (moveError) {
          emit({
            type: 'warning',
            jobId: job.id ?? '',
            error: moveError instanceof Error ? moveError : new Error(String(moveError)),
          });
        }
        throw new WaitingError();
      }
      // The error that ended the run is kept as the cause (BullMQ stores the message and the stack).
      const thrown = end.kind === 'attempt' ? new Error(end.message) : new UnrecoverableError(end.message);
      Object.defineProperty(thrown, 'cause', { value: end.cause, enumerable: false, configurable: true });
      throw thrown;
    } finally {
      running.delete(finished);
      done();
    }
  };

  /**
   * A job the Worker fetched again after close(): not run, but delayed by {@link CLOSED_HOLD_MS},
   * for another worker (or this one, restarted) to take. The Worker should have been closed too.
   */
  const holdBack = async (job: Job, token: string | undefined): Promise<never> => {
    const jobId = job.id ?? '';
    try {
      await job.moveToDelayed(Date.now() + CLOSED_HOLD_MS, token);
      emit({
        type: 'warning',
        jobId,
        error: new Error(
          `The processor is closed but its Worker is not: job ${jobId} came back to it, and goes back to the queue in ${CLOSED_HOLD_MS} ms (close the Worker with the processor: worker.close())`,
        ),
      });
    } catch (moveError) {
      // The lock was lost or Redis is away: the job is left as it is (another worker's already, or
      // taken over once its lock expires), as after a failed hand-back.
      emit({ type: 'warning', jobId, error: moveError instanceof Error ? moveError : new Error(String(moveError)) });
    }
    // BullMQ leaves a job alone after DelayedError (it was moved, or it is someone else's).
    throw new DelayedError();
  };

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      closing.abort();
      for (const closer of [...closers]) closer();
      await Promise.all([...running]);
      watch.stop();
      await pool.close();
    })());
  // A getter defined on the function itself: Object.assign would copy the getter's value once (0).
  Object.defineProperty(processJob, 'active', { get: () => running.size, enumerable: true });
  return Object.assign(processJob, { close }) as ToolProcessor;
}
