/**
 * One run of a tool job in a worker: call the tool as a task (or resume the task a previous run
 * started), store the task's reference in the job before waiting, follow its statuses into the
 * job's progress, answer its questions through the control channel, and settle the job with the
 * tool's result or the error that ends it.
 */
import type { Job } from 'bullmq';
import type { CallToolResult, InputCallbacks, TaskClient, TaskHandle, TaskProgress } from '../index.js';
import type { RunRelease } from './control.js';
import { instanceOf } from './control-store.js';
import { withDeclaredInput } from './declared-input.js';
import { readJobData } from './job-data.js';
import type { Lease } from './pool.js';
import { JobQuestions } from './questions.js';
import { RunEnded, type RunContext } from './run-context.js';
import { isLastAttempt } from './outcome.js';
import { leaseConnection } from './run-lease.js';
import { afterError, type FailedTry } from './run-retry.js';
import { randomUUID } from 'node:crypto';
import { CallingMarks, timeLeft, withinDeadline } from './run-mark.js';
import { Overtaken, checkedData, messageOf, sleep, storeStarted, type ReferenceWriter } from './run-store.js';
import { RunStatus } from './run-status.js';
import type { ToolJobData } from './types.js';

/**
 * A job's deadline and its cancel stop the remote task, whatever the `TaskClient` that `connect`
 * made would do with a call's own deadline or abort (its `cancelOnTimeout`, `cancelOnAbort`).
 */
const STOPS_CANCEL = { cancelOnTimeout: true, cancelOnAbort: true } as const;

/**
 * What a run that threw `error` leaves on the control channel: everything when it hands the job
 * back, nothing when the job ends (failed for good), the cancel it did not see when another
 * BullMQ attempt follows.
 */
function releaseOf(error: unknown, job: Job): RunRelease {
  if (error instanceof RunEnded && error.end.kind === 'release') return 'handed-back';
  if (error instanceof RunEnded && error.end.kind === 'final') return 'done';
  return isLastAttempt(job) ? 'done' : 'attempt';
}

/** See the module comment. */
export class JobRun {
  private data: ToolJobData = undefined as never;
  /** Aborted to cancel the job (a cancel request, BullMQ's signal): the remote task is cancelled. */
  private readonly stop = new AbortController();
  /** Aborts every wait of this run: a cancel, or the processor closing. */
  private readonly interrupt = new AbortController();
  private handle: TaskHandle | undefined = undefined;
  /**
   * The signal of the `tools/call` under way until its task exists: aborted by a cancel, and to
   * hand the job back when the processor closes while a question asked before the task exists
   * waits on the job (the server waits for that answer, so the call would never end by itself).
   */
  private creating: AbortController | undefined = undefined;
  /** The calling marks this run wrote (a mark of its own is no sign of another worker). */
  private readonly marks = new CallingMarks(randomUUID());
  private readonly view: RunStatus;
  private questions: JobQuestions = undefined as never;
  private readonly jobId: string;

  constructor(
    private readonly context: RunContext,
    private readonly job: Job,
    private readonly signal: AbortSignal | undefined,
    /** The token of the job's lock that BullMQ gave this run (`undefined`: none to check). */
    private readonly token: string | undefined,
  ) {
    this.jobId = job.id ?? '';
    this.view = new RunStatus(
      job,
      this.jobId,
      (event) => context.emit(event),
      () => this.questions.list(),
    );
  }

  /**
   * Runs the job to its end.
   * @returns the tool's result.
   * @throws RunEnded otherwise.
   */
  async run(): Promise<CallToolResult> {
    const control = this.context.watch(instanceOf(this.job), this.token);
    this.questions = new JobQuestions(
      control,
      (asked) => {
        this.view.questionsChanged(asked, this.handle?.taskId ?? this.data.task?.reference.taskId);
        this.handBackIfAsked();
      },
      Date.now,
    );
    const cancel = (reason: string): void => {
      if (this.stop.signal.aborted) return;
      this.stop.abort(new Error(reason));
      this.interrupt.abort();
    };
    void control.cancelled.then(cancel);
    const onSignal = (): void =>
      cancel(
        typeof this.signal?.reason === 'string' ? this.signal.reason : messageOf(this.signal?.reason ?? 'cancelled'),
      );
    const onClose = (): void => {
      this.interrupt.abort();
      this.handle?.detach();
      this.handBackIfAsked();
    };
    this.signal?.addEventListener('abort', onSignal, { once: true });
    const unlisten = this.context.onClose(onClose);
    if (this.signal?.aborted === true) onSignal();
    if (this.context.closing.aborted) onClose();
    let end: RunRelease = 'done';
    try {
      this.data = checkedData(this.job.data);
      // A cancel stored before the job started is known before anything is called.
      await this.untilRead(control.ready);
      return await this.attempts();
    } catch (error) {
      end = releaseOf(error, this.job);
      throw error;
    } finally {
      this.signal?.removeEventListener('abort', onSignal);
      unlisten();
      // A job handed back keeps its answers and its cancel for the run that takes it next; one
      // that ends leaves nothing. Awaited: the clear needs the job's lock, which BullMQ drops once
      // the run ends (a retry, a delay).
      await control.release(end);
      await this.view.progress.settled();
    }
  }

  /**
   * Waits until the control channel was read for this job, at most 60 s (Redis away: the run goes
   * on, the cancel is seen later), or until the run is interrupted. The timer goes with the wait.
   */
  private async untilRead(ready: Promise<void>): Promise<void> {
    const waited = new AbortController();
    const interrupted = (): void => waited.abort();
    this.interrupt.signal.addEventListener('abort', interrupted, { once: true });
    if (this.interrupt.signal.aborted) waited.abort();
    try {
      await Promise.race([ready, sleep(60_000, waited.signal)]);
    } finally {
      waited.abort();
      this.interrupt.signal.removeEventListener('abort', interrupted);
    }
  }

  private async attempts(): Promise<CallToolResult> {
    for (let attempt = 1; ; attempt += 1) {
      // A job cancelled with a task still goes through once(): resuming with the aborted signal
      // cancels the remote task.
      if (this.data.task === undefined || !this.stop.signal.aborted) this.checkInterrupted(undefined);
      let calling = this.data.task === undefined;
      try {
        if (calling && this.data.calling !== undefined && !this.marks.isOwn(this.data.calling)) {
          await this.awaitOthersReference();
          calling = this.data.task === undefined;
          if (calling) this.checkInterrupted(undefined);
        }
        return await this.once();
      } catch (error) {
        if (error instanceof RunEnded) throw error;
        // Still calling only while no task is stored: an error after the reference was stored
        // came from following the task, not from the server refusing the call.
        calling = this.data.task === undefined;
        const overtaken =
          error instanceof Overtaken ? error : await afterError(this.failedTry(), error, attempt, calling);
        if (overtaken !== undefined) {
          // Another run's mark or task is stored: go on from it, without counting a retry.
          this.data = checkedData(overtaken.stored);
          attempt -= 1;
        }
      }
    }
  }

  /**
   * Another worker marked the job as calling and has stored no reference: it died in that window,
   * or it lives on after losing the job's lock (a stalled event loop, Redis away) and its call is
   * still under way. Its reference is awaited until `callingGraceMs` after its mark; the
   * uncertain-call policy applies only if none comes. The job's deadline cuts the wait short.
   */
  private async awaitOthersReference(): Promise<void> {
    const until =
      Date.now() + withinDeadline(this.data, (this.data.calling?.at ?? 0) + this.context.callingGraceMs - Date.now());
    while (Date.now() < until && !this.interrupt.signal.aborted) {
      const data = readJobData(await this.context.reload(this.jobId));
      if (data.task !== undefined) {
        this.data = data;
        return;
      }
      await sleep(Math.min(500, until - Date.now()), this.interrupt.signal);
    }
  }

  /** The parts of this run that a failed try uses (see {@link afterError}). */
  private failedTry(): FailedTry {
    return {
      context: this.context,
      job: this.job,
      jobId: this.jobId,
      data: this.data,
      keep: (data) => {
        this.data = data;
      },
      interrupt: this.interrupt.signal,
      checkInterrupted: (error) => this.checkInterrupted(error),
      withinDeadline: (ms) => withinDeadline(this.data, ms),
      cancelled: () => this.stop.signal.aborted,
      holdsJob: () => (this.token === undefined ? Promise.resolve(true) : this.context.holds(this.jobId, this.token)),
    };
  }

  /**
   * Once the processor closes, abandons a `tools/call` whose task does not exist yet while a
   * question it asked waits on the job: nobody here will answer it, and the call waits for that
   * answer. The job goes back to the queue with its calling mark, as after any call that did not
   * end (the next worker waits for `callingGraceMs`, then `uncertainCall` applies).
   */
  private handBackIfAsked(): void {
    if (!this.context.closing.aborted || this.creating === undefined || this.questions.list().length === 0) return;
    this.creating.abort(new Error('The processor closed while a question asked before the task existed waited'));
  }

  /** After an error (or none), ends the run when it was cancelled or its processor closes. */
  private checkInterrupted(error: unknown): void {
    if (this.stop.signal.aborted) {
      const reason = messageOf(this.stop.signal.reason);
      const detail = error === undefined ? 'before the tool was called' : messageOf(error);
      throw new RunEnded({ kind: 'final', message: `Job cancelled (${reason}): ${detail}`, cause: error });
    }
    if (this.context.closing.aborted) throw new RunEnded({ kind: 'release', taskId: this.data.task?.reference.taskId });
  }

  /** One try: a connection, a call or a resume, and the wait for the result. */
  private async once(): Promise<CallToolResult> {
    const { data } = this;
    const reference = data.task?.reference;
    const remaining = timeLeft(this.data);
    if (reference === undefined && remaining === 0) {
      throw new RunEnded({
        kind: 'final',
        message: `The job's deadline passed before the tool "${data.tool}" was called`,
        cause: undefined,
      });
    }
    const lease = await leaseConnection(
      {
        context: this.context,
        data,
        stop: this.stop.signal,
        interrupt: this.interrupt.signal,
        checkInterrupted: (error) => this.checkInterrupted(error),
      },
      data.server,
      reference?.sessionId,
      remaining,
    );
    try {
      let handle: TaskHandle;
      if (reference !== undefined) {
        // The deadline counts the time spent connecting: what is left of it now bounds the task.
        const timeoutMs = timeLeft(this.data);
        handle = await this.withInput(lease.tasks, (input) =>
          lease.tasks.resume(reference, { timeoutMs, signal: this.stop.signal, ...STOPS_CANCEL, ...input }),
        );
        this.context.emit({
          type: 'resumed',
          jobId: this.jobId,
          taskId: reference.taskId,
          tool: data.tool,
          sinceStoredMs: Date.now() - (data.task?.storedAt ?? 0),
        });
      } else {
        handle = await this.call(lease);
      }
      this.handle = handle;
      if (this.context.closing.aborted) handle.detach();
      if (handle.kind === 'task') this.view.follow(handle);
      return await handle.result();
    } finally {
      this.handle = undefined;
      lease.release();
    }
  }

  /**
   * Calls the tool; stores the task's reference before anything waits on it. The server made the
   * task readable before its `CreateTaskResult` ([E9] on the extension), so a worker that takes
   * the job over at once can already resume it. The mark and the reference are written only if
   * no other run of the job (another worker that took it after this one lost its lock) stored
   * its own first: this run then throws {@link Overtaken} and does not call, or cancels its task.
   */
  private async call(lease: Lease): Promise<TaskHandle> {
    const { data } = this;
    if (this.context.uncertainCall === 'fail' && this.marks.uncertain(data)) {
      throw new RunEnded({
        kind: 'final',
        message: `The tool "${data.tool}" may have been called already (a worker stopped after calling it and before storing its task), and uncertainCall is 'fail'`,
        cause: undefined,
      });
    }
    this.data = await this.marks.claim(this.context, this.jobId, data);
    const onProgress = (progress: TaskProgress): void =>
      this.view.progressed(progress, this.handle?.taskId ?? undefined);
    // The call's signal: a cancel aborts it for the task's whole life, the processor closing only
    // while the task does not exist yet and a question waits (see handBackIfAsked).
    const creating = new AbortController();
    const stopped = (): void => creating.abort(this.stop.signal.reason);
    if (this.stop.signal.aborted) stopped();
    else this.stop.signal.addEventListener('abort', stopped, { once: true });
    this.creating = creating;
    // The deadline counts the time spent connecting and marking: what is left of it now bounds the task.
    const remaining = timeLeft(this.data);
    if (remaining === 0) {
      throw new RunEnded({
        kind: 'final',
        message: `The job's deadline passed before the tool "${data.tool}" was called`,
        cause: undefined,
      });
    }
    let handle: TaskHandle;
    try {
      handle = await this.marks.calling((sending) =>
        this.withInput(lease.tasks, (input) => {
          sending();
          return lease.tasks.callToolAsTask(data.tool, data.args, {
            timeoutMs: remaining,
            ttlMs: data.ttlMs,
            signal: creating.signal,
            ...STOPS_CANCEL,
            onProgress,
            ...input,
          });
        }),
      );
    } finally {
      this.creating = undefined;
    }
    const reference = handle.toJSON();
    if (reference !== undefined) lease.learned(reference.sessionId);
    this.data = await storeStarted(this.writer(), handle, this.data);
    return handle;
  }

  /** The parts of this run that storing its task's reference uses. */
  private writer(): ReferenceWriter {
    return {
      context: this.context,
      jobId: this.jobId,
      stop: this.stop.signal,
      interrupt: this.interrupt.signal,
      checkInterrupted: (error) => this.checkInterrupted(error),
    };
  }

  /** Runs `start` with this job's input callbacks that the connection can take (see {@link withDeclaredInput}). */
  private withInput<T>(tasks: TaskClient, start: (input: InputCallbacks) => T | Promise<T>): Promise<T> {
    return withDeclaredInput(tasks, this.questions.callbacks(this.context.callbacks), start);
  }
}
