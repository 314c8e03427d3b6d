/**
 * A scripted MCP server for tests: a small JSON-RPC peer on one end of an in-memory pair
 * (`InMemoryTransport.createLinkedPair()` of the SDK chosen by `MCP_SDK`, spec/support/sdk.ts),
 * for what real servers won't do on demand (early or duplicate notifications, odd error shapes,
 * withheld answers, malformed JSON).
 *
 * - `initialize` answers with the configured `capabilities` and protocolVersion `2025-11-25`;
 *   `tools/list` answers from `tools` (paged with `toolsPageSize`); `ping` answers `{}`.
 * - `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` are served from `server.tasks`, a
 *   tiny task store ({@link TaskBoard}); override any of them with `server.on(method, handler)`.
 * - Every other request goes to a handler `(params, ctx) => result`; a handler may be async (delay),
 *   throw `{code, message, data}` (see {@link rpcError}), return {@link NO_REPLY} (withhold; answer
 *   later with `ctx.reply` / `ctx.fail`, or never) or return {@link raw}(json) (sent verbatim).
 *   Unhandled methods get -32601.
 * - Before any handler runs, the server asserts the request it holds (spec/support/request-checks.ts:
 *   the schema of its params and what this server told the client before). A request that breaks
 *   one is answered with -32602 and recorded in `violations` and spec/support/violations.ts, which
 *   fails the test; a handler asserts what it expects in particular with {@link ScriptedServer.assertRequest}.
 * - `server.log` records every message received, with `server.now()` timestamps; `count(method)`,
 *   `counts()` and `params(method)` summarise it. `notify()` sends any notification at any time,
 *   `request()` sends a server->client request and resolves with the client's reply message.
 * Outgoing messages are JSON round-tripped, so `undefined` keys vanish as they would on a real wire.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { nothingTold, noteReply, requestProblem } from './request-checks.js';
import { createLinkedPair, makeClient, type SpecClient, type SpecClientOptions } from './sdk.js';
import { recordViolation } from './violations.js';

export type Json = Record<string, unknown>;
export type RequestId = string | number;
/** What a handler throws to answer with a JSON-RPC error. */
export interface RpcFailure {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}
/** Builds a throwable JSON-RPC error: `throw rpcError(-32602, 'Task not found')`. */
export function rpcError(code: number, message: string, data?: unknown): RpcFailure & Error {
  return Object.assign(new Error(message), { code, data });
}
/** A handler's return value meaning "send nothing now". */
export const NO_REPLY: unique symbol = Symbol('no-reply');
const RAW = Symbol('raw');
/** A handler's return value meaning "send this message verbatim" (any JSON, even a broken one). */
export function raw(message: unknown): { readonly [RAW]: unknown } {
  return { [RAW]: message };
}

/** `reply` / `fail` answer later, after the handler returned {@link NO_REPLY}. */
export interface HandlerContext {
  readonly id: RequestId;
  readonly method: string;
  readonly server: ScriptedServer;
  reply(result: unknown): void;
  fail(error: RpcFailure): void;
}
export type Handler = (params: Json, ctx: HandlerContext) => unknown;

/** One received message; `at` is `server.now()` on arrival. */
export interface LoggedMessage {
  readonly at: number;
  readonly kind: 'request' | 'notification' | 'response';
  readonly method?: string;
  readonly id?: RequestId;
  readonly params: Json;
  readonly message: Json;
}
export interface ScriptedTool {
  readonly name: string;
  readonly taskSupport?: 'forbidden' | 'optional' | 'required';
  readonly [key: string]: unknown;
}
export interface ScriptedServerOptions {
  /** Server capabilities. @default tools + tasks {list, cancel, requests.tools.call} */
  readonly capabilities?: Json;
  readonly tools?: readonly ScriptedTool[];
  /** Page size of `tools/list` (opaque cursors). @default all in one page */
  readonly toolsPageSize?: number;
  readonly protocolVersion?: string;
  readonly handlers?: Readonly<Record<string, Handler>>;
  /** Clock for log timestamps and task times (pass a ManualClock's `now`). @default Date.now */
  readonly now?: () => number;
  /** Task times in whole seconds, so createdAt == lastUpdatedAt is common (D4). */
  readonly wholeSeconds?: boolean;
  /**
   * Pass list cursors this server never gave on to the handler instead of refusing them ([R23]
   * binds a requestor; a probe such as the doctor sends a made-up cursor on purpose). @default false
   */
  readonly madeUpCursors?: boolean;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const FULL_TASK_CAPS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** A tiny task store keyed by taskId; handlers return its snapshots. Keys set to `undefined` are omitted on the wire. */
export class TaskBoard {
  private readonly tasks = new Map<string, Json>();
  private readonly outcomes = new Map<string, { result: Json } | { error: RpcFailure }>();
  private readonly waiters = new Map<string, Array<() => void>>();
  private seq = 0;
  constructor(private readonly server: ScriptedServer) {}

  /** Creates a `working` task (defaults: ttl 60000, pollInterval 1000); returns its snapshot. */
  create(init: Json = {}): Json {
    const at = this.server.iso();
    const task: Json = {
      taskId: `task-${++this.seq}`,
      status: 'working',
      createdAt: at,
      lastUpdatedAt: at,
      ttl: 60_000,
      pollInterval: 1_000,
      ...init,
    };
    this.tasks.set(String(task.taskId), task);
    return this.get(String(task.taskId));
  }
  /** `{ task }`, a CreateTaskResult for a new task. */
  createResult(init: Json = {}): Json {
    return { task: this.create(init) };
  }
  /** Snapshot (copy); throws -32602 for an unknown id (D12). */
  get(taskId: string): Json {
    const task = this.tasks.get(taskId);
    if (task === undefined) throw rpcError(-32602, `Task not found: ${taskId}`);
    return JSON.parse(JSON.stringify(task)) as Json;
  }
  /** Changes a task (lastUpdatedAt moves to now unless given); `notify` also pushes the new snapshot. */
  update(taskId: string, patch: Json, notify = false): Json {
    const task = this.tasks.get(taskId);
    if (task === undefined) throw new Error(`TaskBoard: unknown task ${taskId}`);
    Object.assign(task, { lastUpdatedAt: this.server.iso() }, patch);
    if (TERMINAL.has(String(task.status))) for (const wake of this.waiters.get(taskId)?.splice(0) ?? []) wake();
    const snapshot = this.get(taskId);
    if (notify) this.server.notify('notifications/tasks/status', snapshot);
    return snapshot;
  }
  /** Ends a task with a stored `tasks/result` payload: a result object or a JSON-RPC error. */
  finish(
    taskId: string,
    status: 'completed' | 'failed',
    payload: { result: Json } | { error: RpcFailure },
    patch: Json = {},
    notify = false,
  ): Json {
    this.outcomes.set(taskId, payload);
    return this.update(taskId, { status, ...patch }, notify);
  }
  /** Forgets a task (expiry, D9): later requests for it get -32602. */
  delete(taskId: string): void {
    this.tasks.delete(taskId);
  }
  /** Default `tasks/*` handlers, TS-SDK-like (V16 blocking result, D7, D11). */
  readonly handlers: Readonly<Record<string, Handler>> = {
    'tasks/get': (p) => this.get(String(p.taskId)),
    'tasks/list': () => ({ tasks: [...this.tasks.keys()].map((id) => this.get(id)) }),
    'tasks/cancel': (p) => {
      const task = this.get(String(p.taskId));
      if (TERMINAL.has(String(task.status)))
        throw rpcError(-32602, `Cannot cancel task in terminal status: ${String(task.status)}`);
      return this.update(String(p.taskId), { status: 'cancelled', statusMessage: 'Client cancelled task execution.' });
    },
    'tasks/result': async (p) => {
      const taskId = String(p.taskId);
      if (!TERMINAL.has(String(this.get(taskId).status))) {
        await new Promise<void>((resolve) => this.waiters.set(taskId, [...(this.waiters.get(taskId) ?? []), resolve]));
      }
      const outcome = this.outcomes.get(taskId);
      if (outcome === undefined) throw rpcError(-32603, `Task ${taskId} has no result stored`);
      if ('error' in outcome) throw outcome.error;
      return { _meta: { 'io.modelcontextprotocol/related-task': { taskId } }, ...outcome.result };
    },
  };
}

export class ScriptedServer {
  readonly log: LoggedMessage[] = [];
  /** Every message sent to the client (after the JSON round trip). */
  readonly sent: Json[] = [];
  /** Ids of the requests this server has answered (e.g. to catch a late notifications/cancelled, [R27]). */
  readonly answered = new Set<RequestId>();
  /** Requests refused by the checks (`method: why`); each one also fails the test. */
  readonly violations: string[] = [];
  /** Called with every received message as it is logged, before any handling. */
  onReceive: ((entry: LoggedMessage) => void) | undefined;
  readonly tasks: TaskBoard;
  readonly now: () => number;
  private transport: Transport | undefined;
  private readonly handlers = new Map<string, Handler>();
  private readonly pending = new Map<RequestId, (reply: Json) => void>();
  private readonly told = nothingTold();
  private nextId = 0;

  constructor(private readonly options: ScriptedServerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.tasks = new TaskBoard(this);
    for (const [method, handler] of Object.entries({ ...this.tasks.handlers, ...options.handlers }))
      this.on(method, handler);
  }

  /** Sets (replaces) the handler of `method`. */
  on(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }
  /** ISO time of `now()` (whole seconds with `wholeSeconds`). */
  iso(ms = this.now()): string {
    const text = new Date(ms).toISOString();
    return this.options.wholeSeconds === true ? text.replace(/\.\d{3}Z$/, 'Z') : text;
  }
  async connect(transport: Transport): Promise<void> {
    this.transport = transport;
    transport.onmessage = (message) => this.receive(message);
    await transport.start();
  }
  close(): Promise<void> {
    return this.transport?.close() ?? Promise.resolve();
  }

  /** Sends any message verbatim (JSON round-tripped); failures (closed transport) are ignored. */
  send(message: unknown): void {
    const copy = JSON.parse(JSON.stringify(message)) as Json;
    this.sent.push(copy);
    this.transport?.send(copy as JSONRPCMessage).catch(() => {});
  }
  notify(method: string, params: Json = {}): void {
    this.send({ jsonrpc: '2.0', method, params });
  }
  /** Sends a server->client request; resolves with the client's reply message (`result` or `error`). */
  request(method: string, params: Json = {}): Promise<Json> {
    const id = `srv-${++this.nextId}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /**
   * The error a handler throws to refuse the request it holds: records `method: why` as a violation
   * (which fails the test) and answers -32602.
   */
  refuse(method: string, why: string): RpcFailure & Error {
    const what = `${method}: ${why}`;
    this.violations.push(what);
    recordViolation(what);
    return rpcError(-32602, `scripted server: ${why}`);
  }
  /**
   * Asserts that the request `params` of `method` carry `expected` (each key equal, compared as
   * JSON); throws {@link ScriptedServer.refuse}'s error otherwise. For handlers that hold or answer
   * one particular request: `server.assertRequest('tasks/result', params, { taskId: 'a' })`.
   */
  assertRequest(method: string, params: Json, expected: Json): void {
    for (const [key, value] of Object.entries(expected)) {
      if (JSON.stringify(params[key]) !== JSON.stringify(value)) {
        throw this.refuse(method, `${key} is ${JSON.stringify(params[key])}, expected ${JSON.stringify(value)}`);
      }
    }
  }

  /** Messages received for `method` (requests and notifications). */
  received(method: string): LoggedMessage[] {
    return this.log.filter((entry) => entry.method === method);
  }
  /** The params of every received `method` message. */
  params(method: string): Json[] {
    return this.received(method).map((entry) => entry.params);
  }
  count(method: string): number {
    return this.received(method).length;
  }
  /** Counts of received messages by method. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { method } of this.log) if (method !== undefined) counts[method] = (counts[method] ?? 0) + 1;
    return counts;
  }

  private receive(message: Json): void {
    const { id, method } = message as { id?: RequestId; method?: string };
    const kind = method === undefined ? 'response' : id === undefined ? 'notification' : 'request';
    const params = (message.params ?? {}) as Json;
    const entry: LoggedMessage = { at: this.now(), kind, method, id, params, message };
    this.log.push(entry);
    this.onReceive?.(entry);
    if (kind === 'response' && id !== undefined) {
      this.pending.get(id)?.(message);
      this.pending.delete(id);
    } else if (kind === 'request' && method !== undefined && id !== undefined) void this.dispatch(id, method, params);
  }

  private async dispatch(id: RequestId, method: string, params: Json): Promise<void> {
    let done = false;
    const answer = (body: Json): void => {
      if (done) return;
      done = true;
      this.answered.add(id);
      if ('result' in body) noteReply(this.told, method, body.result);
      this.send({ jsonrpc: '2.0', id, ...body });
    };
    const fail = (error: RpcFailure): void =>
      answer({ error: { code: error.code, message: error.message, data: error.data } });
    const ctx: HandlerContext = { id, method, server: this, reply: (result) => answer({ result }), fail };
    try {
      const problem = requestProblem(method, params, this.told, { madeUpCursors: this.options.madeUpCursors === true });
      if (problem !== undefined) throw this.refuse(method, problem);
      const handler = this.handlers.get(method) ?? this.builtin(method);
      if (handler === undefined) return fail(rpcError(-32601, `Method not found: ${method}`));
      const result = await handler(params, ctx);
      if (result === NO_REPLY) return;
      if (typeof result === 'object' && result !== null && RAW in result) {
        done = true;
        this.answered.add(id);
        return this.send(result[RAW]);
      }
      answer({ result });
    } catch (error) {
      const e = error as Partial<RpcFailure> | null;
      fail(typeof e?.code === 'number' ? (e as RpcFailure) : rpcError(-32603, String(e?.message ?? error)));
    }
  }

  private builtin(method: string): Handler | undefined {
    const o = this.options;
    if (method === 'initialize') {
      return () => ({
        protocolVersion: o.protocolVersion ?? '2025-11-25',
        capabilities: o.capabilities ?? { tools: {}, tasks: FULL_TASK_CAPS },
        serverInfo: { name: 'scripted-server', version: '1.0.0' },
      });
    }
    if (method === 'ping') return () => ({});
    if (method !== 'tools/list') return undefined;
    return (p) => {
      const tools = (o.tools ?? []).map(({ taskSupport, ...rest }) => ({
        inputSchema: { type: 'object' },
        ...rest,
        ...(taskSupport === undefined ? {} : { execution: { taskSupport } }),
      }));
      const start = typeof p.cursor === 'string' ? Number(p.cursor.replace('page-', '')) : 0;
      const end = start + (o.toolsPageSize ?? (tools.length || 1));
      return end < tools.length
        ? { tools: tools.slice(start, end), nextCursor: `page-${end}` }
        : { tools: tools.slice(start) };
    };
  }
}

/** A scripted server and a real SDK Client connected to it. */
export interface ScriptedPair {
  readonly server: ScriptedServer;
  readonly client: SpecClient;
  close(): Promise<void>;
}

/** {@link connectScripted}'s options: the server's, the SDK client's, and a transport wrapper. */
export type ScriptedPairOptions = ScriptedServerOptions & {
  clientOptions?: SpecClientOptions;
  wrap?: (transport: Transport) => Transport;
};

/**
 * Starts a {@link ScriptedServer} and connects a real SDK `Client` (the chosen major) to it.
 * `wrap` wraps the client's transport (e.g. in a FaultTransport).
 */
export async function connectScripted(options: ScriptedPairOptions = {}): Promise<ScriptedPair> {
  const [clientSide, serverSide] = createLinkedPair();
  const server = new ScriptedServer(options);
  await server.connect(serverSide);
  const client = makeClient({ name: 'scripted-spec-client', version: '1.0.0' }, options.clientOptions);
  await client.connect(options.wrap === undefined ? clientSide : options.wrap(clientSide));
  return {
    server,
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** Every tools/call creates a task on the board with `init`; a call that asked for no task is refused ([V14]). */
export function creating(server: ScriptedServer, init: Json = {}): void {
  server.on('tools/call', (params) => {
    if (!isObject(params.task)) throw server.refuse('tools/call', 'a call answered with a task asked for none ([V14])');
    return server.tasks.createResult(init);
  });
}

/** Gaps between consecutive received `method` requests, in clock ms, starting from `start`. */
export function gaps(server: ScriptedServer, method: string, start: number): number[] {
  const times = [start, ...server.received(method).map((entry) => entry.at)];
  return times.slice(1).map((at, i) => at - times[i]!);
}
