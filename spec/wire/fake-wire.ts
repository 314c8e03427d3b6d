/**
 * A fake {@link TaskWire}, written from the interface alone: a tiny in-memory task server and a
 * wire that talks to it with plain objects (no JSON-RPC, no SDK, no library decoder). It exists
 * to show that the wire contract is about the seam, not about one protocol.
 *
 * It comes in two forms, the two shapes the seam allows:
 * - `fetch`: the final payload has its own request (`payloadFetch`, blocking until the task
 *   ends) and a cancel answers with the task's snapshot; every task's pushes reach the client;
 * - `inline`: the final payload rides on the terminal snapshot, a cancel is acknowledged only,
 *   and pushes reach the client only for tasks it watches.
 *
 * The fake's errors are the library's own (`TaskRpcError`, `TaskProtocolError`); it classifies
 * them by a cause of its own, never by a JSON-RPC code.
 */
import { TaskProtocolError, TaskRpcError, type Task, type TaskStatus } from '../../lib/index.js';
import type {
  CancelReply,
  ErrorClass,
  InputKind,
  StartReply,
  StartToolCall,
  TaskPayload,
  TaskPage,
  TaskWire,
  ToolPage,
  WireEvents,
  WireFeatures,
  WireKind,
  WireRequestOptions,
  WireSnapshot,
} from '../../lib/internal.js';
import type { FakeTaskServer } from './fake-server.js';
import type { Json, WireOp } from './support.js';

/** The fake's two protocol forms. */
export type FakeForm = 'fetch' | 'inline';

/** Why a fake request failed. */
export class FakeCause extends Error {
  override name = 'FakeCause';
  constructor(
    readonly kind: 'timeout' | 'aborted' | 'closed' | 'unknown-task' | 'terminal' | 'internal',
    message: string,
  ) {
    super(message);
  }
}

const STATUSES: ReadonlySet<string> = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function bad(op: WireOp | 'push', detail: string, taskId?: string): TaskProtocolError {
  return new TaskProtocolError(`Malformed fake/${op} reply: ${detail}`, { method: `fake/${op}`, taskId });
}

function decodeTask(value: unknown, op: WireOp | 'push'): Task {
  if (!isJson(value) || typeof value.taskId !== 'string' || value.taskId === '') throw bad(op, 'no task id');
  if (typeof value.status !== 'string' || !STATUSES.has(value.status)) throw bad(op, 'unknown status', value.taskId);
  const task: { -readonly [K in keyof Task]: Task[K] } = {
    taskId: value.taskId,
    status: value.status as TaskStatus,
    createdAt: typeof value.createdAt === 'string' ? value.createdAt : '',
    lastUpdatedAt: typeof value.lastUpdatedAt === 'string' ? value.lastUpdatedAt : '',
    ttl: typeof value.ttl === 'number' ? value.ttl : null,
  };
  if (typeof value.statusMessage === 'string') task.statusMessage = value.statusMessage;
  if (typeof value.pollInterval === 'number') task.pollInterval = value.pollInterval;
  return task;
}

function decodePayload(value: unknown, op: WireOp, taskId: string): TaskPayload {
  if (isJson(value) && value.kind === 'result' && isJson(value.result)) {
    const content = value.result.content ?? [];
    if (!Array.isArray(content)) throw bad(op, 'content is not a list', taskId);
    return { kind: 'result', result: { ...value.result, content }, tagged: true };
  }
  if (isJson(value) && value.kind === 'error' && isJson(value.error)) {
    const { code, message, data } = value.error;
    if (typeof code === 'number' && typeof message === 'string') {
      return { kind: 'error', error: data === undefined ? { code, message } : { code, message, data } };
    }
  }
  throw bad(op, 'unusable payload', taskId);
}

function sameTask(task: Task, taskId: string, op: WireOp): Task {
  if (task.taskId !== taskId) throw bad(op, 'the reply names another task', taskId);
  return task;
}

/** The fake wire, one per {@link FakeTaskServer} connection. */
export class FakeWire implements TaskWire {
  readonly kind: WireKind;
  readonly statusNotification = 'fake/push';
  private nextId = 0;
  /** Open requests: each entry fails its request when the connection drops. */
  private readonly open = new Map<number, () => void>();
  private readonly subscribers = new Set<WireEvents>();
  private closed = false;

  constructor(
    private readonly server: FakeTaskServer,
    private readonly form: FakeForm,
  ) {
    this.kind = form === 'fetch' ? '2025-11-25' : 'io.modelcontextprotocol/tasks';
    server.attach({ push: (message) => this.pushed(message), closed: () => this.lost() });
  }

  features(): WireFeatures {
    const fetch = this.form === 'fetch';
    return {
      tasks: true,
      tasksElsewhere: false,
      toolNegotiation: false,
      payloadFetch: fetch,
      inputViaPayload: false,
      inlineInput: false,
      cancel: true,
      cancelSnapshot: fetch,
      list: true,
      progress: false,
      requestTtl: true,
      ttlBackstop: false,
      sessionScoped: false,
    };
  }

  unsupportedReason(): string {
    return 'The fake server always runs tasks';
  }

  serverIdentity(): string | undefined {
    return 'fake-task-server@1.0.0';
  }

  sessionId(): string | undefined {
    return undefined;
  }

  answeredByServer(error: unknown): boolean {
    const cause = error instanceof TaskRpcError && error.cause instanceof FakeCause ? error.cause : undefined;
    return cause?.kind === 'unknown-task' || cause?.kind === 'terminal' || cause?.kind === 'internal';
  }

  classify(error: unknown): ErrorClass {
    if (error instanceof TaskProtocolError) return 'protocol';
    const cause = error instanceof TaskRpcError && error.cause instanceof FakeCause ? error.cause : undefined;
    switch (cause?.kind) {
      case 'timeout':
        return 'timeout';
      case 'aborted':
        return 'stopped';
      case 'closed':
        return 'transient';
      case 'unknown-task':
      case 'terminal':
        return 'vanished';
      default:
        return 'server';
    }
  }

  assume(): void {}

  listTools(): Promise<ToolPage> {
    return Promise.resolve({ tools: [] });
  }

  startToolCall(call: StartToolCall, options: WireRequestOptions): Promise<StartReply> {
    const input: Json = { name: call.name, arguments: call.arguments, task: call.task !== undefined };
    return this.request('call', input, options, undefined, (value): StartReply => {
      if (isJson(value) && value.task !== undefined)
        return { kind: 'task', snapshot: { task: decodeTask(value.task, 'call') } };
      if (isJson(value) && isJson(value.result) && Array.isArray(value.result.content)) {
        return { kind: 'immediate', result: { ...value.result, content: value.result.content } };
      }
      throw bad('call', 'neither a task nor a result');
    });
  }

  getTask(taskId: string, options: WireRequestOptions): Promise<WireSnapshot> {
    return this.request('get', { taskId }, options, taskId, (value): WireSnapshot => {
      const task = sameTask(decodeTask(isJson(value) ? value.task : undefined, 'get'), taskId, 'get');
      if (!isJson(value) || value.payload === undefined) return { task };
      return { task, payload: decodePayload(value.payload, 'get', taskId) };
    });
  }

  /** The usual call's form of {@link FakeWire.startToolCall}: the outcome told to `sink`, a reaction later, as the real wires do. */
  startToolCallInto<Token>(
    call: StartToolCall,
    options: WireRequestOptions,
    sink: { replied(reply: StartReply, token: Token): void; failed(error: unknown, token: Token): void },
    token: Token,
  ): void {
    tell(this.startToolCall(call, options), sink, token);
  }

  /** The poll's form of {@link FakeWire.getTask}: the outcome told to `sink`, a reaction later, as the real wires do. */
  readTask<Token>(
    taskId: string,
    options: WireRequestOptions,
    sink: { replied(snapshot: WireSnapshot, token: Token): void; failed(error: unknown, token: Token): void },
    token: Token,
  ): void {
    tell(this.getTask(taskId, options), sink, token);
  }

  getPayload(taskId: string, options: WireRequestOptions): Promise<TaskPayload> {
    if (this.form === 'inline')
      return Promise.reject(new TypeError('The inline form carries the payload on the terminal snapshot'));
    return this.request('payload', { taskId }, options, taskId, (value) => {
      if (!isJson(value) || value.taskId !== taskId) throw bad('payload', 'the reply names another task', taskId);
      return decodePayload(value.payload, 'payload', taskId);
    });
  }

  cancelTask(taskId: string, options: WireRequestOptions): Promise<CancelReply> {
    return this.request('cancel', { taskId }, options, taskId, (value): CancelReply => {
      if (this.form === 'inline') {
        if (isJson(value) && value.cancelled === true) return { kind: 'ack' };
        throw bad('cancel', 'not an acknowledgement', taskId);
      }
      return {
        kind: 'snapshot',
        snapshot: { task: sameTask(decodeTask(isJson(value) ? value.task : undefined, 'cancel'), taskId, 'cancel') },
      };
    });
  }

  supplyInput(): Promise<void> {
    return Promise.reject(new TypeError('The fake wire takes no input'));
  }

  listTasks(): Promise<TaskPage> {
    return Promise.resolve({ tasks: this.server.list().map((task) => decodeTask(task, 'get')) });
  }

  watch(taskId: string): void {
    this.server.watch(taskId);
  }

  unwatch(taskId: string): void {
    this.server.unwatch(taskId);
  }

  subscribe(events: WireEvents): () => void {
    if (this.closed) {
      queueMicrotask(() => events.closed());
      return () => {};
    }
    this.subscribers.add(events);
    return () => {
      this.subscribers.delete(events);
    };
  }

  serveInput(): () => void {
    return () => {};
  }

  inputCapabilities(): Readonly<Record<InputKind, boolean>> {
    return { elicitation: false, sampling: false };
  }

  answerInput(): void {}

  private pushed(message: unknown): void {
    for (const events of [...this.subscribers]) {
      try {
        events.status({ task: decodeTask(isJson(message) ? message.task : undefined, 'push') });
      } catch (error) {
        events.malformed(error as Error);
      }
    }
  }

  private lost(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fail of [...this.open.values()]) fail();
    for (const events of [...this.subscribers]) events.closed();
  }

  /** The library's error for a failed request; no message repeats the task id (a secret). */
  private failure(
    op: WireOp,
    cause: FakeCause,
    taskId: string | undefined,
    code = -32000,
    data?: unknown,
  ): TaskRpcError {
    const transient = cause.kind === 'timeout' || cause.kind === 'closed';
    const message = taskId === undefined ? cause.message : cause.message.replaceAll(taskId, '<task>');
    const scrubbed = message === cause.message ? cause : new FakeCause(cause.kind, message);
    return new TaskRpcError(`fake/${op} failed: ${message}`, {
      method: `fake/${op}`,
      code,
      data,
      transient,
      taskId,
      cause: scrubbed,
    });
  }

  /** One request: its own timeout on `options.timers`, abort, and a notice to the server for a request given up while open ([R27]). */
  private request<T>(
    op: WireOp,
    input: Json,
    options: WireRequestOptions,
    taskId: string | undefined,
    decode: (value: unknown) => T,
  ): Promise<T> {
    if (this.closed) return Promise.reject(this.failure(op, new FakeCause('closed', 'connection closed'), taskId));
    const signal = options.signal;
    if (signal?.aborted === true) return Promise.reject(this.failure(op, new FakeCause('aborted', 'aborted'), taskId));
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      const settle = (then: () => void): void => {
        if (!this.open.delete(id)) return;
        options.timers.cancel(timer);
        signal?.removeEventListener('abort', onAbort);
        then();
      };
      const giveUp = (cause: FakeCause): void =>
        settle(() => {
          this.server.cancelled(id);
          reject(this.failure(op, cause, taskId));
        });
      const onAbort = (): void => giveUp(new FakeCause('aborted', 'aborted'));
      this.open.set(id, () =>
        settle(() => reject(this.failure(op, new FakeCause('closed', 'connection closed'), taskId))),
      );
      const timer = options.timers.after(
        options.timeoutMs,
        () => giveUp(new FakeCause('timeout', 'timed out')),
        options.weak === true,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.server.receive(id, op, input).then((answer) =>
        settle(() => {
          if ('refusal' in answer) {
            const { reason, code, message, data } = answer.refusal;
            reject(this.failure(op, new FakeCause(reason, message), taskId, code, data));
            return;
          }
          try {
            resolve(decode(answer.value));
          } catch (error) {
            reject(error);
          }
        }),
      );
    });
  }
}

/** Tells `sink` the outcome of `outcome`, with `token`, from the promise's reaction. */
function tell<T, Token>(
  outcome: Promise<T>,
  sink: { replied(value: T, token: Token): void; failed(error: unknown, token: Token): void },
  token: Token,
): void {
  outcome.then(
    (value) => sink.replied(value, token),
    (error: unknown) => sink.failed(error, token),
  );
}
