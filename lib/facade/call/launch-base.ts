/**
 * The part of a call's launch (launch.ts) that does not depend on how the call waits: what it is
 * (its tool, arguments, options and deadline), the `tools/call` it sends, the input rounds and the
 * relist that send it again ([E17], [E33]), and the scope its later stops use (its deadline, its
 * signal, `close()`, and the task it created).
 */
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, type ResolvedCallOptions } from '../options.js';
import { creationsOn } from '../input/early.js';
import { CreationInFlight } from '../input/untagged.js';
import { inputRounds } from './input-rounds.js';
import type { LaunchCreation, LaunchParts } from './launch-parts.js';
import type { TaskEngine } from '../../engine/engine.js';
import type { TaskView } from '../../engine/task-view.js';
import { onAbort } from '../../util/abort.js';
import { Stopped, raceStop } from '../../util/race.js';
import { TaskClosedError } from '../../errors.js';
import { stopError } from './deadline-signal.js';
import type { StartReply, StartToolCall, WireRequestOptions } from '../../wire/wire.js';
import type { Sink } from '../../util/deliver.js';

/** A call being started, apart from how it waits (see the module comment; launch.ts is the rest). */
export abstract class LaunchBase {
  /**
   * True from a `tools/call` reply that asks for input first ([E17]) until its retry is sent: no
   * `tools/call` is outstanding meanwhile, and none is sent once the call is given up, so a call
   * given up then has no task and never gets one. Set by the input rounds (input-rounds.ts).
   */
  betweenRounds = false;
  /** Whether the `tools/call` in flight asks for a task (see {@link PendingCall}). */
  asksTask = false;
  /** Its index in the client's calls in flight, for untagged input (util/slot-set.ts). */
  untaggedSlot = -1;
  /**
   * Clock time the latest `tools/call` was sent (input-rounds.ts sends the later rounds): for the
   * one that created the task, the earliest the server can have created it, its ttl counting from
   * then at the soonest.
   */
  sentAt: number;
  /** The tool list the call's `Mcp-Param-*` headers came from ([E32]; `undefined`: none was held). */
  private listing: ReadonlyMap<string, unknown> | undefined = undefined;
  /** The task this call created, once tracked (see {@link LaunchBase.stopSignal}). */
  private task: TaskView | undefined = undefined;
  /** The stops of {@link LaunchBase.stopSignal} taken before the call's task was tracked, if any. */
  private stops: Set<() => void> | undefined = undefined;
  /** The latest `tools/call` sent, from which the input rounds build their retries (after a relist, its fresh headers). */
  private sentCall: StartToolCall | undefined = undefined;

  protected constructor(
    readonly parts: LaunchParts,
    readonly toolName: string,
    private readonly args: Record<string, unknown>,
    readonly call: ResolvedCallOptions,
    readonly startedAt: number,
    protected readonly deadlineAt: number | undefined,
  ) {
    this.sentAt = startedAt;
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
  protected beginCreate(): LaunchCreation {
    const { earlyInput, port, engine, untagged } = this.parts;
    return CreationInFlight.begin(earlyInput.begin(creationsOn(port), engine), untagged, this);
  }

  /**
   * What the call rejects with for `error`: a stop as the call's typed error, and anything the
   * call ran into while `close()` ran as a `TaskClosedError`.
   */
  protected failure(error: unknown): unknown {
    const failure = error instanceof Stopped ? stopError(this, error.stop, 'no-task') : error;
    if (this.closed.aborted && !(failure instanceof TaskClosedError)) {
      return new TaskClosedError('The TaskClient was closed during the call', {
        toolName: this.toolName,
        cause: failure,
      });
    }
    return failure;
  }

  /** `promise`, raced against the call's signal, deadline and `close()`. */
  race<T>(promise: Promise<T>): Promise<T> {
    return raceStop(promise, this.engine.scheduler, this.call.signal, this.deadlineAt, this.closed);
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
  protected budget(): number {
    return this.deadlineAt === undefined
      ? DEFAULT_PLAIN_CALL_TIMEOUT_MS
      : Math.max(1, this.deadlineAt - this.engine.config.clock.now());
  }

  /** The request, without the parts each attempt adds. */
  protected request(task: boolean): StartToolCall {
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
   * to {@link LaunchBase.rounds}, which the caller runs once that answer is in.
   */
  protected start(
    base: StartToolCall,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    relisted = false,
  ): Promise<StartReply> {
    const engine = this.engine;
    const sent = engine.wire.startToolCall(base, this.sending(base, timeoutMs, signal));
    // [E33]: refused headers are recovered only where headers are sent, and once: elsewhere (stdio,
    // in process, the legacy era) the call's path has no recovery handler to make.
    if (relisted || !this.parts.port.sendsHeaders()) return sent;
    return sent.then(undefined, (error: unknown) =>
      engine.classify(error) === 'headers' ? this.relist(base, error, timeoutMs, signal) : Promise.reject(error),
    );
  }

  /**
   * {@link LaunchBase.start} without a signal, its reply or failure told to `sink` with `token`
   * (the usual call's form: no promise per call). The sink sees a failure first with
   * {@link LaunchBase.recovers}, as {@link LaunchBase.start}'s recovery does.
   */
  protected startInto<Token>(
    base: StartToolCall,
    timeoutMs: number,
    sink: Sink<StartReply, Token>,
    token: Token,
  ): void {
    this.engine.wire.startToolCallInto(base, this.sending(base, timeoutMs, undefined), sink, token);
  }

  /**
   * For a call sent by {@link LaunchBase.startInto} that failed with `error`: true when the server
   * refused its headers where headers are sent ([E33]), which {@link LaunchBase.relistAfter}
   * recovers from; false when `error` is the call's.
   */
  protected recovers(error: unknown): boolean {
    return this.parts.port.sendsHeaders() && this.engine.classify(error) === 'headers';
  }

  /** The call sent by {@link LaunchBase.startInto} sent again after a relist, for a failure {@link LaunchBase.recovers} takes. */
  protected relistAfter(error: unknown, timeoutMs: number): Promise<StartReply> {
    return this.relist(this.sentCall!, error, timeoutMs, undefined);
  }

  /** What each send of the call first notes; the options of its request. */
  private sending(base: StartToolCall, timeoutMs: number, signal: AbortSignal | undefined): WireRequestOptions {
    const engine = this.engine;
    this.betweenRounds = false;
    this.sentAt = engine.config.clock.now();
    this.sentCall = base;
    // [R24], [A5]: a call that asks for a task is never cancelled by notification, even at its timeout.
    const call = this.call;
    return engine.requestOptions(timeoutMs, signal, undefined, call.instrument, base.task !== undefined, call.input);
  }

  /**
   * The server asked for input before it answers ([E17]): the call is sent again with the answers,
   * as often as it asks (a retry with `inputResponses` and the opaque `requestState`, unchanged),
   * each retry built from the call last sent: after a relist ([E33]), the one with fresh headers.
   */
  protected rounds(first: StartReply, timeoutMs: number, signal: AbortSignal | undefined): Promise<StartReply> {
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
}
