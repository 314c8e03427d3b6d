/**
 * `TaskClient`: wraps a connected SDK `Client`, negotiates task mode per tool, starts calls and
 * hands out {@link TaskHandle}s. It composes the wire adapter, the engine and the tool catalog,
 * and owns the ways to stop waiting (deadline, abort, detach, dispose, close).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { giveUp } from './engine/stop.js';
import { TaskEngine } from './engine/engine.js';
import type { TaskRecord } from './engine/record.js';
import {
  TaskAbortError,
  TaskClosedError,
  TaskDetachedError,
  type TaskError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskRpcError,
  TaskTimeoutError,
  type RemoteCancelOutcome,
} from './errors.js';
import { TaskHandle, type HandleBackend, type TaskReference } from './handle.js';
import {
  DEFAULT_PLAIN_CALL_TIMEOUT_MS,
  resolveCallOptions,
  resolveClientOptions,
  type CallToolAsTaskOptions,
  type ResolvedCallOptions,
  type ResolvedClientOptions,
  type TaskClientOptions,
} from './options.js';
import { ToolCatalog } from './tool-catalog.js';
import type { Task } from './types.js';
import { Stopped, childController, raceStop, type StopReason } from './util/race.js';
import { Wire2025 } from './wire/v2025.js';
import type { StartOutcome, TaskSupport, TaskWire } from './wire/wire.js';

/** Options of {@link TaskClient.close}. */
export interface CloseOptions {
  /**
   * Cancel every still-running remote task with `tasks/cancel` before closing.
   * @default false
   */
  readonly cancelRunning?: boolean;
}

/** JSON-RPC codes a server may use to refuse task augmentation for a tool ([A1], [V3]). */
const AUGMENTATION_REFUSED: ReadonlySet<number> = new Set([-32600, -32601]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Runs MCP tool calls as tasks (MCP 2025-11-25) over a connected `@modelcontextprotocol/sdk`
 * `Client`, and tracks them with one shared scheduler.
 *
 * Handlers: the client's handler for `notifications/tasks/status` (and later for input requests)
 * is chained, not replaced. A handler you set before or after creating the TaskClient keeps
 * receiving every notification; see docs/concepts.md.
 */
export class TaskClient {
  private readonly config: ResolvedClientOptions;
  private readonly wire: TaskWire;
  private readonly engine: TaskEngine;
  private readonly catalog: ToolCatalog;
  private readonly unsubscribe: () => void;
  private closing: Promise<void> | undefined;
  private readonly backend: HandleBackend;

  /**
   * @param client a connected SDK `Client`.
   * @throws TaskOptionError when `client` is not connected or an option is invalid.
   */
  constructor(client: Client, options: TaskClientOptions = {}) {
    if (client === null || typeof client !== 'object' || typeof client.request !== 'function') {
      throw new TaskOptionError('TaskClient needs an @modelcontextprotocol/sdk Client', { option: 'client' });
    }
    if (client.transport === undefined) {
      throw new TaskOptionError('The SDK Client is not connected: call client.connect(transport) first', {
        option: 'client',
      });
    }
    this.config = resolveClientOptions(options);
    this.wire = new Wire2025(client);
    this.engine = new TaskEngine(this.wire, this.config, {
      status: () => {},
      settled: () => {},
      problem: () => {},
    });
    this.catalog = new ToolCatalog(
      () => this.engine.wire,
      () => this.config.requestTimeoutMs,
    );
    this.unsubscribe = this.wire.subscribe({
      status: (task) => this.engine.push(task),
      malformed: (error) => this.engine.report(error, undefined),
      toolsChanged: () => this.catalog.invalidate(),
      closed: () => {
        this.engine.paused = true;
      },
    });
    this.backend = {
      cancel: (record) => this.engine.cancel(record),
      detach: (record) => this.detach(record),
      dispose: (record) => this.dispose(record),
      reference: (record) => this.reference(record),
    };
  }

  /** Number of tasks being tracked (created and not yet settled). */
  get active(): number {
    return this.engine.size;
  }

  /**
   * Calls a tool as a task and resolves once the server answered the `tools/call`.
   *
   * Task mode is used only when the server declared `tasks.requests.tools.call` ([R6]) and the
   * tool's `execution.taskSupport` is `optional` or `required` ([R7]-[R9]); otherwise (or when the
   * server answers with a plain result, [V1]) the handle is `immediate` and `result()` resolves
   * with that result, unless `requireTask` is set.
   * @throws TaskNotSupportedError with `requireTask` when task mode is not possible.
   * @throws TaskTimeoutError / TaskAbortError when the deadline or signal stop the call first.
   * @throws TaskRpcError when the server rejects the call.
   * @throws TaskOptionError for invalid arguments.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  async callToolAsTask(
    name: string,
    args: Record<string, unknown> = {},
    options: CallToolAsTaskOptions = {},
  ): Promise<TaskHandle> {
    if (this.closing !== undefined) throw new TaskClosedError('This TaskClient is closed', { toolName: name });
    if (typeof name !== 'string' || name === '') {
      throw new TaskOptionError('Tool name must be a non-empty string', { option: 'name' });
    }
    if (!isPlainObject(args)) throw new TaskOptionError('Tool arguments must be a plain object', { option: 'args' });
    const call = resolveCallOptions(this.config, options);
    const startedAt = this.config.clock.now();
    const deadlineAt = call.timeoutMs === undefined ? undefined : startedAt + call.timeoutMs;
    const stopError = (stop: StopReason): TaskError => this.stopError(stop, name, call, startedAt, 'no-task');
    if (call.signal?.aborted) throw stopError({ kind: 'abort', reason: call.signal.reason });
    try {
      const caps = this.engine.wire.capabilities();
      const support = caps.toolsCall
        ? await raceStop(this.catalog.taskSupport(name), this.engine.scheduler, call.signal, deadlineAt)
        : undefined;
      if (caps.toolsCall && (support === 'optional' || support === 'required')) {
        return await this.startTask(name, args, call, support, startedAt, deadlineAt);
      }
      if (call.requireTask) {
        throw new TaskNotSupportedError(
          caps.toolsCall
            ? `Tool "${name}" does not support task mode (execution.taskSupport is ${support ?? 'absent'})`
            : 'The server does not support task-augmented tools/call (no tasks.requests.tools.call capability)',
          { feature: caps.toolsCall ? 'tool' : 'tasks', toolName: name },
        );
      }
      return await this.callPlain(name, args, call, deadlineAt);
    } catch (error) {
      if (error instanceof Stopped) throw stopError(error.stop);
      throw error;
    }
  }

  private async startTask(
    name: string,
    args: Record<string, unknown>,
    call: ResolvedCallOptions,
    support: TaskSupport,
    startedAt: number,
    deadlineAt: number | undefined,
  ): Promise<TaskHandle> {
    const engine = this.engine;
    const endCreate = engine.beginCreate();
    const now = this.config.clock.now();
    // R24: never abort a task-augmented request with notifications/cancelled, so the SDK request
    // gets no signal; its own timeout only covers a server that never answers (A5).
    const request = engine.wire.callTool(
      { name, arguments: args, task: { ttl: call.ttlMs }, meta: call.meta },
      { timeoutMs: (deadlineAt === undefined ? DEFAULT_PLAIN_CALL_TIMEOUT_MS : deadlineAt - now) + call.requestTimeoutMs },
    );
    let outcome: StartOutcome;
    try {
      outcome = await raceStop(request, engine.scheduler, call.signal, deadlineAt);
    } catch (error) {
      if (error instanceof Stopped) {
        // Abandoned before the answer: if a task gets created anyway, cancel it once its id is known.
        request.then(
          (late) => {
            endCreate();
            if (late.kind === 'task') this.cancelOrphan(late.task);
          },
          () => endCreate(),
        );
        throw this.stopError(error.stop, name, call, startedAt, 'pending');
      }
      endCreate();
      if (error instanceof TaskRpcError && AUGMENTATION_REFUSED.has(error.code) && support === 'optional') {
        return this.callPlain(name, args, call, deadlineAt);
      }
      throw error;
    }
    if (outcome.kind === 'immediate') {
      endCreate();
      return new TaskHandle(name, { kind: 'immediate', result: outcome.result });
    }
    const record = engine.track(outcome.task, name, { startedAt, requestTimeoutMs: call.requestTimeoutMs });
    endCreate();
    this.armStops(record, call, startedAt, deadlineAt);
    return new TaskHandle(name, { kind: 'task', record, backend: this.backend }, outcome.immediateResponse);
  }

  private async callPlain(
    name: string,
    args: Record<string, unknown>,
    call: ResolvedCallOptions,
    deadlineAt: number | undefined,
  ): Promise<TaskHandle> {
    // A plain request is cancelled the normal way (notifications/cancelled), through a child
    // signal so the caller's signal keeps no SDK listener afterwards.
    const child = childController(call.signal);
    const timeoutMs = deadlineAt === undefined ? DEFAULT_PLAIN_CALL_TIMEOUT_MS : deadlineAt - this.config.clock.now();
    try {
      const outcome = await raceStop(
        this.engine.wire.callTool({ name, arguments: args, meta: call.meta }, { timeoutMs, signal: child.signal }),
        this.engine.scheduler,
        call.signal,
        deadlineAt,
      );
      if (outcome.kind === 'task') {
        // A server that creates a task we did not ask for: track it like any other.
        const record = this.engine.track(outcome.task, name, { requestTimeoutMs: call.requestTimeoutMs });
        this.armStops(record, call, this.config.clock.now(), deadlineAt);
        return new TaskHandle(name, { kind: 'task', record, backend: this.backend }, outcome.immediateResponse);
      }
      return new TaskHandle(name, { kind: 'immediate', result: outcome.result });
    } finally {
      child.release();
    }
  }

  /** Arms the deadline timer and the abort listener of a tracked task. */
  private armStops(record: TaskRecord, call: ResolvedCallOptions, startedAt: number, deadlineAt: number | undefined): void {
    const engine = this.engine;
    if (deadlineAt !== undefined) {
      record.deadlineTimer = engine.scheduler.schedule(deadlineAt, () => {
        record.deadlineTimer = undefined;
        void giveUp(engine, record, {
          cancelRemote: call.cancelOnTimeout,
          error: (remote) => this.stopError({ kind: 'timeout' }, record.toolName, call, startedAt, remote, record),
        });
      });
    }
    const signal = call.signal;
    if (signal !== undefined) {
      const onAbort = (): void => {
        void giveUp(engine, record, {
          cancelRemote: call.cancelOnAbort,
          error: (remote) =>
            this.stopError({ kind: 'abort', reason: signal.reason }, record.toolName, call, startedAt, remote, record),
        });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      record.onSettled(() => signal.removeEventListener('abort', onAbort));
    }
  }

  private stopError(
    stop: StopReason,
    toolName: string,
    call: ResolvedCallOptions,
    startedAt: number,
    remoteCancel: RemoteCancelOutcome,
    record?: TaskRecord,
  ): TaskError {
    const fate = REMOTE_FATE[remoteCancel];
    const common = { task: record?.task, toolName, remoteCancel };
    if (stop.kind === 'abort') {
      return new TaskAbortError(`Call to "${toolName}" was aborted; ${fate}`, { ...common, reason: stop.reason });
    }
    const elapsedMs = this.config.clock.now() - startedAt;
    return new TaskTimeoutError(`Task for tool "${toolName}" timed out after ${call.timeoutMs ?? elapsedMs} ms; ${fate}`, {
      ...common,
      timeoutMs: call.timeoutMs ?? elapsedMs,
      elapsedMs,
      connectionLost: this.engine.paused,
    });
  }

  /** Cancels a task created after its caller gave up (best effort; never throws). */
  private cancelOrphan(task: Task): void {
    if (this.closing !== undefined && !this.engine.wire.capabilities().cancel) return;
    if (!this.engine.wire.capabilities().cancel) return;
    this.engine.wire
      .cancelTask(task.taskId, { timeoutMs: this.config.requestTimeoutMs })
      .catch((error: unknown) => this.engine.report(error, undefined));
  }

  private detach(record: TaskRecord): TaskReference {
    const reference = this.reference(record);
    this.engine.settle(record, {
      ok: false,
      error: new TaskDetachedError('The handle was detached; the remote task keeps running', {
        task: record.task,
        toolName: record.toolName,
      }),
    });
    return reference;
  }

  private async dispose(record: TaskRecord): Promise<void> {
    await giveUp(this.engine, record, {
      cancelRemote: true,
      throwFromIterators: false,
      error: (remote) =>
        new TaskDetachedError(`The handle was disposed; ${REMOTE_FATE[remote]}`, {
          task: record.task,
          toolName: record.toolName,
        }),
    });
  }

  private reference(record: TaskRecord): TaskReference {
    const task = record.task;
    return {
      v: 1,
      taskId: task.taskId,
      toolName: record.toolName,
      createdAt: task.createdAt,
      ttl: task.ttl,
      server: this.engine.wire.serverIdentity(),
      revision: this.engine.wire.revision,
    };
  }

  /**
   * Settles every handle with {@link TaskClosedError}, stops every timer and releases the SDK
   * client's handlers. With `cancelRunning`, still-running remote tasks are cancelled first.
   * Idempotent.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.closing ??= (async () => {
      const engine = this.engine;
      await Promise.all(
        [...engine.tracked()].map((record) =>
          giveUp(engine, record, {
            cancelRemote: options.cancelRunning === true,
            error: (remote) =>
              new TaskClosedError(`The TaskClient was closed; ${REMOTE_FATE[remote]}`, {
                task: record.task,
                toolName: record.toolName,
              }),
          }),
        ),
      );
      this.unsubscribe();
      engine.shutdown();
    })();
    return this.closing;
  }
}

/** How each remote-cancel outcome reads in an error message. */
const REMOTE_FATE: Record<RemoteCancelOutcome, string> = {
  cancelled: 'the remote task was cancelled',
  failed: 'cancelling the remote task failed, it may still be running',
  'not-supported': 'the server cannot cancel tasks, the remote task may still be running',
  disabled: 'the remote task was left running',
  'no-task': 'no remote task was created',
  pending: 'a task created anyway will be cancelled as soon as its id arrives',
};
