/**
 * The general path of a call's launch (launch.ts is the rest): a call with a signal, a deadline or
 * a concurrency limit, or one whose task support is not known yet, waits for a free slot and a
 * connection, negotiates ([R6]-[R9], [E2]), and races its `tools/call` and input rounds against
 * its signal, deadline and `close()`, in async steps. The usual call joins it where it needs more
 * than one answer (input rounds, a plain call).
 */
import { stopError } from './deadline-signal.js';
import type { TaskHandle } from '../../api/index.js';
import { acceptReply } from './accept.js';
import { cancelRefused, givenUp } from './give-up.js';
import type { LaunchCreation } from './launch-parts.js';
import { NO_RELEASE } from './limiter.js';
import { negotiateAndStart } from './negotiate.js';
import { anyOf } from '../../util/abort.js';
import { LaunchBase } from './launch-base.js';
import { Stopped } from '../../util/race.js';
import { capture, captured } from '../../util/capture.js';
import type { StartReply, TaskSupport } from '../../wire/wire.js';

/** A call being started, its general path (see the module comment). */
export abstract class GeneralLaunch extends LaunchBase {
  /**
   * Rejects the wait of {@link GeneralLaunch.waitReply}, while the call waits there (see
   * `Launch.closing`); for a call run the usual way (`Launch.run`), the call's own promise.
   */
  protected stopWait: ((error: unknown) => void) | undefined = undefined;
  /** The task creation under way, once the call asked for a task. */
  protected creation: LaunchCreation | undefined = undefined;
  /** Its index in the client's `launching` set (util/slot-set.ts). */
  launchingSlot = -1;

  /** `close()` began (the client's `launching` set holds the calls waiting for a reply). */
  abstract closing(): void;

  /** `Launch.run` for any call. */
  protected async runGeneral(): Promise<TaskHandle> {
    const { call } = this;
    if (call.signal?.aborted) throw stopError(this, { kind: 'abort', reason: call.signal.reason }, 'no-task');
    let release: (() => void) | undefined;
    try {
      // Waiting for a slot counts against the deadline. Even a free slot is awaited: an abort or a
      // close() in the same tick as the call then stops it before anything is sent.
      release = await this.parts.limiter.slot(this.toolName, call.signal, this.deadlineAt);
      // A call made while the connection is lost waits for the reconnection (within its deadline).
      const ready = this.parts.connection.ready(this);
      if (ready !== undefined) await this.race(ready);
      // A close() or an abort that came while the slot was handed over stops the call before
      // anything is sent (the reconnection race above sees them too, but is skipped when connected).
      if (this.closed.aborted) throw new Stopped({ kind: 'closed' });
      if (call.signal?.aborted) throw new Stopped({ kind: 'abort', reason: call.signal.reason });
      // So does a deadline already reached (`timeoutMs: 0`, or spent waiting): nothing is started.
      if (this.deadlineAt !== undefined && this.engine.config.clock.now() >= this.deadlineAt)
        throw new Stopped({ kind: 'timeout' });
      const handle = await negotiateAndStart(this, this.parts.catalog);
      if (release !== NO_RELEASE) {
        const record = handle.kind === 'task' ? this.engine.get(handle.taskId) : undefined;
        if (record === undefined) release();
        else record.onSettled(release);
      }
      return handle;
    } catch (error) {
      release?.();
      throw this.failure(error);
    }
  }

  /**
   * The `tools/call` reply, raced as {@link LaunchBase.race} does; {@link GeneralLaunch.waited} must follow
   * once it settled. A call with neither signal nor deadline (the usual one) races only
   * `close()`: it waits in the client's `launching` set, which `close()` walks, rather than
   * on a listener of the close signal (no closure, no listener per call).
   */
  private waitReply(request: Promise<StartReply>): Promise<StartReply> {
    if (this.call.signal !== undefined || this.deadlineAt !== undefined || this.closed.aborted)
      return this.race(request);
    const waiting = new Promise<StartReply>(capture);
    const resolve = captured.resolve!;
    const reject = captured.reject!;
    captured.resolve = captured.reject = undefined;
    this.stopWait = reject;
    // The reply settles the wait; once close() has, the reply's later rejection is still handled here.
    request.then(resolve, reject);
    this.parts.launching.add(this);
    return waiting;
  }

  /** The wait of {@link GeneralLaunch.waitReply} settled. */
  private waited(): void {
    if (this.stopWait === undefined) return;
    this.stopWait = undefined;
    this.parts.launching.delete(this);
  }

  /**
   * Starts the call asking for a task (see negotiate.ts). Not async: the call's promise is the
   * answer's own, with no step between the two (a callback that names the call's handle runs once
   * the caller has it, as before). Its callers run it where a throw rejects the call.
   */
  startTask(support: TaskSupport): Promise<TaskHandle> {
    const timeoutMs = this.taskTimeout();
    return this.taskAnswer(this.sendTask(timeoutMs), support, timeoutMs, false);
  }

  /**
   * The answer to the task-asking `request`, made a handle. A first answer that asks for input
   * ([E17]) goes on to the rounds (`rounds`: these are their answer).
   */
  protected async taskAnswer(
    request: Promise<StartReply>,
    support: TaskSupport,
    timeoutMs: number,
    rounds: boolean,
  ): Promise<TaskHandle> {
    let reply: StartReply;
    try {
      reply = await this.waitReply(request);
      this.waited();
    } catch (error) {
      this.waited();
      return this.taskFailed(error, () => request, support);
    }
    if (reply.kind === 'input' && !rounds)
      return this.taskAnswer(this.rounds(reply, timeoutMs, undefined), support, timeoutMs, true);
    return this.accepted(reply);
  }

  /** Sends the `tools/call` that asks for a task, its creation counted as under way. */
  private sendTask(timeoutMs: number): Promise<StartReply> {
    this.creating();
    try {
      // [R24]: a task-creating request is never aborted by us, so it gets no signal.
      return this.start(this.request(true), timeoutMs, undefined);
    } catch (error) {
      this.unsent();
      throw error;
    }
  }

  /** The call asks for a task: its creation counts as under way. */
  protected creating(): void {
    this.asksTask = true;
    this.creation = this.beginCreate();
  }

  /** The task-asking send threw before anything went out: its creation ends (no task can come of it). */
  protected unsent(): void {
    this.creation?.end();
  }

  /**
   * The timeout of a task-creating request, and of its input rounds: it only covers a server that
   * never answers ([A5]: with no task id known, nothing else can be done).
   */
  protected taskTimeout(): number {
    return this.budget() + this.call.requestTimeoutMs;
  }

  /** The task-asking call's last answer made a handle; the creation ends either way. */
  protected accepted(reply: StartReply): TaskHandle {
    const creation = this.creation!;
    try {
      return acceptReply(this, reply, creation);
    } finally {
      creation.end();
    }
  }

  /**
   * The task-asking call's request failed with `error`, or was given up: what the call rejects
   * with, or the plain call that may still work. `request` gives the request's promise, which a
   * call given up follows ({@link givenUp}).
   */
  protected taskFailed(error: unknown, request: () => Promise<StartReply>, support: TaskSupport): Promise<TaskHandle> {
    const creation = this.creation!;
    // With `betweenRounds`, given up while the callbacks answer what the server asked first
    // ([E17]): no tools/call is outstanding and none will be sent, so no task exists or will.
    if (error instanceof Stopped)
      throw givenUp(this, this.parts.abandoned, error.stop, request(), creation, this.betweenRounds);
    creation.end();
    // A CreateTaskResult refused as malformed may still have made a task: it is cancelled.
    cancelRefused(this, this.parts.abandoned, error);
    // [A1], [V3]: the server refused task mode for an optional tool: a plain call may work.
    if (this.engine.classify(error) === 'refused' && support === 'optional' && !this.call.requireTask)
      return this.callPlain();
    throw error;
  }

  /** Starts the call as a plain call (see negotiate.ts). */
  async callPlain(): Promise<TaskHandle> {
    // A plain request is cancelled the normal way (notifications/cancelled), through a child
    // signal so the caller's signal keeps no listener afterwards.
    const child = this.call.signal === undefined ? undefined : anyOf(this.call.signal);
    this.asksTask = false;
    this.parts.untagged.add(this);
    try {
      const timeoutMs = this.budget();
      let reply = await this.waitReply(this.start(this.request(false), timeoutMs, child?.signal));
      this.waited();
      if (reply.kind === 'input') {
        reply = await this.waitReply(this.rounds(reply, timeoutMs, child?.signal));
        this.waited();
      }
      return acceptReply(this, reply);
    } catch (error) {
      this.waited();
      // A task the plain call was answered with, refused as malformed ([E2]), is cancelled.
      cancelRefused(this, this.parts.abandoned, error);
      // A request timeout under a deadline is the deadline.
      if (this.deadlineAt !== undefined && this.engine.classify(error) === 'timeout') {
        throw stopError(this, { kind: 'timeout' }, 'no-task');
      }
      throw error;
    } finally {
      this.parts.untagged.remove(this);
      child?.release();
    }
  }
}
