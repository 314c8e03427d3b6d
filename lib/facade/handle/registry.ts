/**
 * The live tasks of a client: each tracked record with its handle, per-call input callbacks and
 * progress route, and the translation of engine happenings into the typed events of the client
 * and of each handle.
 */
import type {
  InputCallbacks,
  ProgressCallback,
  TaskClientEvents,
  TaskHandle,
  TaskHandleEvents,
  TaskMetrics,
  TaskProgress,
} from '../../api/index.js';
import { randomHex } from '../../util/random.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskError } from '../../errors.js';
import { type SafeEmitter, emitSettled, metricsOf } from '../events/emitter.js';
import { handleBackend, type BackendParts } from './backend.js';
import { TaskHandleOf, eventsOf, type CallState, type HandleBackend } from './handle.js';
import { creationsOn } from '../input/early.js';
import { StopUnderWay } from '../input/abandon.js';
import type { InputOwner } from '../input/router-parts.js';
import type { SessionPort } from '../../port/port.js';
import type { Task } from '../../types.js';
import { PROGRESS_TOKEN_PREFIX } from '../../wire/wire.js';
import { TaskMemory } from '../../util/task-memory.js';

/** Where a progress token's notifications go. */
interface ProgressRoute {
  readonly callback: ProgressCallback;
  readonly toolName: string;
  live: TaskHandleOf | undefined;
}

/** A tracked task's call state, made now if it had none. */
function stateOf(handle: TaskHandleOf): CallState {
  return (handle.callState ??= { callbacks: undefined, progressToken: undefined, abort: undefined, keepInput: false });
}

/** The parts of its TaskClient that the live tasks use (see facade/parts.ts). */
export interface LiveParts extends BackendParts {
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** The session port of the current connection: a task tracked there wakes input that overtook its creation. */
  readonly port: SessionPort;
  /** Judges again the untagged input requests waiting (a task is now tracked). */
  readonly untagged: { changed(): void };
}

/** Live handles, progress routes and event emission for one client. */
export class LiveTasks {
  /** Tracked tasks by id: the handle carries the record and any per-call state (no entry object per task). */
  private readonly live = new Map<string, TaskHandleOf>();
  private readonly progress = new Map<string, ProgressRoute>();
  private progressCounter = 0;
  /** Tasks whose questions came tagged with their id (their server tags them). */
  private readonly tagging = new WeakSet<TaskHandleOf>();
  /**
   * Tasks this client stopped tracking, with the handle of each one `detach()` left running: such
   * a task may still run and ask (servers keep running work after a cancel, D10), and a question
   * of it reaches no callback that never knew it (see inputOwner and ended()).
   */
  private readonly gone = new TaskMemory<TaskHandleOf | undefined>(() => this.now());
  /** The stop or cancel each task began last: settles once it is over (see stopping()). */
  private readonly stops = new WeakMap<TaskHandleOf, Promise<unknown>>();
  /** Tasks tracked through `resume()`: another client (or an earlier one) created them. */
  private readonly resumed = new WeakSet<TaskHandleOf>();
  /** Tokens are unique per client, so several TaskClients can share one SDK client. */
  private readonly progressPrefix = `${PROGRESS_TOKEN_PREFIX}${randomHex(4)}/`;
  private readonly emitter: SafeEmitter<TaskClientEvents>;
  private readonly backend: HandleBackend;

  constructor(private readonly parts: LiveParts) {
    this.emitter = parts.emitter;
    this.backend = handleBackend(parts);
  }

  private now(): number {
    return this.parts.now();
  }

  /** A task is now tracked: input requests that overtook its creation may go on. */
  private tracked(taskId: string): void {
    creationsOn(this.parts.port).tracked(taskId);
    this.parts.untagged.changed();
  }

  /** Number of tracked tasks. */
  get size(): number {
    return this.live.size;
  }

  /** The handle of every tracked task, oldest first. */
  handles(): TaskHandle[] {
    return [...this.live.values()] as TaskHandle[];
  }

  /** The record of every tracked task. */
  *records(): IterableIterator<TaskView> {
    for (const handle of this.live.values()) {
      const record = handle.tracked;
      if (record !== undefined) yield record;
    }
  }

  /** A question tagged with the tracked task `taskId` came: its server tags them. */
  markTagged(taskId: string): void {
    const live = this.live.get(taskId);
    if (live !== undefined) this.tagging.add(live);
  }

  /** True when a question tagged with the tracked task `taskId` came. */
  tags(taskId: string): boolean {
    const live = this.live.get(taskId);
    return live !== undefined && this.tagging.has(live);
  }

  /** The handle of a tracked task, if any. */
  handleOf(taskId: string): TaskHandle | undefined {
    return this.live.get(taskId) as TaskHandle | undefined;
  }

  /** Routes progress for a new token to `callback` ([R35]); returns the token to send. */
  openProgress(callback: ProgressCallback, toolName: string): string {
    this.progressCounter += 1;
    const token = `${this.progressPrefix}${this.progressCounter}`;
    this.progress.set(token, { callback, toolName, live: undefined });
    return token;
  }

  /** Stops routing `token`. */
  closeProgress(token: string | undefined): void {
    if (token !== undefined) this.progress.delete(token);
  }

  /**
   * Wraps a newly tracked record in a handle and registers it, then announces it: `created` once
   * the handle is in {@link LiveTasks.handles} (and counted), then `status` for its first snapshot
   * (the one an iterator yields first; a resumed task's placeholder is none), then `inputRequired`
   * when it waits for input. A task settled on arrival (an early terminal notification) is listed
   * while `created` and `status` fire, then settles. `resumed`: the task comes from `resume()`, not
   * from a call of this client (see {@link LiveTasks.created}).
   */
  adopt(
    record: TaskView,
    callbacks: InputCallbacks | undefined,
    progressToken: string | undefined,
    immediateResponse: string | undefined,
    resumed = false,
  ): TaskHandle {
    const handle = TaskHandleOf.create(
      record.toolName,
      { kind: 'task', record, backend: this.backend, wire: this.parts.engine.wire.kind },
      immediateResponse,
    );
    const live = handle as TaskHandleOf;
    if (resumed) this.resumed.add(live);
    const settledOnArrival = record.settlement !== undefined;
    if (!settledOnArrival && (callbacks !== undefined || progressToken !== undefined)) {
      live.callState = { callbacks, progressToken, abort: undefined, keepInput: false };
    }
    // Tracked before anything is announced: a `created` listener finds it in handles() and active.
    this.live.set(record.taskId, live);
    if (!settledOnArrival) {
      this.tracked(record.taskId);
      const route = progressToken === undefined ? undefined : this.progress.get(progressToken);
      if (route !== undefined) route.live = live;
    }
    this.announce(record, live);
    if (settledOnArrival) {
      // Settled on arrival: nothing to track once announced.
      if (this.live.get(record.taskId) === live) this.live.delete(record.taskId);
      emitSettled([this.emitter], record, this.now());
      this.closeProgress(progressToken);
    }
    return handle;
  }

  /** The events of a newly adopted task; a listener that stops the task meanwhile ends them. */
  private announce(record: TaskView, live: TaskHandleOf): void {
    if (!this.emitter.active) return;
    const settledOnArrival = record.settlement !== undefined;
    this.emitter.emit('created', metricsOf(record, this.now()));
    // A `created` listener may have stopped the task (detach(), close()): its end was announced.
    const listed = (): boolean =>
      this.live.get(record.taskId) === live && (settledOnArrival || record.settlement === undefined);
    if (record.provisional || !listed()) return;
    const task = record.task;
    this.emitter.emit('status', metricsOf(record, this.now()), task);
    if (task.status === 'input_required' && listed())
      this.emitter.emit('inputRequired', metricsOf(record, this.now()), task);
  }

  private emitters(record: TaskView): Array<SafeEmitter<TaskHandleEvents>> {
    return this.emittersOf(this.live.get(record.taskId));
  }

  private emittersOf(handle: TaskHandleOf | undefined): Array<SafeEmitter<TaskHandleEvents>> {
    const handleEvents = handle === undefined ? undefined : eventsOf(handle as TaskHandle);
    const all = [this.emitter as unknown as SafeEmitter<TaskHandleEvents>];
    if (handleEvents !== undefined) all.push(handleEvents);
    return all;
  }

  /** True when someone listens to the client's events or to `handle`'s (nothing to build otherwise). */
  private heard(handle: TaskHandleOf): boolean {
    return this.emitter.active || eventsOf(handle as TaskHandle)?.active === true;
  }

  /** A record accepted a changed snapshot. */
  status(record: TaskView, previous: Task): void {
    // Snapshots applied before adoption (early notifications) are announced by `created`.
    const handle = this.live.get(record.taskId);
    if (handle?.tracked !== record || !this.heard(handle)) return;
    const emitters = this.emittersOf(handle);
    if (!emitters.some((emitter) => emitter.has('status') || emitter.has('inputRequired'))) return;
    const metrics = metricsOf(record, this.now());
    const task = record.task;
    const enteredInput = task.status === 'input_required' && previous.status !== 'input_required';
    for (const emitter of emitters) {
      emitter.emit('status', metrics, task);
      if (enteredInput) emitter.emit('inputRequired', metrics, task);
    }
  }

  /** A record settled: forget it, release its callbacks' signal and progress route, emit. */
  settled(record: TaskView): void {
    const live = this.live.get(record.taskId);
    // A record settled before it was adopted (an early terminal notification) is announced by adopt().
    if (live?.tracked !== record) return;
    this.live.delete(record.taskId);
    const state = live.callState;
    // Left running on purpose by a stop that sends no cancel (`cancelOnTimeout`/`cancelOnAbort`
    // off): not ended, its questions are those of a task nobody tracks (the client's callback).
    const settlement = record.settlement;
    const error = settlement?.ok === false ? (settlement.error as { remoteCancel?: unknown }) : undefined;
    if (error?.remoteCancel !== 'disabled')
      this.gone.add(record.taskId, record.task.ttl, state?.keepInput === true ? live : undefined);
    if (state !== undefined) {
      if (!state.keepInput) state.abort?.abort(new Error('The task ended'));
      this.closeProgress(state.progressToken);
    }
    if (this.heard(live)) emitSettled(this.emittersOf(live), record, this.now());
  }

  /**
   * A stop or a cancel of a tracked task began: the answers its callbacks are still giving are no
   * longer wanted, now rather than once the last look and the `tasks/cancel` are over (servers keep
   * running work after a cancel, D10: an answer sent meanwhile would be acted on). `detach()`
   * (`keepInput`) begins no stop: it settles at once.
   */
  stopping(record: TaskView, over: Promise<unknown>): void {
    const live = this.live.get(record.taskId);
    if (live?.tracked !== record) return;
    this.stops.set(live, over);
    const state = live.callState;
    const abort = state?.abort;
    if (abort === undefined) return;
    // Its questions get an aborted signal until the stop is over (see inputOwner), and a new one
    // after a cancel that failed.
    state!.abort = undefined;
    abort.abort(new StopUnderWay(over));
  }

  /** A running task nears the end of its ttl. */
  expiring(record: TaskView, expiresAt: number): void {
    const metrics = metricsOf(record, this.now());
    const expiry = { expiresAt, remainingMs: expiresAt - this.now() };
    for (const emitter of this.emitters(record)) emitter.emit('expiring', metrics, expiry);
  }

  /** The metrics of a tracked task now, if `taskId` names one. */
  metricsOf(taskId: string | undefined): TaskMetrics | undefined {
    const record = taskId === undefined ? undefined : this.live.get(taskId)?.tracked;
    return record === undefined ? undefined : metricsOf(record, this.now());
  }

  /**
   * Delivers progress for `token`; false when the token is not ours. One of ours whose route is
   * closed (its task settled: a server may send progress after the end) is consumed and dropped.
   */
  deliverProgress(token: string, progress: TaskProgress): boolean {
    const route = this.progress.get(token);
    if (route === undefined) return token.startsWith(this.progressPrefix);
    const live = route.live;
    try {
      route.callback(progress, {
        taskId: live?.taskId,
        handle: live as TaskHandle | undefined,
        toolName: route.toolName,
      });
    } catch (error) {
      const record = live?.tracked;
      const failure = new TaskError('The onProgress callback threw', {
        toolName: route.toolName,
        taskId: live?.taskId,
        cause: error,
      });
      this.emitter.emit(
        'error',
        failure,
        record === undefined || record.settlement !== undefined ? undefined : metricsOf(record, this.now()),
      );
    }
    const record = live?.tracked;
    if (record !== undefined && this.emitters(record).some((emitter) => emitter.has('progress'))) {
      const metrics = metricsOf(record, this.now());
      for (const emitter of this.emitters(record)) emitter.emit('progress', metrics, progress);
    }
    return true;
  }

  /**
   * What the input router needs about a tracked task, or one `detach()` left running (its questions
   * go to its call's callbacks, as while it was tracked, until its ttl has passed).
   */
  inputOwner(taskId: string): InputOwner | undefined {
    const live = this.live.get(taskId) ?? this.gone.get(taskId)?.value;
    if (live === undefined) return undefined;
    const state = stateOf(live);
    // Aborted while a stop or a cancel is under way (see stopping()): the task's questions are
    // refused. A cancel that failed leaves the task running, and its questions wanted again.
    const over = live.tracked?.ending === true ? this.stops.get(live) : undefined;
    const signal =
      over === undefined ? (state.abort ??= new AbortController()).signal : AbortSignal.abort(new StopUnderWay(over));
    return { handle: live as TaskHandle, callbacks: state.callbacks, signal };
  }

  /**
   * True for a task this client stopped tracking other than by `detach()` (it ended, or a stop ended
   * it), until its ttl has passed: its questions reach no callback.
   */
  ended(taskId: string): boolean {
    const gone = this.live.has(taskId) ? undefined : this.gone.get(taskId);
    return gone !== undefined && gone.value === undefined;
  }

  /**
   * True when the tracked task `taskId` was created by a call on this client (not taken up by
   * `resume()`, whose task another client may own): only such a task is this client's to end.
   */
  created(taskId: string): boolean {
    const live = this.live.get(taskId);
    return live !== undefined && !this.resumed.has(live);
  }

  /** Marks a task whose pending input callbacks must not be aborted when it settles (detach). */
  keepInput(record: TaskView): void {
    const live = this.live.get(record.taskId);
    if (live?.tracked === record) stateOf(live).keepInput = true;
  }

  /** Forgets every progress route (on close). */
  clear(): void {
    this.progress.clear();
  }
}
