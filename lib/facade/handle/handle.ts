/**
 * The class behind every `TaskHandle`: the caller's view of one tool call run as a task (or
 * answered at once). A thin facade: the promise and iterator adapters over the engine's callback
 * core, and the stop operations delegated to the client. Internal: users name the public type
 * {@link TaskHandle} (lib/api/handle.ts), where its members are documented.
 */
import type {
  HandleKind,
  InputCallbacks,
  ResultOptions,
  TaskHandle,
  TaskHandleEvents,
  TaskMetrics,
  TaskReference,
  UpdatesOptions,
  WireKind,
} from '../../api/index.js';
import { TaskOptionError, type TaskError } from '../../errors.js';
import { SafeEmitter } from '../events/emitter.js';
import { checkOptionsObject, checkSignal } from '../../util/check.js';
import { failedError } from '../../engine/failure.js';
import type { TaskView } from '../../engine/task-view.js';
import { raceAbort } from '../../util/abort.js';
import { keepShape } from '../../util/shapes.js';
import { SnapshotIterator, abortError } from '../../util/snapshot-iterator.js';
import type { CallToolResult, Task } from '../../types.js';

/** The client operations a handle delegates to (not for direct use). */
export interface HandleBackend {
  /** Starts observing a resumed task. */
  activate(record: TaskView): void;
  cancel(record: TaskView): Promise<Task>;
  detach(record: TaskView): TaskReference;
  dispose(record: TaskView): Promise<void>;
  reference(record: TaskView): TaskReference;
  /** The record's metrics now. */
  metrics(record: TaskView): TaskMetrics;
  /** Reports a throwing listener. */
  report(error: TaskError): void;
}

/**
 * A tracked call's state beyond its record: made only for a call with input callbacks or a
 * progress route, or once input is routed to it (most tasks carry none, and no object for it).
 */
export interface CallState {
  readonly callbacks: InputCallbacks | undefined;
  readonly progressToken: string | undefined;
  /** Aborted when the task settles (input callbacks' `signal`); created on first use. */
  abort: AbortController | undefined;
  /** Set by `detach()`: callbacks still answering are not aborted (the remote task runs on). */
  keepInput: boolean;
}

type Source =
  | { readonly kind: 'task'; readonly record: TaskView; readonly backend: HandleBackend; readonly wire: WireKind }
  | { readonly kind: 'immediate'; readonly result: CallToolResult; readonly wire: WireKind };

/** What an `immediate` handle holds in place of a record. */
interface Immediate {
  readonly toolName: string;
  readonly result: CallToolResult;
  readonly immediateResponse: string | undefined;
}

/**
 * What few handles need, in one object made on first need: an immediate handle's answer, a task's
 * immediate response, the emitter of a handle someone listens to, and the per-call state.
 */
interface Rare {
  /** Kind `task`: the server's immediate response, if any; kind `immediate`: what the server answered. */
  detail: string | Immediate | undefined;
  emitter: SafeEmitter<TaskHandleEvents> | undefined;
  callState: CallState | undefined;
}

/**
 * The runtime class of every {@link TaskHandle}: a tool call in progress or done, of kind `K`.
 * Made by `TaskClient` only and not exported from the public entry point; its members are
 * documented on {@link TaskHandle}.
 *
 * A handle is kept small (every in-flight task has one): what the record already knows (task id,
 * tool name) is read from it, the kind follows from whether there is a record, and what few
 * handles need lives in an object made on first need.
 */
export class TaskHandleOf<K extends HandleKind = HandleKind> {
  /** {@inheritDoc TaskHandle.wire} */
  readonly wire: WireKind;
  /** The tracked task (kind `task`), with the client operations it delegates to. */
  private readonly record: TaskView | undefined;
  private readonly backend: HandleBackend | undefined;
  private memo: Promise<CallToolResult> | undefined = undefined;
  private rare: Rare | undefined;

  private constructor(toolName: string, source: Source, immediateResponse: string | undefined) {
    this.wire = source.wire;
    if (source.kind === 'task') {
      this.record = source.record;
      this.backend = source.backend;
      this.rare =
        immediateResponse === undefined
          ? undefined
          : { detail: immediateResponse, emitter: undefined, callState: undefined };
    } else {
      this.record = undefined;
      this.backend = undefined;
      this.rare = {
        detail: { toolName, result: source.result, immediateResponse },
        emitter: undefined,
        callState: undefined,
      };
    }
  }

  private more(): Rare {
    return (this.rare ??= { detail: undefined, emitter: undefined, callState: undefined });
  }

  private get detail(): string | Immediate | undefined {
    return this.rare?.detail;
  }

  /** @internal The client's per-call state of this tracked task, if it needs any (kept here: no registry entry per task). */
  get callState(): CallState | undefined {
    return this.rare?.callState;
  }
  set callState(state: CallState | undefined) {
    if (state !== undefined || this.rare !== undefined) this.more().callState = state;
  }

  /** @internal Made by `TaskClient` (`callToolAsTask`, `resume`) only. */
  static create(toolName: string, source: Source, immediateResponse?: string): TaskHandle {
    // Returned as the class of one kind or the other, so the compiler checks that it has every
    // member of the public `TaskHandle` of that kind.
    return new TaskHandleOf(toolName, source, immediateResponse) as TaskHandleOf<'task'> | TaskHandleOf<'immediate'>;
  }

  /** {@inheritDoc TaskHandle.kind} */
  get kind(): K {
    return (this.record === undefined ? 'immediate' : 'task') as K;
  }

  /** {@inheritDoc TaskHandle.taskId} */
  get taskId(): K extends 'task' ? string : undefined {
    return this.record?.taskId as K extends 'task' ? string : undefined;
  }

  /** {@inheritDoc TaskHandle.toolName} */
  get toolName(): string {
    const record = this.record;
    return record !== undefined ? record.toolName : (this.detail as Immediate).toolName;
  }

  /** {@inheritDoc TaskHandle.immediateResponse} */
  get immediateResponse(): string | undefined {
    const detail = this.detail;
    return typeof detail === 'object' ? detail.immediateResponse : detail;
  }

  /** {@inheritDoc TaskHandle.task} */
  get task(): Task | undefined {
    const record = this.record;
    return record !== undefined && !record.provisional ? record.task : undefined;
  }

  /** Starts observing (a resumed task is read only once someone observes it). */
  private observed(): void {
    if (this.record !== undefined) this.backend!.activate(this.record);
  }

  /** @internal The tracked task (kind `task`). */
  get tracked(): TaskView | undefined {
    return this.record;
  }

  /** @internal This handle's emitter, if anyone ever listened. */
  get events(): SafeEmitter<TaskHandleEvents> | undefined {
    return this.rare?.emitter;
  }

  /** {@inheritDoc TaskHandle.on} */
  on<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void {
    return this.listen()?.on(event, listener) ?? (() => {});
  }

  /** {@inheritDoc TaskHandle.once} */
  once<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void {
    return this.listen()?.once(event, listener) ?? (() => {});
  }

  /** The emitter, made on first use (listening also starts observing); none for an immediate handle. */
  private listen(): SafeEmitter<TaskHandleEvents> | undefined {
    const backend = this.backend;
    if (backend === undefined) return undefined;
    const rare = this.more();
    rare.emitter ??= new SafeEmitter<TaskHandleEvents>((error) => backend.report(error));
    this.observed();
    return rare.emitter;
  }

  /** {@inheritDoc TaskHandle.off} */
  off<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): void {
    this.rare?.emitter?.off(event, listener);
  }

  /** {@inheritDoc TaskHandle.metrics} */
  get metrics(): TaskMetrics | undefined {
    return this.record === undefined ? undefined : this.backend!.metrics(this.record);
  }

  /** {@inheritDoc TaskHandle.settled} */
  get settled(): boolean {
    return this.record === undefined || this.record.settlement !== undefined;
  }

  /** {@inheritDoc TaskHandle.result} */
  result(options: ResultOptions = {}): Promise<CallToolResult> {
    // Checked before anything happens: an invalid call neither observes the task nor creates the
    // shared result promise (which nobody would then handle).
    let checked: AbortSignal | undefined;
    try {
      checkOptionsObject('options', options);
      checked = checkSignal('signal', options.signal, this.taskId);
    } catch (error) {
      return Promise.reject(error);
    }
    const signal = checked;
    // A wait already over observes nothing: a resumed handle sends no read for it.
    if (signal?.aborted === true) return Promise.reject(abortError(signal, this.taskId));
    this.observed();
    this.memo ??= this.settle();
    if (signal === undefined) return this.memo;
    return raceAbort(this.memo, signal, () => abortError(signal, this.taskId));
  }

  private settle(): Promise<CallToolResult> {
    const record = this.record;
    if (record === undefined) {
      const result = (this.detail as Immediate).result;
      if (result.isError !== true) return Promise.resolve(result);
      return Promise.reject(failedError(this.toolName, undefined, { result }));
    }
    return record.resultPromise();
  }

  /** {@inheritDoc TaskHandle.updates} */
  updates(options: UpdatesOptions = {}): AsyncIterableIterator<Task, undefined> {
    // Checked before anything is subscribed: a bad option leaves no observer behind.
    checkOptionsObject('options', options);
    const signal = checkSignal('signal', options.signal, this.taskId);
    const bufferSize = options.bufferSize;
    if (bufferSize !== undefined && !(Number.isInteger(bufferSize) && bufferSize >= 1)) {
      throw new TaskOptionError(`Option "bufferSize" must be an integer >= 1, got ${String(bufferSize)}`, {
        option: 'bufferSize',
        taskId: this.taskId,
      });
    }
    const record = this.record;
    if (record === undefined) {
      return new SnapshotIterator(
        (observer) => {
          observer.end();
          return () => {};
        },
        { signal },
      );
    }
    // An iterator over before it began observes nothing: a resumed handle sends no read for it.
    if (signal?.aborted !== true) this.observed();
    return new SnapshotIterator((observer) => record.observe(observer), {
      signal,
      bufferSize,
      taskId: this.taskId,
    });
  }

  /** Same as {@link TaskHandle.updates} without options, so `for await (const t of handle)` works. */
  [Symbol.asyncIterator](): AsyncIterator<Task> {
    return this.updates();
  }

  /** {@inheritDoc TaskHandle.cancel} */
  async cancel(): Promise<Task | undefined> {
    return this.record === undefined ? undefined : this.backend!.cancel(this.record);
  }

  /** {@inheritDoc TaskHandle.detach} */
  detach(): TaskReference | undefined {
    return this.record === undefined ? undefined : this.backend!.detach(this.record);
  }

  /** {@inheritDoc TaskHandle.toJSON} */
  toJSON(): TaskReference | undefined {
    return this.record === undefined ? undefined : this.backend!.reference(this.record);
  }

  /** {@inheritDoc TaskHandle.dispose} */
  async dispose(): Promise<void> {
    if (this.record !== undefined) await this.backend!.dispose(this.record);
  }

  /** `await using handle = await tasks.callToolAsTask(...)` support; see {@link TaskHandle.dispose}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts): a handle of an empty result.
keepShape(TaskHandleOf.create('', { kind: 'immediate', result: { content: [] }, wire: '2025-11-25' }));

/** The emitter of a handle, if anyone ever listened (for the client's own event fan-out). */
export function eventsOf(handle: TaskHandle): SafeEmitter<TaskHandleEvents> | undefined {
  return (handle as TaskHandleOf).events;
}
