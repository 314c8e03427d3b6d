/**
 * The task store of the scripted extension server: task records, their scripted progress and the
 * rules SEP-2663 puts on them (EXT = `ext-tasks/specification/draft/tasks.md`):
 *
 * - a task exists before its `CreateTaskResult` is sent (durable creation, EXT "Task Creation");
 * - `inputRequests` keys are unique over the task's life and never reused after an answer (EXT
 *   "Task Update Requests"); answers to unknown or already answered keys are ignored, partial
 *   answers keep the task `input_required`;
 * - cancellation is only a request: the store can honour it at once, on the next poll, ignore it,
 *   or let the work finish `completed` instead (EXT "Task Cancellation");
 * - after `createdAt + ttlMs` the server may fail or delete the task (EXT "Task Polling").
 *
 * Time comes from the injected `now()`; nothing here uses timers, so tests stay deterministic.
 */
import {
  copyJson,
  errorObject,
  isTerminal,
  rpcError,
  type DetailedTask,
  type InputRequest,
  type InputRequests,
  type InputResponses,
  type Json,
  type RpcFailure,
  type TaskStatus,
  ErrorCode,
} from './wire.js';

/** How a task reacts to `tasks/cancel` (always acknowledged). */
export type CancelMode =
  /** `cancelled` before the acknowledgement is sent. */
  | 'cancel'
  /** acknowledged now, `cancelled` at the next poll (or `tick`). */
  | 'deferred'
  /** acknowledged, no effect: the task keeps following its script. */
  | 'ignore'
  /** acknowledged, and the work "finishes first": `completed` at the next poll. */
  | 'complete'
  /** acknowledged, and the work "fails first": `failed` with a JSON-RPC error at the next poll. */
  | 'fail';

/** What one scripted step changes; `inputRequests` implies `input_required`, `result` `completed`, `error` `failed`. */
export interface TaskStep {
  readonly status?: TaskStatus;
  readonly statusMessage?: string;
  readonly inputRequests?: InputRequests;
  /** The final tool result; a function sees the answers collected so far. */
  readonly result?: Json | ((context: StepContext) => Json);
  readonly error?: RpcFailure;
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number;
}
/** What a step's `result` function can read. */
export interface StepContext {
  readonly taskId: string;
  readonly args: Json;
  /** Every accepted answer so far, by input key. */
  readonly answers: Readonly<Record<string, Json>>;
}

/** The life of one task, as a tool hands it to the store. */
export interface TaskScript {
  readonly statusMessage?: string;
  /** @default the store's `ttlMs` */
  readonly ttlMs?: number | null;
  /** A fixed value, or a schedule indexed by the number of polls so far (last value sticks). */
  readonly pollIntervalMs?: number | readonly number[];
  /** Applied one at a time; a step never applies while input is outstanding. */
  readonly steps?: readonly TaskStep[];
  /** `poll`: one step per `tasks/get`; `{everyMs}`: one step per elapsed period; `manual`: only the API. @default 'poll' */
  readonly advance?: 'poll' | 'manual' | { readonly everyMs: number };
  /** @default the store's `cancel` */
  readonly cancel?: CancelMode;
}

/** Store-wide defaults. */
export interface TaskStoreOptions {
  readonly now: () => number;
  /** Timestamps without milliseconds, as some servers send them. @default false */
  readonly wholeSeconds?: boolean;
  /** @default 60000 */
  readonly ttlMs?: number | null;
  /** @default 1000 */
  readonly pollIntervalMs?: number | readonly number[];
  /** @default 'cancel' */
  readonly cancel?: CancelMode;
  /** TTL backstop: keep the task, mark it `failed`, or delete it once `createdAt + ttlMs` passed. @default 'keep' */
  readonly expiry?: 'keep' | 'fail' | 'delete';
  /** Add `resultType: "complete"` to a completed `result` that lacks one. @default true */
  readonly stampInnerResultType?: boolean;
  /** @default random UUIDs (task ids are bearer-like and must be unguessable) */
  readonly taskIds?: () => string;
}

/** A field-level change of a task (the programmatic API); `lastUpdatedAt` moves to `now()`. */
export interface TaskPatch {
  readonly status?: TaskStatus;
  readonly statusMessage?: string | null;
  /** New input requests (added to the outstanding ones); implies `input_required`. */
  readonly inputRequests?: InputRequests;
  readonly result?: Json;
  readonly error?: RpcFailure;
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number;
}

/** What the store knows about a task beyond its wire snapshot, for assertions. */
export interface TaskRecordView {
  readonly snapshot: DetailedTask;
  readonly toolName: string | undefined;
  readonly args: Json;
  readonly polls: number;
  readonly step: number;
  readonly cancelRequested: boolean;
  /** Every `inputResponses` map received by `tasks/update`, in order, as received. */
  readonly updates: readonly InputResponses[];
  /** Accepted answers by key (each key answered once). */
  readonly answers: Readonly<Record<string, Json>>;
  /** Keys ever issued (outstanding or answered). */
  readonly issuedKeys: readonly string[];
}

interface TaskRecord {
  readonly taskId: string;
  readonly toolName: string | undefined;
  readonly args: Json;
  readonly script: TaskScript;
  readonly createdAt: number;
  status: TaskStatus;
  statusMessage: string | undefined;
  lastUpdatedAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  readonly outstanding: Map<string, InputRequest>;
  readonly issued: Set<string>;
  readonly answers: Map<string, Json>;
  readonly updates: InputResponses[];
  result: Json | undefined;
  error: RpcFailure | undefined;
  step: number;
  polls: number;
  lastAdvanceAt: number;
  cancelRequested: boolean;
}

/** Tasks by id, their scripted progress, input bookkeeping, cancellation and TTL. */
export class ExtTaskStore {
  private readonly records = new Map<string, TaskRecord>();
  private readonly listeners = new Set<(task: DetailedTask) => void>();

  constructor(private readonly options: TaskStoreOptions) {}

  /** Calls `listener` with the new snapshot after every observable change. Returns an unsubscribe. */
  onChange(listener: (task: DetailedTask) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Creates a `working` task from `script`; it is readable at once (durable creation). */
  create(script: TaskScript = {}, origin: { toolName?: string; args?: Json } = {}): DetailedTask {
    const at = this.options.now();
    const record: TaskRecord = {
      taskId: this.options.taskIds?.() ?? crypto.randomUUID(),
      toolName: origin.toolName,
      args: origin.args ?? {},
      script,
      createdAt: at,
      status: 'working',
      statusMessage: script.statusMessage,
      lastUpdatedAt: at,
      ttlMs: script.ttlMs !== undefined ? script.ttlMs : this.options.ttlMs !== undefined ? this.options.ttlMs : 60_000,
      pollIntervalMs: undefined,
      outstanding: new Map(),
      issued: new Set(),
      answers: new Map(),
      updates: [],
      result: undefined,
      error: undefined,
      step: 0,
      polls: 0,
      lastAdvanceAt: at,
      cancelRequested: false,
    };
    if (this.records.has(record.taskId)) throw new Error(`ExtTaskStore: duplicate task id ${record.taskId}`);
    record.pollIntervalMs = this.scheduledInterval(record);
    this.records.set(record.taskId, record);
    return this.snapshot(record);
  }

  /** Ids of every stored task, oldest first. */
  ids(): string[] {
    return [...this.records.keys()];
  }
  /** True while the task is stored (not deleted or expired-and-deleted). */
  has(taskId: string): boolean {
    return this.records.has(taskId);
  }
  /** The current snapshot, without side effects; -32602 for an unknown id. */
  detailed(taskId: string): DetailedTask {
    return this.snapshot(this.require(taskId));
  }
  /** Snapshot plus bookkeeping (answers, updates, polls) for assertions. */
  inspect(taskId: string): TaskRecordView {
    const r = this.require(taskId);
    return {
      snapshot: this.snapshot(r),
      toolName: r.toolName,
      args: copyJson(r.args),
      polls: r.polls,
      step: r.step,
      cancelRequested: r.cancelRequested,
      updates: copyJson(r.updates),
      answers: Object.fromEntries(copyJson([...r.answers])),
      issuedKeys: [...r.issued],
    };
  }

  /**
   * What `tasks/get` does: applies the TTL backstop, then any pending scripted progress (one step
   * per poll in `poll` mode), counts the poll and returns the snapshot.
   */
  poll(taskId: string): DetailedTask {
    const r = this.live(taskId);
    r.polls += 1;
    this.progress(r, 'poll');
    const schedule = this.scheduledInterval(r);
    if (schedule !== r.pollIntervalMs && Array.isArray(r.script.pollIntervalMs ?? this.options.pollIntervalMs))
      r.pollIntervalMs = schedule;
    return this.snapshot(r);
  }

  /** Re-evaluates time-driven progress and the TTL of every task (call after moving a manual clock). */
  tick(): void {
    for (const taskId of [...this.records.keys()]) {
      const r = this.records.get(taskId);
      if (r === undefined || this.expire(r)) continue;
      this.progress(r, 'tick');
    }
  }

  /** Changes a task directly (the scripting API); terminal tasks may still be patched on purpose. */
  update(taskId: string, patch: TaskPatch): DetailedTask {
    const r = this.require(taskId);
    if (patch.inputRequests !== undefined) this.issue(r, patch.inputRequests);
    if (patch.statusMessage !== undefined) r.statusMessage = patch.statusMessage ?? undefined;
    if (patch.ttlMs !== undefined) r.ttlMs = patch.ttlMs;
    if (patch.pollIntervalMs !== undefined) r.pollIntervalMs = patch.pollIntervalMs;
    if (patch.result !== undefined) r.result = patch.result;
    if (patch.error !== undefined) r.error = patch.error;
    const status =
      patch.status ??
      (patch.result !== undefined
        ? 'completed'
        : patch.error !== undefined
          ? 'failed'
          : patch.inputRequests !== undefined
            ? 'input_required'
            : undefined);
    if (status !== undefined) r.status = status;
    // Outstanding requests exist only while input_required; leaving it supersedes them.
    if (r.status !== 'input_required') r.outstanding.clear();
    return this.changed(r);
  }
  /** Asks for input: adds `requests` (fresh keys only) and moves the task to `input_required`. */
  requestInput(taskId: string, requests: InputRequests, statusMessage?: string): DetailedTask {
    return this.update(taskId, { inputRequests: requests, ...(statusMessage === undefined ? {} : { statusMessage }) });
  }
  /** Ends the task `completed` with `result` (a `CallToolResult`, `isError: true` included). */
  complete(taskId: string, result: Json, statusMessage?: string): DetailedTask {
    return this.update(taskId, { result, ...(statusMessage === undefined ? {} : { statusMessage }) });
  }
  /** Ends the task `failed` with a JSON-RPC error (only for protocol-level errors, EXT "Task Status"). */
  fail(taskId: string, error: RpcFailure, statusMessage?: string): DetailedTask {
    return this.update(taskId, { error, statusMessage: statusMessage ?? error.message });
  }
  /** Ends the task `cancelled` (server side). */
  cancel(taskId: string, statusMessage?: string): DetailedTask {
    return this.update(taskId, { status: 'cancelled', ...(statusMessage === undefined ? {} : { statusMessage }) });
  }
  /** Forgets a task: later requests for it get -32602. */
  delete(taskId: string): void {
    this.records.delete(taskId);
  }

  /**
   * What `tasks/update` does: records the map as received, accepts answers to outstanding keys only
   * (each key once), and resumes `working` when nothing is outstanding any more.
   */
  respond(taskId: string, responses: InputResponses): { accepted: string[]; ignored: string[] } {
    const r = this.live(taskId);
    r.updates.push(copyJson(responses));
    const accepted: string[] = [];
    const ignored: string[] = [];
    for (const [key, value] of Object.entries(responses)) {
      if (r.outstanding.has(key)) {
        r.outstanding.delete(key);
        r.answers.set(key, copyJson(value));
        accepted.push(key);
      } else ignored.push(key);
    }
    if (accepted.length > 0) {
      if (r.status === 'input_required' && r.outstanding.size === 0) {
        r.status = 'working';
        r.statusMessage = undefined;
        r.lastAdvanceAt = this.options.now();
      }
      this.changed(r);
    }
    return { accepted, ignored };
  }

  /** What `tasks/cancel` does before its acknowledgement; -32602 for an unknown id, no-op when terminal. */
  requestCancel(taskId: string): void {
    const r = this.live(taskId);
    if (isTerminal(r.status)) return;
    r.cancelRequested = true;
    if ((r.script.cancel ?? this.options.cancel ?? 'cancel') === 'cancel')
      this.cancel(taskId, "Cancelled at the client's request.");
  }

  private require(taskId: string): TaskRecord {
    const r = this.records.get(taskId);
    if (r === undefined) throw rpcError(ErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${taskId})`);
    return r;
  }
  /** `require` after the TTL backstop. */
  private live(taskId: string): TaskRecord {
    const r = this.require(taskId);
    if (this.expire(r))
      throw rpcError(ErrorCode.InvalidParams, `Failed to retrieve task: Task has expired (${taskId})`);
    return r;
  }
  /** Applies the expiry policy; true when the task was deleted. */
  private expire(r: TaskRecord): boolean {
    const policy = this.options.expiry ?? 'keep';
    if (policy === 'keep' || r.ttlMs === null || this.options.now() < r.createdAt + r.ttlMs) return false;
    if (policy === 'delete') {
      this.records.delete(r.taskId);
      return true;
    }
    if (!isTerminal(r.status)) {
      r.status = 'failed';
      r.error = { code: ErrorCode.InternalError, message: 'Task expired before it finished' };
      r.statusMessage = 'Task expired (ttlMs elapsed).';
      r.outstanding.clear();
      this.changed(r);
    }
    return false;
  }

  private progress(r: TaskRecord, trigger: 'poll' | 'tick'): void {
    if (isTerminal(r.status)) return;
    if (r.cancelRequested) {
      const mode = r.script.cancel ?? this.options.cancel ?? 'cancel';
      if (mode === 'deferred') return void this.cancel(r.taskId, "Cancelled at the client's request.");
      if (mode === 'complete')
        return void this.complete(r.taskId, this.finalResult(r), 'Finished before the cancellation took effect.');
      if (mode === 'fail')
        return void this.fail(r.taskId, { code: ErrorCode.InternalError, message: 'Worker crashed while stopping' });
    }
    const advance = r.script.advance ?? 'poll';
    if (advance === 'manual' || (advance === 'poll' && trigger !== 'poll')) return;
    if (advance === 'poll') return this.applyNext(r);
    const now = this.options.now();
    while (
      !isTerminal(r.status) &&
      r.outstanding.size === 0 &&
      now >= r.lastAdvanceAt + advance.everyMs &&
      r.step < (r.script.steps?.length ?? 0)
    ) {
      r.lastAdvanceAt += advance.everyMs;
      this.applyNext(r);
    }
  }
  private applyNext(r: TaskRecord): void {
    const step = r.script.steps?.[r.step];
    if (step === undefined || r.outstanding.size > 0) return;
    r.step += 1;
    const result = typeof step.result === 'function' ? step.result(this.context(r)) : step.result;
    this.update(r.taskId, {
      ...(step.status === undefined ? {} : { status: step.status }),
      ...(step.statusMessage === undefined ? {} : { statusMessage: step.statusMessage }),
      ...(step.inputRequests === undefined ? {} : { inputRequests: step.inputRequests }),
      ...(result === undefined ? {} : { result }),
      ...(step.error === undefined ? {} : { error: step.error }),
      ...(step.ttlMs === undefined ? {} : { ttlMs: step.ttlMs }),
      ...(step.pollIntervalMs === undefined ? {} : { pollIntervalMs: step.pollIntervalMs }),
    });
  }
  private context(r: TaskRecord): StepContext {
    return { taskId: r.taskId, args: copyJson(r.args), answers: Object.fromEntries(copyJson([...r.answers])) };
  }
  /** The result the script would end with (for `cancel: 'complete'`). */
  private finalResult(r: TaskRecord): Json {
    const last = [...(r.script.steps ?? [])].reverse().find((s) => s.result !== undefined);
    const result = typeof last?.result === 'function' ? last.result(this.context(r)) : last?.result;
    return result ?? { content: [{ type: 'text', text: 'done' }] };
  }
  private issue(r: TaskRecord, requests: InputRequests): void {
    for (const key of Object.keys(requests)) {
      // Keys are unique over the task's life (EXT "Task Update Requests"): a reuse is a scripting bug.
      if (r.issued.has(key)) throw new Error(`ExtTaskStore: input key "${key}" was already used by task ${r.taskId}`);
    }
    for (const [key, request] of Object.entries(requests)) {
      r.issued.add(key);
      r.outstanding.set(key, copyJson(request));
    }
  }
  private scheduledInterval(r: TaskRecord): number | undefined {
    const value = r.script.pollIntervalMs ?? this.options.pollIntervalMs ?? 1_000;
    if (!Array.isArray(value)) return value as number;
    const schedule = value as readonly number[];
    return schedule[Math.min(r.polls, schedule.length - 1)];
  }
  private changed(r: TaskRecord): DetailedTask {
    r.lastUpdatedAt = this.options.now();
    const snapshot = this.snapshot(r);
    for (const listener of [...this.listeners]) listener(snapshot);
    return snapshot;
  }
  private iso(ms: number): string {
    const text = new Date(ms).toISOString();
    return this.options.wholeSeconds === true ? text.replace(/\.\d{3}Z$/, 'Z') : text;
  }
  /** The wire `DetailedTask`: only the field its status calls for. */
  private snapshot(r: TaskRecord): DetailedTask {
    const task: Record<string, unknown> = {
      taskId: r.taskId,
      status: r.status,
      ...(r.statusMessage === undefined ? {} : { statusMessage: r.statusMessage }),
      createdAt: this.iso(r.createdAt),
      lastUpdatedAt: this.iso(r.lastUpdatedAt),
      ttlMs: r.ttlMs,
      ...(r.pollIntervalMs === undefined ? {} : { pollIntervalMs: r.pollIntervalMs }),
    };
    if (r.status === 'input_required') task.inputRequests = Object.fromEntries(r.outstanding);
    if (r.status === 'completed') {
      const result = r.result ?? { content: [] };
      task.result =
        this.options.stampInnerResultType === false || 'resultType' in result
          ? result
          : { resultType: 'complete', ...result };
    }
    if (r.status === 'failed')
      task.error = errorObject(r.error ?? { code: ErrorCode.InternalError, message: 'Task failed' });
    return copyJson(task) as DetailedTask;
  }
}
