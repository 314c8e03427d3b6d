/**
 * Starting one call: decide whether to ask for a task (the client decides per tool on 2025-11-25,
 * [R6]-[R9]; the server decides on the extension, [E2]), send the `tools/call`, answer any input
 * the server needs before it answers (multi round-trip, [E17]), race it all against the caller's
 * signal, deadline and `close()`, and arm the deadline and abort that stop the task later ([R24]:
 * only ever with a task cancel). The decision is negotiate.ts's, the input rounds input-rounds.ts's,
 * a creation given up before its answer give-up.ts's, and the answer made a handle accept.ts's.
 */
import { stopError, type StopScope } from './deadline-signal.js';
import type { TaskEngine } from '../../engine/engine.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskClosedError } from '../../errors.js';
import type { TaskHandle } from '../../api/index.js';
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, type ResolvedCallOptions } from '../options.js';
import { creationsOn } from '../input/early.js';
import { CreationInFlight, type PendingCall } from '../input/untagged.js';
import { acceptReply, type AcceptingCall } from './accept.js';
import { cancelRefused, givenUp } from './give-up.js';
import { inputRounds, type RoundsCall } from './input-rounds.js';
import type { LaunchCreation, LaunchParts, WaitingLaunch } from './launch-parts.js';
import { NO_RELEASE } from './limiter.js';
import { negotiateAndStart, type NegotiatingCall } from './negotiate.js';
import { anyOf, onAbort } from '../../util/abort.js';
import { keepShape } from '../../util/shapes.js';
import { EPOCH } from '../../util/epoch.js';
import { Stopped, closedStop, raceStop } from '../../util/race.js';
import { capture, captured } from '../../util/capture.js';
import type { StartReply, StartToolCall, TaskSupport } from '../../wire/wire.js';

/** One call being started. */
export class Launch implements StopScope, PendingCall, RoundsCall, NegotiatingCall, WaitingLaunch, AcceptingCall {
  /**
   * True from a `tools/call` reply that asks for input first ([E17]) until its retry is sent: no
   * `tools/call` is outstanding meanwhile, and none is sent once the call is given up, so a call
   * given up then has no task and never gets one. Set by the input rounds (input-rounds.ts).
   */
  betweenRounds = false;
  /** Whether the `tools/call` in flight asks for a task (see {@link PendingCall}). */
  asksTask = false;
  /**
   * Clock time the latest `tools/call` was sent (input-rounds.ts sends the later rounds): for the
   * one that created the task, the earliest the server can have created it, its ttl counting from
   * then at the soonest.
   */
  sentAt: number;
  /** The tool list the call's `Mcp-Param-*` headers came from ([E32]; `undefined`: none was held). */
  private listing: ReadonlyMap<string, unknown> | undefined = undefined;
  /** The task this call created, once tracked (see {@link Launch.stopSignal}). */
  private task: TaskView | undefined = undefined;
  /** The stops of {@link Launch.stopSignal} taken before the call's task was tracked, if any. */
  private stops: Set<() => void> | undefined = undefined;
  /** The latest `tools/call` sent, from which the input rounds build their retries (after a relist, its fresh headers). */
  private sentCall: StartToolCall | undefined = undefined;
  /** Rejects the wait of {@link Launch.waitReply}, while the call waits there (see {@link Launch.closing}). */
  private stopWait: ((error: unknown) => void) | undefined = undefined;

  private constructor(
    readonly parts: LaunchParts,
    readonly toolName: string,
    private readonly args: Record<string, unknown>,
    readonly call: ResolvedCallOptions,
    readonly startedAt: number,
    private readonly deadlineAt: number | undefined,
  ) {
    this.sentAt = startedAt;
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

  get engine(): TaskEngine {
    return this.parts.engine;
  }

  /** Aborted when the client closes. */
  get closed(): AbortSignal {
    return this.parts.closeSignal.signal;
  }

  /**
   * Marks a task creation as under way, on the port (early input) and in the engine (early
   * notifications); until it ends, this call counts as in flight for untagged input.
   */
  private beginCreate(): LaunchCreation {
    const { earlyInput, port, engine, untagged } = this.parts;
    return CreationInFlight.begin(earlyInput.begin(creationsOn(port), engine), untagged, this);
  }

  /**
   * Runs the call up to the server's answer. Whatever a call in flight ran into while `close()`
   * ran (a closed connection), it rejects with `TaskClosedError`.
   */
  async run(): Promise<TaskHandle> {
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
      const failure = error instanceof Stopped ? stopError(this, error.stop, 'no-task') : error;
      if (this.closed.aborted && !(failure instanceof TaskClosedError)) {
        throw new TaskClosedError('The TaskClient was closed during the call', {
          toolName: this.toolName,
          cause: failure,
        });
      }
      throw failure;
    }
  }

  /** `promise`, raced against the call's signal, deadline and `close()`. */
  race<T>(promise: Promise<T>): Promise<T> {
    return raceStop(promise, this.engine.scheduler, this.call.signal, this.deadlineAt, this.closed);
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

  /** `close()` began: a call waiting for its reply stops waiting (see {@link Launch.waitReply}). */
  closing(): void {
    this.stopWait?.(closedStop());
  }

  /** The call's own input callbacks. */
  get callbacks(): ResolvedCallOptions['callbacks'] {
    return this.call.callbacks;
  }

  /**
   * A signal that aborts with the call: its own signal, its deadline, or `close()`; and, once the
   * call created a task, when that task settles (an untagged question tied to the call before its
   * `CreateTaskResult` is the task's: its answer is no longer wanted once the task ended).
   */
  stopSignal(): { signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    const stop = (): void => controller.abort(new Error('The call was abandoned'));
    const offs = [onAbort(this.closed, stop), this.onTaskSettled(stop)];
    if (this.call.signal !== undefined) offs.push(onAbort(this.call.signal, stop));
    const scheduler = this.engine.scheduler;
    const timer = this.deadlineAt === undefined ? undefined : scheduler.schedule(this.deadlineAt, stop);
    return {
      signal: controller.signal,
      release: () => {
        for (const off of offs) off();
        scheduler.cancel(timer);
      },
    };
  }

  /** Calls `stop` once the task this call creates (or created) settles; returns the undo. */
  private onTaskSettled(stop: () => void): () => void {
    if (this.task !== undefined) return this.task.onSettled(stop);
    const stops = (this.stops ??= new Set());
    stops.add(stop);
    return () => {
      stops.delete(stop);
    };
  }

  /** The call's task is tracked: the stops taken before fire when it settles. */
  tracked(record: TaskView): void {
    this.task = record;
    const stops = this.stops;
    this.stops = undefined;
    if (stops === undefined || stops.size === 0) return;
    record.onSettled(() => {
      for (const stop of [...stops]) stop();
    });
  }

  /** True once the caller's signal, the deadline or `close()` has stopped waiting for this call. */
  abandoned(): boolean {
    const now = this.engine.config.clock.now();
    return (
      this.call.signal?.aborted === true ||
      this.closed.aborted ||
      (this.deadlineAt !== undefined && now >= this.deadlineAt)
    );
  }

  /** Time left before the deadline, or the plain-call default. */
  private budget(): number {
    return this.deadlineAt === undefined
      ? DEFAULT_PLAIN_CALL_TIMEOUT_MS
      : Math.max(1, this.deadlineAt - this.engine.config.clock.now());
  }

  /** The request, without the parts each attempt adds. */
  private request(task: boolean): StartToolCall {
    const { call } = this;
    const { catalog, port } = this.parts;
    // [E32]: only where they are sent (stdio and the legacy era may ignore the declarations).
    const mirror = port.sendsHeaders();
    this.listing = catalog.listing;
    return {
      name: this.toolName,
      arguments: this.args,
      task: task ? { ttl: call.ttlMs } : undefined,
      meta: call.meta,
      progressToken: call.progressToken,
      headers: mirror ? catalog.paramHeaders(this.toolName, this.args) : undefined,
    };
  }

  /**
   * Sends the call. Its answer is usually the last: one that asks for input first ([E17]) goes on
   * to {@link Launch.rounds}, which the caller runs once that answer is in.
   */
  private start(
    base: StartToolCall,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    relisted = false,
  ): Promise<StartReply> {
    const engine = this.engine;
    this.betweenRounds = false;
    this.sentAt = engine.config.clock.now();
    this.sentCall = base;
    const sent = engine.wire.startToolCall(
      base,
      // [R24], [A5]: a call that asks for a task is never cancelled by notification, even at its timeout.
      engine.requestOptions(timeoutMs, signal, undefined, this.call.instrument, base.task !== undefined),
    );
    // [E33]: refused headers are recovered only where headers are sent, and once: elsewhere (stdio,
    // in process, the legacy era) the call's path has no recovery handler to make.
    if (relisted || !this.parts.port.sendsHeaders()) return sent;
    return sent.then(undefined, (error: unknown) =>
      engine.classify(error) === 'headers' ? this.relist(base, error, timeoutMs, signal) : Promise.reject(error),
    );
  }

  /**
   * The server asked for input before it answers ([E17]): the call is sent again with the answers,
   * as often as it asks (a retry with `inputResponses` and the opaque `requestState`, unchanged),
   * each retry built from the call last sent: after a relist ([E33]), the one with fresh headers.
   */
  private rounds(first: StartReply, timeoutMs: number, signal: AbortSignal | undefined): Promise<StartReply> {
    return inputRounds(this, this.parts.inline, this.sentCall!, first, timeoutMs, signal);
  }

  /**
   * [E33]: the server refused the call's headers before running it (its tool listing changed, or
   * none was held): the tools are listed again, and the call is sent once more if the tool
   * declares `Mcp-Param-*` headers for it ([E32]); otherwise (or when the listing fails) it fails
   * with the server's error. No `tools/call` is outstanding meanwhile, as between input rounds: a
   * call given up then sends nothing more (what it rejects with then is the race's).
   */
  private async relist(
    base: StartToolCall,
    error: unknown,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<StartReply> {
    this.betweenRounds = true;
    const headers = await this.parts.catalog.relisted(this.toolName, this.args, this.listing).catch(() => undefined);
    if (headers === undefined || this.abandoned()) throw error;
    return this.start({ ...base, headers }, timeoutMs, signal, true);
  }

  /** Starts the call asking for a task (see negotiate.ts). */
  async startTask(support: TaskSupport): Promise<TaskHandle> {
    const { engine, call } = this;
    this.asksTask = true;
    const creation = this.beginCreate();
    // [R24]: a task-creating request is never aborted by us, so it gets no signal. Its timeout
    // only covers a server that never answers ([A5]: with no task id known, nothing else can be done).
    const timeoutMs = this.budget() + call.requestTimeoutMs;
    let request = this.start(this.request(true), timeoutMs, undefined);
    let reply: StartReply;
    try {
      reply = await this.waitReply(request);
      this.waited();
      if (reply.kind === 'input') {
        request = this.rounds(reply, timeoutMs, undefined);
        reply = await this.waitReply(request);
        this.waited();
      }
    } catch (error) {
      this.waited();
      // With `betweenRounds`, given up while the callbacks answer what the server asked first
      // ([E17]): no tools/call is outstanding and none will be sent, so no task exists or will.
      if (error instanceof Stopped)
        throw givenUp(this, this.parts.abandoned, error.stop, request, creation, this.betweenRounds);
      creation.end();
      // A CreateTaskResult refused as malformed may still have made a task: it is cancelled.
      cancelRefused(this, this.parts.abandoned, error);
      // [A1], [V3]: the server refused task mode for an optional tool: a plain call may work.
      if (engine.classify(error) === 'refused' && support === 'optional' && !call.requireTask) return this.callPlain();
      throw error;
    }
    try {
      return acceptReply(this, reply, creation);
    } finally {
      creation.end();
    }
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
