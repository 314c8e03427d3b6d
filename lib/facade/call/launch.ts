/**
 * Starting one call: decide whether to ask for a task (the client decides per tool on 2025-11-25,
 * [R6]-[R9]; the server decides on the extension, [E2]), send the `tools/call`, answer any input
 * the server needs before it answers (multi round-trip, [E17]), race it all against the caller's
 * signal, deadline and `close()`, and arm the deadline and abort that stop the task later ([R24]:
 * only ever with a task cancel).
 */
import { armDeadlineAndSignal, stopError, type StopScope } from './deadline-signal.js';
import type { TaskEngine } from '../../engine/engine.js';
import { TaskClosedError, TaskError, TaskNotSupportedError, TaskProtocolError } from '../../errors.js';
import type { TaskHandle } from '../../api/index.js';
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, type ResolvedCallOptions } from '../options.js';
import type { ToolCatalog } from './tool-catalog.js';
import type { Connection } from '../connection/connection.js';
import { TaskHandleOf } from '../handle/handle.js';
import type { LiveTasks } from '../handle/registry.js';
import { creationsOn, type EarlyInput } from '../input/early.js';
import type { InlineAnswers } from '../input/inline.js';
import { CreationInFlight, type PendingCall, type UntaggedInput } from '../input/untagged.js';
import type { Abandoned } from './abandoned.js';
import { NO_RELEASE, type Limiter } from './limiter.js';
import type { Task } from '../../types.js';
import { onAbort } from '../../util/abort.js';
import { keepShape } from '../../util/shapes.js';
import { Stopped, childController, raceStop, type StopReason } from '../../util/race.js';
import type { SessionPort } from '../../port/port.js';
import type { StartReply, StartToolCall, TaskSupport, WireFeatures } from '../../wire/wire.js';

/** Most input rounds one call goes through before it gives up ([E17]: a server may ask again). */
const MAX_INPUT_ROUNDS = 10;

/** The parts of its TaskClient that a launch uses (see facade/parts.ts). */
export interface LaunchParts {
  readonly engine: TaskEngine;
  readonly catalog: ToolCatalog;
  /** `adopt` wraps a tracked record in a handle and registers it. */
  readonly live: Pick<LiveTasks, 'adopt'>;
  /** `beforeTask` answers the input a server asks for before it answers a call ([E17]), through the call's callbacks. */
  readonly inline: Pick<InlineAnswers, 'beforeTask'>;
  /**
   * `slot` takes a concurrency slot, waiting in line if needed; it rejects with a `Stopped` when
   * the signal or deadline wins, or with `TaskQueueFullError`. The returned function frees the slot.
   */
  readonly limiter: Pick<Limiter, 'slot'>;
  /**
   * `ready`: `undefined` when connected; else a promise that waits for a `reconnect` factory (or
   * rejects). The factory is retried for a waiting call only until it has given up (`abandoned()`).
   */
  readonly connection: Pick<Connection, 'ready'>;
  /**
   * A task creation under way is marked on the port's creations (for the engine's early
   * notifications, and for early input on the port; see {@link LaunchCreation}).
   */
  readonly earlyInput: Pick<EarlyInput, 'begin'>;
  /**
   * Until its `tools/call` is answered, a call counts as in flight for input requests that name no
   * task (input/untagged.ts).
   */
  readonly untagged: UntaggedInput;
  /**
   * The follow-ups of creations given up before their answer: each settles once the answer came
   * and, when it created a task, that task's one `tasks/cancel` is answered (or failed). `close()`
   * waits for these (bounded) before it closes an SDK client it made.
   */
  readonly abandoned: Pick<Abandoned, 'add'>;
  /** Aborted when the client closes: the call then rejects at once with `TaskClosedError`. */
  readonly closeSignal: AbortController;
  /** The session port of the current connection. */
  readonly port: SessionPort;
}

/**
 * A task creation under way (input/untagged.ts's `CreationInFlight`): `end()` ends it
 * (idempotent). `abandon(taskId)` ends it too, for a creation given up whose task is being
 * cancelled: input requests for that task are refused until the returned release is called (see
 * input/early.ts).
 */
export interface LaunchCreation {
  /** The creation settled (idempotent). */
  end(): void;
  /** The creation was given up and `taskId` is being cancelled: ends it; returns the release. */
  abandon(taskId: string): () => void;
}

/** One call being started. */
export class Launch implements StopScope, PendingCall {
  /**
   * True from a `tools/call` reply that asks for input first ([E17]) until its retry is sent: no
   * `tools/call` is outstanding meanwhile, and none is sent once the call is given up, so a call
   * given up then has no task and never gets one.
   */
  private betweenRounds = false;
  /** Whether the `tools/call` in flight asks for a task (see {@link PendingCall}). */
  asksTask = false;

  private constructor(
    private readonly parts: LaunchParts,
    readonly toolName: string,
    private readonly args: Record<string, unknown>,
    readonly call: ResolvedCallOptions,
    readonly startedAt: number,
    private readonly deadlineAt: number | undefined,
  ) {}

  /** A call of `toolName` starting now. */
  static of(parts: LaunchParts, toolName: string, args: Record<string, unknown>, call: ResolvedCallOptions): Launch {
    const startedAt = parts.engine.config.clock.now();
    const deadlineAt = call.timeoutMs === undefined ? undefined : startedAt + call.timeoutMs;
    return new Launch(parts, toolName, args, call, startedAt, deadlineAt);
  }

  /** A launch of nothing, never run: it keeps the hidden class alive (util/shapes.ts). */
  static exemplar(): Launch {
    return new Launch(undefined as never, '', {}, undefined as never, 0, undefined);
  }

  get engine(): TaskEngine {
    return this.parts.engine;
  }

  /** Aborted when the client closes. */
  private get closed(): AbortSignal {
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
      const handle = await this.negotiateAndStart();
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

  /**
   * Decides whether to ask for a task, and starts the call accordingly. Not async: when the
   * decision needs no request, the call's promise is the start's own (no extra promise per call).
   */
  private negotiateAndStart(): Promise<TaskHandle> {
    const features = this.engine.features;
    if (!features.tasks) return this.withoutTasks(features);
    // The server decides per call: opt in, and take whatever it answers.
    if (!features.toolNegotiation) return this.startTask('optional');
    const known = this.parts.catalog.known(this.toolName);
    if (known !== undefined) return this.startAs(known.taskSupport);
    return this.race(this.parts.catalog.taskSupport(this.toolName)).then((support) => this.startAs(support));
  }

  /** Starts the call per the tool's task support on 2025-11-25 (`undefined`: the tool is not listed). */
  private startAs(support: TaskSupport | undefined): Promise<TaskHandle> {
    const { call, toolName } = this;
    if (support === 'optional' || support === 'required') return this.startTask(support);
    if (call.requireTask) {
      throw new TaskNotSupportedError(
        support === undefined
          ? `Tool "${toolName}" is not listed by the server (tools/list), so it cannot be called as a task`
          : `Tool "${toolName}" does not support task mode (execution.taskSupport is ${support})`,
        { feature: 'tool', toolName },
      );
    }
    return this.callPlain();
  }

  /** No call becomes a task on this connection: a plain call, unless it cannot work. */
  private async withoutTasks(features: WireFeatures): Promise<TaskHandle> {
    const { call, toolName } = this;
    if (call.requireTask)
      throw new TaskNotSupportedError(this.engine.wire.unsupportedReason(), { feature: 'tasks', toolName });
    // [E20]: the server offers tasks only in a form this connection cannot use. A tool it lists
    // as task-only would be refused as a plain call: say so, and how to fix it, before sending.
    if (features.tasksElsewhere && features.toolNegotiation) {
      const known = this.parts.catalog.known(toolName);
      const support =
        known !== undefined ? known.taskSupport : await this.race(this.parts.catalog.taskSupport(toolName));
      if (support === 'required') {
        throw new TaskNotSupportedError(
          `Tool "${toolName}" runs only as a task (execution.taskSupport is required), and no call becomes a task on this connection. ${this.engine.wire.unsupportedReason()}`,
          { feature: 'tasks', toolName },
        );
      }
    }
    return this.callPlain();
  }

  private race<T>(promise: Promise<T>): Promise<T> {
    return raceStop(promise, this.engine.scheduler, this.call.signal, this.deadlineAt, this.closed);
  }

  /** The call's own input callbacks. */
  get callbacks(): ResolvedCallOptions['callbacks'] {
    return this.call.callbacks;
  }

  /** A signal that aborts with the call: its own signal, its deadline, or `close()`. */
  stopSignal(): { signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    const stop = (): void => controller.abort(new Error('The call was abandoned'));
    const offs = [onAbort(this.closed, stop)];
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
    return {
      name: this.toolName,
      arguments: this.args,
      task: task ? { ttl: call.ttlMs } : undefined,
      meta: call.meta,
      progressToken: call.progressToken,
    };
  }

  /**
   * Sends the call, and again with the answers each time the server asks for input first ([E17]:
   * a retry with `inputResponses` and the opaque `requestState`, unchanged). The first answer is
   * usually the last: only a request for input goes on to {@link Launch.rounds}.
   */
  private start(base: StartToolCall, timeoutMs: number, signal: AbortSignal | undefined): Promise<StartReply> {
    const engine = this.engine;
    this.betweenRounds = false;
    return engine.wire
      .startToolCall(base, engine.requestOptions(timeoutMs, signal, undefined, this.call.instrument))
      .then((reply) => (reply.kind === 'input' ? this.rounds(base, reply, timeoutMs, signal) : reply));
  }

  /** The input rounds of {@link Launch.start}, from the first answer that asks for input. */
  private async rounds(
    base: StartToolCall,
    first: StartReply,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<StartReply> {
    const engine = this.engine;
    let reply = first;
    for (let round = 0; reply.kind === 'input'; round += 1) {
      this.betweenRounds = true;
      if (round >= MAX_INPUT_ROUNDS) {
        throw new TaskProtocolError(
          `Malformed tools/call reply from server: still asking for input after ${MAX_INPUT_ROUNDS} rounds`,
          {
            method: 'tools/call',
            toolName: this.toolName,
          },
        );
      }
      // The callbacks' signal fires when the caller gives up, the deadline passes or close() runs.
      const stop = this.stopSignal();
      const inputResponses = await this.parts.inline
        .beforeTask(this.toolName, this.call.callbacks, reply.input, stop.signal)
        .finally(() => stop.release());
      // The caller gave up meanwhile (the race that awaits this has settled): ask nothing more.
      if (this.abandoned())
        throw new TaskError('The call was abandoned while its input was being answered', { toolName: this.toolName });
      if (reply.input.length > 0 && Object.keys(inputResponses).length === 0) {
        throw new TaskError(`No input callback answered what the server asked before it answers "${this.toolName}"`, {
          toolName: this.toolName,
        });
      }
      this.betweenRounds = false;
      const attempt = { ...base, inputResponses, requestState: reply.requestState };
      reply = await engine.wire.startToolCall(
        attempt,
        engine.requestOptions(timeoutMs, signal, undefined, this.call.instrument),
      );
    }
    return reply;
  }

  private async startTask(support: TaskSupport): Promise<TaskHandle> {
    const { engine, call } = this;
    this.asksTask = true;
    const creation = this.beginCreate();
    // [R24]: a task-creating request is never aborted by us, so it gets no signal. Its timeout
    // only covers a server that never answers ([A5]: with no task id known, nothing else can be done).
    const request = this.start(this.request(true), this.budget() + call.requestTimeoutMs, undefined);
    let reply: StartReply;
    try {
      reply = await this.race(request);
    } catch (error) {
      if (error instanceof Stopped) throw this.givenUp(error.stop, request, creation);
      creation.end();
      // [A1], [V3]: the server refused task mode for an optional tool: a plain call may work.
      if (engine.classify(error) === 'refused' && support === 'optional' && !call.requireTask) return this.callPlain();
      throw error;
    }
    try {
      return this.accept(reply, creation);
    } finally {
      creation.end();
    }
  }

  /**
   * The caller gave a task creation up before its answer (`stop`): if a task gets created anyway,
   * it is cancelled once its id is known, unless the caller opted out of remote cancels for this
   * kind of stop (a close always cancels it). Returns the error the call rejects with.
   */
  private givenUp(stop: StopReason, request: Promise<StartReply>, creation: LaunchCreation): TaskError {
    const { call } = this;
    const kind = stop.kind;
    const cancel = kind === 'closed' || (kind === 'abort' ? call.cancelOnAbort : call.cancelOnTimeout);
    // Given up while the callbacks answer what the server asked first ([E17]): no tools/call
    // is outstanding and none will be sent, so no task exists or will.
    const noTask = this.betweenRounds;
    this.parts.abandoned.add(
      request.then(
        (late) => {
          if (late.kind !== 'task' || !cancel) {
            // No task, or one left running on purpose: a request for it is one for an unknown task.
            creation.end();
            return;
          }
          return this.cancelOrphan(late.snapshot.task, creation);
        },
        () => creation.end(),
      ),
    );
    return stopError(this, stop, noTask ? 'no-task' : cancel ? 'pending' : 'disabled');
  }

  private async callPlain(): Promise<TaskHandle> {
    // A plain request is cancelled the normal way (notifications/cancelled), through a child
    // signal so the caller's signal keeps no listener afterwards.
    const child = childController(this.call.signal);
    this.asksTask = false;
    this.parts.untagged.add(this);
    try {
      return this.accept(await this.race(this.start(this.request(false), this.budget(), child.signal)));
    } catch (error) {
      // A request timeout under a deadline is the deadline.
      if (this.deadlineAt !== undefined && this.engine.classify(error) === 'timeout') {
        throw stopError(this, { kind: 'timeout' }, 'no-task');
      }
      throw error;
    } finally {
      this.parts.untagged.remove(this);
      child.release();
    }
  }

  /**
   * Turns the server's answer into a handle; a task (even one not asked for) is tracked.
   * `creation` is the task creation under way, if this call is one.
   */
  private accept(reply: StartReply, creation?: LaunchCreation): TaskHandle {
    if (reply.kind === 'input') throw new TypeError('unreachable: input is answered before accept()');
    if (reply.kind === 'immediate') {
      if (this.call.requireTask && !this.engine.features.toolNegotiation) {
        // The server decides on this wire, and it answered at once: the result is not lost.
        throw new TaskNotSupportedError(
          `The server answered "${this.toolName}" at once instead of running it as a task`,
          {
            feature: 'tool',
            toolName: this.toolName,
            result: reply.result,
          },
        );
      }
      return this.made(
        TaskHandleOf.create(this.toolName, { kind: 'immediate', result: reply.result, wire: this.engine.wire.kind }),
      );
    }
    const task = reply.snapshot.task;
    if (this.closed.aborted) {
      // Created after close() began: never tracked, cancelled once.
      this.parts.abandoned.add(this.cancelOrphan(task, creation));
      throw stopError(this, { kind: 'closed' }, this.engine.features.cancel ? 'unknown' : 'not-supported');
    }
    if (this.engine.get(task.taskId) !== undefined) {
      // [V4]: task ids are unique; a reused one must not merge two calls into one task.
      throw new TaskProtocolError('Malformed tools/call reply from server: the task id is already in use', {
        method: 'tools/call',
        task,
        toolName: this.toolName,
      });
    }
    const record = this.engine.track(reply.snapshot, this.toolName, {
      startedAt: this.startedAt,
      requestTimeoutMs: this.call.requestTimeoutMs,
      instrument: this.call.instrument,
    });
    const handle = this.made(
      this.parts.live.adopt(record, this.call.callbacks, this.call.progressToken, reply.immediateResponse),
    );
    armDeadlineAndSignal(this, record);
    return handle;
  }

  /** Tells the call's instrumentation its handle, before any later event of it. */
  private made(handle: TaskHandle): TaskHandle {
    this.call.instrument?.handle?.(handle);
    return handle;
  }

  /**
   * Sends one `tasks/cancel` for a task nobody tracks; settles when it is answered or failed.
   * With `creation` (the given-up creation that made the task), it also ends that creation. While
   * the cancel is under way, input requests for the task (held ones, and new ones) are refused as
   * for a task that ended locally, never shown to a callback: the caller gave up on this task. A
   * server that cannot cancel leaves the task running: its requests are then ones for an unknown
   * task ([V7], docs/input.md#routing).
   */
  private cancelOrphan(task: Task, creation?: LaunchCreation): Promise<void> {
    const engine = this.engine;
    if (!engine.features.cancel) {
      creation?.end();
      return Promise.resolve();
    }
    const release = creation?.abandon(task.taskId);
    return engine.wire
      .cancelTask(task.taskId, engine.requestOptions(this.call.requestTimeoutMs, undefined, true, this.call.instrument))
      .then(
        () => undefined,
        (error: unknown) => engine.report(error, undefined),
      )
      .finally(release);
  }
}

keepShape(Launch.exemplar());
