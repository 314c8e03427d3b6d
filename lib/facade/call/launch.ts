/**
 * Starting one call: decide whether to ask for a task (the client decides per tool on 2025-11-25,
 * [R6]-[R9]; the server decides on the extension, [E2]), send the `tools/call`, answer any input
 * the server needs before it answers (multi round-trip, [E17]), race it all against the caller's
 * signal, deadline and `close()`, and arm the deadline and abort that stop the task later ([R24]:
 * only ever with a task cancel). The decision is negotiate.ts's, the input rounds input-rounds.ts's,
 * a creation given up before its answer give-up.ts's, and the answer made a handle accept.ts's;
 * what the call is and sends, apart from how it waits, is launch-base.ts's.
 */
import { stopError, type StopScope } from './deadline-signal.js';
import type { TaskHandle } from '../../api/index.js';
import type { ResolvedCallOptions } from '../options.js';
import type { PendingCall } from '../input/untagged.js';
import { acceptReply, type AcceptingCall } from './accept.js';
import { cancelRefused, givenUp } from './give-up.js';
import type { RoundsCall } from './input-rounds.js';
import type { LaunchCreation, LaunchParts, WaitingLaunch } from './launch-parts.js';
import { NO_RELEASE } from './limiter.js';
import { askedSupport, negotiateAndStart, type NegotiatingCall } from './negotiate.js';
import { anyOf } from '../../util/abort.js';
import { keepShape } from '../../util/shapes.js';
import { LaunchBase } from './launch-base.js';
import { EPOCH } from '../../util/epoch.js';
import { Stopped, closedStop } from '../../util/race.js';
import { capture, captured } from '../../util/capture.js';
import type { StartReply, TaskSupport } from '../../wire/wire.js';
import { deliver, type Sink } from '../../util/deliver.js';
import { noop } from '../../util/noop.js';

/** One call being started. */
export class Launch
  extends LaunchBase
  implements StopScope, PendingCall, RoundsCall, NegotiatingCall, WaitingLaunch, AcceptingCall
{
  /**
   * Rejects the wait of {@link Launch.waitReply}, while the call waits there (see {@link Launch.closing});
   * for a call run the usual way ({@link Launch.usual}), the call's own promise.
   */
  private stopWait: ((error: unknown) => void) | undefined = undefined;
  /** Resolves the call's own promise, while it runs the usual way (see {@link Launch.run}). */
  private resolveRun: ((handle: TaskHandle) => void) | undefined = undefined;
  /** True while the call runs the usual way (see {@link Launch.run}), until its first answer or `close()`. */
  private usual = false;
  /** The task creation under way, once the call asked for a task. */
  private creation: LaunchCreation | undefined = undefined;
  /** The `tools/call` a call run the usual way waits for, once sent. */
  private sentTask: Promise<StartReply> | undefined = undefined;

  private constructor(
    parts: LaunchParts,
    toolName: string,
    args: Record<string, unknown>,
    call: ResolvedCallOptions,
    startedAt: number,
    deadlineAt: number | undefined,
  ) {
    super(parts, toolName, args, call, startedAt, deadlineAt);
  }

  /** A call of `toolName` starting now. */
  static of(parts: LaunchParts, toolName: string, args: Record<string, unknown>, call: ResolvedCallOptions): Launch {
    const startedAt = parts.engine.config.clock.now();
    const deadlineAt = call.timeoutMs === undefined ? undefined : startedAt + call.timeoutMs;
    return new Launch(parts, toolName, args, call, startedAt, deadlineAt);
  }

  /**
   * A launch of nothing, never run: it keeps the hidden class alive (util/shapes.ts). Its clock
   * times are {@link EPOCH}, a `Date.now()` reading as real calls' are: a small integer there would
   * give real calls a hidden class of their own, which dies with the last of them.
   */
  static exemplar(): Launch {
    return new Launch(undefined as never, '', {}, undefined as never, EPOCH, undefined);
  }

  /**
   * Runs the call up to the server's answer. Whatever a call in flight ran into while `close()`
   * ran (a closed connection), it rejects with `TaskClosedError`.
   *
   * The usual call (no signal, no deadline, no concurrency limit) runs without the general path's
   * async steps: its promise is made here, it waits a microtask as a free slot would (so that a
   * `close()` in the same tick stops it before anything is sent), and it sits in the client's
   * `launching` set, which `close()` walks, until its first answer (see {@link Launch.turn}).
   */
  run(): Promise<TaskHandle> {
    if (this.call.signal !== undefined || this.deadlineAt !== undefined || !this.parts.limiter.unlimited)
      return this.runGeneral();
    const promise = new Promise<TaskHandle>(capture);
    this.resolveRun = captured.resolve!;
    this.stopWait = captured.reject!;
    captured.resolve = captured.reject = undefined;
    this.usual = true;
    this.parts.launching.add(this);
    deliver(TURN, this, undefined, false);
    return promise;
  }

  /** {@link Launch.run} for any call. */
  private async runGeneral(): Promise<TaskHandle> {
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
   * The usual call's turn came (a microtask after {@link Launch.run}): it asks for a task as the
   * general path would, and waits for the answer in the `launching` set. Anything else (the
   * connection is lost, the server does not decide, the tool's task support is not known yet)
   * goes the general way from here. Whatever throws on the way rejects the call, as a throw in
   * the general path's async steps would.
   */
  turn(): void {
    if (!this.usual) return; // close() stopped it first
    try {
      this.go();
    } catch (error) {
      if (!this.usual) return;
      const reject = this.stopWait!;
      this.leave();
      reject(this.failure(error));
    }
  }

  /** {@link Launch.turn}, once the call may go. */
  private go(): void {
    // As the general path checks after its slot: a close() under way stops the call before anything is sent.
    if (this.closed.aborted) throw new Stopped({ kind: 'closed' });
    const support = this.parts.connection.connected
      ? askedSupport(this.engine.features, this.parts.catalog, this.toolName)
      : undefined;
    if (support === undefined) {
      const resolve = this.resolveRun!;
      const reject = this.stopWait!;
      this.leave();
      // The general path's own failures are already what the call rejects with.
      this.runGeneral().then(resolve, reject);
      return;
    }
    const timeoutMs = this.taskTimeout();
    const request = this.sendTask(timeoutMs);
    this.sentTask = request;
    // Given up by close() first (no longer `usual`), givenUp() follows the answer instead.
    request.then(
      (reply) => {
        if (this.usual) this.answered(reply, support, timeoutMs);
      },
      (error: unknown) => {
        if (this.usual) this.startFailed(error, request, support);
      },
    );
  }

  /** The usual call's `tools/call` was answered: a handle, or the input rounds first ([E17]). */
  private answered(reply: StartReply, support: TaskSupport, timeoutMs: number): void {
    const resolve = this.resolveRun!;
    const reject = this.stopWait!;
    this.leave();
    try {
      if (reply.kind === 'input')
        this.follow(
          this.taskAnswer(this.rounds(reply, timeoutMs, undefined), support, timeoutMs, true),
          resolve,
          reject,
        );
      else resolve(this.accepted(reply));
    } catch (error) {
      reject(this.failure(error));
    }
  }

  /** The usual call's `tools/call` failed: the call fails, or goes on as a plain call. */
  private startFailed(error: unknown, request: Promise<StartReply>, support: TaskSupport): void {
    const resolve = this.resolveRun!;
    const reject = this.stopWait!;
    this.leave();
    try {
      this.follow(this.taskFailed(error, request, support), resolve, reject);
    } catch (thrown) {
      reject(this.failure(thrown));
    }
  }

  /** The usual call stops waiting its usual way: it leaves the `launching` set (its settle functions are the caller's now). */
  private leave(): void {
    this.usual = false;
    this.resolveRun = this.stopWait = undefined;
    this.sentTask = undefined;
    this.parts.launching.delete(this);
  }

  /** The call's promise (its settle functions, `resolve` and `reject`) follows `outcome`, as the general path's would. */
  private follow(
    outcome: Promise<TaskHandle>,
    resolve: (handle: TaskHandle) => void,
    reject: (error: unknown) => void,
  ): void {
    outcome.then(resolve, (error: unknown) => reject(this.failure(error)));
  }

  /**
   * The `tools/call` reply, raced as {@link Launch.race} does; {@link Launch.waited} must follow
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

  /** The wait of {@link Launch.waitReply} settled. */
  private waited(): void {
    if (this.stopWait === undefined) return;
    this.stopWait = undefined;
    this.parts.launching.delete(this);
  }

  /**
   * `close()` began: a call waiting for its reply stops waiting (see {@link Launch.waitReply}). A
   * call run the usual way rejects as the general path's would: before its turn nothing was sent;
   * after it, a task its `tools/call` still creates is cancelled ({@link givenUp}).
   */
  closing(): void {
    if (!this.usual) {
      this.stopWait?.(closedStop());
      return;
    }
    const reject = this.stopWait!;
    const request = this.sentTask;
    this.leave();
    const stop = { kind: 'closed' } as const;
    reject(
      this.failure(
        request === undefined
          ? new Stopped(stop)
          : givenUp(this, this.parts.abandoned, stop, request, this.creation!, this.betweenRounds),
      ),
    );
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
  private async taskAnswer(
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
      return this.taskFailed(error, request, support);
    }
    if (reply.kind === 'input' && !rounds)
      return this.taskAnswer(this.rounds(reply, timeoutMs, undefined), support, timeoutMs, true);
    return this.accepted(reply);
  }

  /** Sends the `tools/call` that asks for a task, its creation counted as under way. */
  private sendTask(timeoutMs: number): Promise<StartReply> {
    this.asksTask = true;
    this.creation = this.beginCreate();
    // [R24]: a task-creating request is never aborted by us, so it gets no signal.
    return this.start(this.request(true), timeoutMs, undefined);
  }

  /**
   * The timeout of a task-creating request, and of its input rounds: it only covers a server that
   * never answers ([A5]: with no task id known, nothing else can be done).
   */
  private taskTimeout(): number {
    return this.budget() + this.call.requestTimeoutMs;
  }

  /** The task-asking call's last answer made a handle; the creation ends either way. */
  private accepted(reply: StartReply): TaskHandle {
    const creation = this.creation!;
    try {
      return acceptReply(this, reply, creation);
    } finally {
      creation.end();
    }
  }

  /**
   * The task-asking call's `request` failed with `error`, or was given up: what the call rejects
   * with, or the plain call that may still work.
   */
  private taskFailed(error: unknown, request: Promise<StartReply>, support: TaskSupport): Promise<TaskHandle> {
    const creation = this.creation!;
    // With `betweenRounds`, given up while the callbacks answer what the server asked first
    // ([E17]): no tools/call is outstanding and none will be sent, so no task exists or will.
    if (error instanceof Stopped)
      throw givenUp(this, this.parts.abandoned, error.stop, request, creation, this.betweenRounds);
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

keepShape(Launch.exemplar());

/** A usual call's turn (see {@link Launch.run}): one object for every call, the call as its token. */
const TURN: Sink<unknown, Launch> = { replied: (_, launch) => launch.turn(), failed: noop };
