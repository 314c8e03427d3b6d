/**
 * Starting one call: decide whether to ask for a task (the client decides per tool on 2025-11-25,
 * [R6]-[R9]; the server decides on the extension, [E2]), send the `tools/call`, answer any input
 * the server needs before it answers (multi round-trip, [E17]), race it all against the caller's
 * signal, deadline and `close()`, and arm the deadline and abort that stop the task later ([R24]:
 * only ever with a task cancel). The decision is negotiate.ts's, the input rounds input-rounds.ts's,
 * a creation given up before its answer give-up.ts's, and the answer made a handle accept.ts's;
 * what the call is and sends, apart from how it waits, is launch-base.ts's, and the general path
 * (a call with a signal, a deadline or a limit) launch-general.ts's. This module runs the usual
 * call, and answers `close()`.
 */
import type { StopScope } from './deadline-signal.js';
import type { TaskHandle } from '../../api/index.js';
import type { ResolvedCallOptions } from '../options.js';
import type { PendingCall } from '../input/untagged.js';
import type { AcceptingCall } from './accept.js';
import { givenUp } from './give-up.js';
import type { RoundsCall } from './input-rounds.js';
import type { LaunchParts, WaitingLaunch } from './launch-parts.js';
import { askedSupport, type NegotiatingCall } from './negotiate.js';
import { keepShape } from '../../util/shapes.js';
import { GeneralLaunch } from './launch-general.js';
import { EPOCH } from '../../util/epoch.js';
import { Stopped, closedStop } from '../../util/race.js';
import { capture, captured } from '../../util/capture.js';
import type { StartReply, TaskSupport } from '../../wire/wire.js';
import { deliver, type Sink } from '../../util/deliver.js';
import { noop } from '../../util/noop.js';

/** One call being started. */
export class Launch
  extends GeneralLaunch
  implements StopScope, PendingCall, RoundsCall, NegotiatingCall, WaitingLaunch, AcceptingCall
{
  /** Resolves the call's own promise, while it runs the usual way (see {@link Launch.run}). */
  private resolveRun: ((handle: TaskHandle) => void) | undefined = undefined;
  /** True while the call runs the usual way (see {@link Launch.run}), until its first answer or `close()`. */
  private usual = false;
  /**
   * The `tools/call` a call run the usual way waits for, once it is a promise: sent again after a
   * relist ([E33]), or asked for by `close()` (see {@link Launch.lateReply}).
   */
  private sentTask: Promise<StartReply> | undefined = undefined;
  /**
   * The task support a call run the usual way asked with. (Its timeout is `taskTimeout()`, the
   * same on every read: a usual call has no deadline.)
   */
  private support: TaskSupport | undefined = undefined;
  /** Settle {@link Launch.lateReply}'s promise with the reply that comes after `close()` gave the call up. */
  private lateResolve: ((reply: StartReply) => void) | undefined = undefined;
  private lateReject: ((error: unknown) => void) | undefined = undefined;

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
    this.support = support;
    this.creating();
    try {
      // [R24]: a task-creating request is never aborted by us, so it gets no signal.
      this.startInto(this.request(true), timeoutMs, REPLY, this);
    } catch (error) {
      // Nothing went out: a close() that came meanwhile (from a hook of the send) waits for no answer.
      this.unsent();
      this.settleLate(error, true);
      throw error;
    }
  }

  /**
   * The usual call's `tools/call` was answered (told by {@link REPLY}). Given up by `close()`
   * first (no longer `usual`), the answer goes to {@link givenUp}, through {@link Launch.lateReply}.
   */
  replied(reply: StartReply): void {
    if (this.usual) this.answered(reply, this.support!, this.taskTimeout());
    else this.settleLate(reply, false);
  }

  /**
   * The usual call's `tools/call` failed (told by {@link REPLY}): headers refused are recovered
   * ([E33]); any other failure is the call's.
   */
  replyFailed(error: unknown): void {
    if (!this.usual) {
      this.settleLate(error, true);
      return;
    }
    const support = this.support!;
    if (!this.recovers(error)) {
      this.startFailed(error, () => Promise.reject(error), support);
      return;
    }
    // The relisted send's promise, known to close() before the relist sends anything (a hook of
    // its tools/list may close the client).
    const request = new Promise<StartReply>(capture);
    const resolve = captured.resolve!;
    const reject = captured.reject!;
    captured.resolve = captured.reject = undefined;
    this.sentTask = request;
    // Given up by close() meanwhile (no longer `usual`), givenUp() follows the answer instead.
    request.then(
      (reply) => {
        if (this.usual) this.answered(reply, support, this.taskTimeout());
      },
      (failure: unknown) => {
        if (this.usual) this.startFailed(failure, () => request, support);
      },
    );
    this.relistAfter(error, this.taskTimeout()).then(resolve, reject);
  }

  /**
   * The `tools/call` of a call run the usual way, as a promise (for {@link givenUp}, once
   * `close()` gave the call up): the relisted send's, or one the sink's answer settles.
   */
  private lateReply(): Promise<StartReply> {
    if (this.sentTask !== undefined) return this.sentTask;
    const promise = new Promise<StartReply>(capture);
    this.lateResolve = captured.resolve!;
    this.lateReject = captured.reject!;
    captured.resolve = captured.reject = undefined;
    return promise;
  }

  /** Settles {@link Launch.lateReply}'s promise, if it was made, with the answer (`failed`: the failure) that came. */
  private settleLate(value: unknown, failed: boolean): void {
    const resolve = this.lateResolve;
    const reject = this.lateReject;
    this.lateResolve = this.lateReject = undefined;
    if (failed) reject?.(value);
    else resolve?.(value as StartReply);
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
  private startFailed(error: unknown, request: () => Promise<StartReply>, support: TaskSupport): void {
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
   * `close()` began: a call waiting for its reply stops waiting (see `GeneralLaunch.waitReply`). A
   * call run the usual way rejects as the general path's would: before its turn nothing was sent;
   * after it, a task its `tools/call` still creates is cancelled ({@link givenUp}).
   */
  closing(): void {
    if (!this.usual) {
      this.stopWait?.(closedStop());
      return;
    }
    const reject = this.stopWait!;
    // Before its turn (no creation begun), nothing was sent.
    const request = this.creation === undefined ? undefined : this.lateReply();
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
}

keepShape(Launch.exemplar());

/** A usual call's turn (see {@link Launch.run}): one object for every call, the call as its token. */
const TURN: Sink<unknown, Launch> = { replied: (_, launch) => launch.turn(), failed: noop };

/** The answer to a usual call's `tools/call` (see {@link Launch.go}): one object for every call, the call as its token. */
const REPLY: Sink<StartReply, Launch> = {
  replied: (reply, launch) => launch.replied(reply),
  failed: (error, launch) => launch.replyFailed(error),
};
