/**
 * An example MCP server for the 2026-07-28 tasks extension, `io.modelcontextprotocol/tasks`
 * (SEP-2663), written on a raw transport: newline-delimited JSON-RPC on stdin and stdout, no SDK.
 * It is one file on purpose, so that the server side of the extension reads top to bottom:
 *
 *     npx tsx examples/ext-server.ts                     # speaks JSON-RPC on stdin/stdout
 *     npm run demo -- --ext                              # the library's demo against it
 *     npm run cli -- call analyze id=7 --stdio "npx tsx examples/ext-server.ts"
 *
 * `EXT_STEP_MS` sets the time between two steps of a task (default 500 ms).
 *
 * Tools:
 * - `analyze { id?: number }`: a task. It reports its steps in `statusMessage`, asks one question
 *   (how detailed the report should be) through `inputRequests`, and completes with a report that
 *   reflects the answer.
 * - `flaky { reason?: string }`: a task that ends with a tool error: status `completed`, result
 *   `isError: true` ([E15]: `failed` is kept for JSON-RPC errors).
 * - `echo { text }`: a plain tool, answered at once (never a task).
 *
 * What a client sees, in the order of a call's life:
 * 1. `server/discover` names protocol 2026-07-28 and advertises the extension under
 *    `capabilities.extensions`. Every request carries its protocol version and the client's
 *    capabilities in `_meta` (there is no `initialize`; one is answered with -32022).
 * 2. `tools/call` becomes a task only when that very request declared the extension in its
 *    `_meta` capabilities ([E1], [E2]); the answer is then a flat `CreateTaskResult`
 *    (`resultType: "task"`). A request that did not declare it gets the plain result at once.
 * 3. `tasks/get` returns the task, with its `inputRequests` while it waits for input, its `result`
 *    once completed, or its `error` once failed ([E3]). There is no `tasks/result` or `tasks/list`.
 * 4. `tasks/update` answers input requests by key ([E5]); `tasks/cancel` only acknowledges ([E6]).
 * 5. `subscriptions/listen` with `notifications.taskIds` streams `notifications/tasks` for those
 *    tasks ([E18]) until the client sends `notifications/cancelled` for the listen request.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const PROTOCOL_VERSION = '2026-07-28';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;
const SERVER_INFO = { name: 'ext-example-server', version: '1.0.0' };

type Json = Record<string, unknown>;
type RequestId = string | number;
type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A JSON-RPC error to answer with. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const invalidParams = (message: string): RpcError => new RpcError(-32602, message);
/** [E11]: a request that needs the extension did not declare it. */
const undeclared = (): RpcError =>
  new RpcError(-32021, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });

/** One task, as the server keeps it. */
interface TaskState {
  readonly taskId: string;
  status: Status;
  statusMessage: string | undefined;
  readonly createdAt: string;
  lastUpdatedAt: string;
  /** Set by status: the tool result (`completed`) or the JSON-RPC error (`failed`). */
  result?: Json;
  error?: Json;
  /** Outstanding input requests by key; answered ones are removed ([E4]: keys are never reused). */
  readonly inputRequests: Map<string, Json>;
  /** Who waits for each outstanding key's answer. */
  readonly waiting: Map<string, (answer: Json) => void>;
  /** Aborted when the task is cancelled: the running tool stops at its next step. */
  readonly stop: AbortController;
}

/** What a tool run can do with its task. */
interface TaskContext {
  /** Waits `ms`, or rejects once the task is cancelled. */
  sleep(ms: number): Promise<void>;
  /** Sets the status message (the task stays `working`). */
  say(message: string): void;
  /** Asks one question through `inputRequests` and waits for its answer (`tasks/update`). */
  ask(key: string, request: Json, message: string): Promise<Json>;
}

/** A tool: its `tools/list` entry, and what it does. */
interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Json;
  /** A plain tool answers at once. */
  readonly call?: (args: Json) => Json;
  /** A task tool runs in the background; the result it returns completes the task. */
  readonly task?: { readonly statusMessage: (args: Json) => string; run(args: Json, task: TaskContext): Promise<Json> };
  /** What a client that did not declare the extension gets instead of a task (at once). */
  readonly undeclared?: (args: Json) => Json;
}

const text = (value: string, extra: Json = {}): Json => ({ content: [{ type: 'text', text: value }], ...extra });

/** The example's tools. */
function exampleTools(stepMs: number): Tool[] {
  const report = (id: number, depth: string): Json =>
    text(`analysis of dataset ${id}: ${depth} report ready`, { structuredContent: { id, depth } });
  const idOf = (args: Json): number => (typeof args.id === 'number' ? args.id : 1);
  return [
    {
      name: 'analyze',
      description: 'Analyses a dataset as a task; asks how detailed the report should be.',
      inputSchema: { type: 'object', properties: { id: { type: 'number', description: 'The dataset to analyse' } } },
      task: {
        statusMessage: (args) => `queued analysis of dataset ${idOf(args)}`,
        async run(args, task) {
          const id = idOf(args);
          await task.sleep(stepMs);
          task.say(`loading dataset ${id}`);
          await task.sleep(stepMs);
          task.say('computing statistics');
          await task.sleep(stepMs);
          const answer = await task.ask(
            'depth',
            {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: 'How detailed should the report be?',
                requestedSchema: {
                  type: 'object',
                  properties: {
                    depth: {
                      type: 'string',
                      title: 'Report depth',
                      oneOf: [
                        { const: 'summary', title: 'Summary (one paragraph)' },
                        { const: 'full', title: 'Full report' },
                      ],
                    },
                  },
                  required: ['depth'],
                },
              },
            },
            'waiting for your choice of report depth',
          );
          const content = answer.content as Json | undefined;
          const depth = answer.action === 'accept' && typeof content?.depth === 'string' ? content.depth : 'summary';
          task.say('writing the report');
          await task.sleep(stepMs);
          return report(id, depth);
        },
      },
      undeclared: (args) => report(idOf(args), 'summary'),
    },
    {
      name: 'flaky',
      description: 'A task that ends with a tool error (completed, isError: true).',
      inputSchema: { type: 'object', properties: { reason: { type: 'string' } } },
      task: {
        statusMessage: () => 'trying',
        async run(args, task) {
          await task.sleep(stepMs);
          return text(typeof args.reason === 'string' ? args.reason : 'disk full', { isError: true });
        },
      },
      undeclared: (args) => text(typeof args.reason === 'string' ? args.reason : 'disk full', { isError: true }),
    },
    {
      name: 'echo',
      description: 'Echoes its text at once.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      call: (args) => text(typeof args.text === 'string' ? args.text : ''),
    },
  ];
}

/** Options of {@link ExtExampleServer}. */
export interface ExtExampleOptions {
  /** Time between two steps of a task, in ms. @defaultValue 500 */
  readonly stepMs?: number;
  /** How long a task stays readable after its creation, in ms. @defaultValue 10 minutes */
  readonly ttlMs?: number;
}

/** The server: feed it received messages with {@link ExtExampleServer.receive}; it answers through `send`. */
export class ExtExampleServer {
  private readonly tools: Map<string, Tool>;
  private readonly tasks = new Map<string, TaskState>();
  /** Open `subscriptions/listen` requests: the listen request id and the task ids it follows. */
  private readonly subscriptions = new Map<RequestId, Set<string>>();
  private readonly stepMs: number;
  private readonly ttlMs: number;

  constructor(
    private readonly send: (message: Json) => void,
    options: ExtExampleOptions = {},
  ) {
    this.stepMs = options.stepMs ?? 500;
    this.ttlMs = options.ttlMs ?? 600_000;
    this.tools = new Map(exampleTools(this.stepMs).map((tool) => [tool.name, tool]));
  }

  /** Handles one received JSON-RPC message. */
  receive(message: Json): void {
    const { id, method } = message;
    const params = isObject(message.params) ? message.params : {};
    if (typeof method !== 'string') return; // a response: this server never sends requests
    if (id === undefined) return this.notification(method, params);
    if (typeof id !== 'string' && typeof id !== 'number') return;
    try {
      const result = this.request(id, method, params);
      if (result !== undefined) this.send({ jsonrpc: '2.0', id, result });
    } catch (error) {
      const e =
        error instanceof RpcError
          ? error
          : new RpcError(-32603, error instanceof Error ? error.message : String(error));
      this.send({
        jsonrpc: '2.0',
        id,
        error: { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) },
      });
    }
  }

  /** Answers a request; `undefined` leaves it open (a subscription). */
  private request(id: RequestId, method: string, params: Json): Json | undefined {
    if (method === 'initialize') {
      // No legacy era here: name the versions this server speaks (-32022).
      throw new RpcError(-32022, `This server speaks only MCP ${PROTOCOL_VERSION} (no initialize)`, {
        supported: [PROTOCOL_VERSION],
        requested: params.protocolVersion,
      });
    }
    // Every modern request carries its version and the client's capabilities in `_meta`.
    const meta = isObject(params._meta) ? params._meta : {};
    const version = meta[META.protocolVersion];
    if (version === undefined) throw invalidParams(`Missing _meta["${META.protocolVersion}"]`);
    if (version !== PROTOCOL_VERSION)
      throw new RpcError(-32022, 'Unsupported protocol version', { supported: [PROTOCOL_VERSION], requested: version });
    const capabilities = meta[META.clientCapabilities];
    if (!isObject(capabilities)) throw invalidParams(`Missing _meta["${META.clientCapabilities}"]`);
    // [E1]: the extension counts only when this very request declares it.
    const declared = isObject(capabilities.extensions) && isObject(capabilities.extensions[TASKS_EXTENSION]);
    const done = (result: Json): Json => ({ resultType: 'complete', ...result });

    switch (method) {
      case 'server/discover':
        return done({
          supportedVersions: [PROTOCOL_VERSION],
          capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
          ttlMs: 0,
          cacheScope: 'private',
          _meta: { [META.serverInfo]: SERVER_INFO },
        });
      case 'ping':
        return done({});
      case 'tools/list':
        return done({
          tools: [...this.tools.values()].map(({ name, description, inputSchema }) => ({
            name,
            description,
            inputSchema,
          })),
          ttlMs: 0,
          cacheScope: 'private',
        });
      case 'tools/call':
        return this.callTool(params, declared);
      case 'tasks/get': {
        if (!declared) throw undeclared();
        return done(this.detailed(this.task(params)));
      }
      case 'tasks/update': {
        if (!declared) throw undeclared();
        const task = this.task(params);
        if (!isObject(params.inputResponses)) throw invalidParams('params.inputResponses must be an object');
        // [E5]: answer what is outstanding; keys never issued or already answered are ignored.
        for (const [key, answer] of Object.entries(params.inputResponses)) {
          const resume = task.waiting.get(key);
          if (resume === undefined || !isObject(answer)) continue;
          task.waiting.delete(key);
          task.inputRequests.delete(key);
          resume(answer);
        }
        return done({});
      }
      case 'tasks/cancel': {
        if (!declared) throw undeclared();
        // [E6]: an acknowledgement, also for a task that already ended. This server stops at once.
        const task = this.task(params);
        if (!isTerminal(task.status)) {
          task.stop.abort();
          this.update(task, { status: 'cancelled', statusMessage: "cancelled at the client's request" });
        }
        return done({});
      }
      case 'subscriptions/listen': {
        const wanted = isObject(params.notifications) ? params.notifications.taskIds : undefined;
        if (wanted !== undefined && !declared) throw undeclared();
        const agreed = (Array.isArray(wanted) ? wanted : []).filter(
          (taskId): taskId is string => typeof taskId === 'string' && this.tasks.has(taskId),
        );
        this.subscriptions.set(id, new Set(agreed));
        // The acknowledgement comes first; the request itself stays open until the client cancels it.
        this.send({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: { [META.subscriptionId]: id }, notifications: { taskIds: agreed } },
        });
        return undefined;
      }
      default:
        throw new RpcError(-32601, `Method not found: ${method}`);
    }
  }

  private notification(method: string, params: Json): void {
    // On stdio, a client ends a subscription by cancelling its listen request.
    if (
      method === 'notifications/cancelled' &&
      (typeof params.requestId === 'string' || typeof params.requestId === 'number')
    ) {
      this.subscriptions.delete(params.requestId);
    }
  }

  /** `tools/call`: a plain result, or a task when the request declared the extension ([E2]). */
  private callTool(params: Json, declared: boolean): Json {
    const tool = typeof params.name === 'string' ? this.tools.get(params.name) : undefined;
    if (tool === undefined) throw invalidParams(`Unknown tool: ${String(params.name)}`);
    const args = isObject(params.arguments) ? params.arguments : {};
    if (tool.task === undefined) return { resultType: 'complete', ...tool.call?.(args) };
    if (!declared) return { resultType: 'complete', ...tool.undeclared?.(args) };
    const task = this.create(tool.task.statusMessage(args));
    void this.run(task, tool.task.run(args, this.context(task)));
    // [E9]: the task is readable before its id goes out. The CreateTaskResult is flat.
    const { result: _r, error: _e, inputRequests: _i, ...created } = this.detailed(task);
    return { resultType: 'task', ...created };
  }

  private create(statusMessage: string): TaskState {
    const now = new Date().toISOString();
    const task: TaskState = {
      taskId: randomUUID(),
      status: 'working',
      statusMessage,
      createdAt: now,
      lastUpdatedAt: now,
      inputRequests: new Map(),
      waiting: new Map(),
      stop: new AbortController(),
    };
    this.tasks.set(task.taskId, task);
    // [E13]: after its ttl the task may go; this server forgets it then.
    setTimeout(() => this.tasks.delete(task.taskId), this.ttlMs).unref();
    return task;
  }

  /** Settles a task with what its run returned (or threw). */
  private async run(task: TaskState, running: Promise<Json>): Promise<void> {
    try {
      const result = await running;
      if (!isTerminal(task.status))
        this.update(task, {
          status: 'completed',
          statusMessage: 'done',
          result: { resultType: 'complete', ...result },
        });
    } catch (error) {
      if (task.stop.signal.aborted || isTerminal(task.status)) return; // cancelled
      // A JSON-RPC error ends the task `failed`, with the error inline ([E15]).
      this.update(task, {
        status: 'failed',
        statusMessage: 'internal error',
        error: { code: -32603, message: error instanceof Error ? error.message : String(error) },
      });
    }
  }

  private context(task: TaskState): TaskContext {
    const signal = task.stop.signal;
    return {
      sleep: (ms) =>
        new Promise<void>((resolve, reject) => {
          if (signal.aborted) return reject(new Error('cancelled'));
          const timer = setTimeout(resolve, ms);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              reject(new Error('cancelled'));
            },
            { once: true },
          );
        }),
      say: (statusMessage) => {
        if (!signal.aborted) this.update(task, { status: 'working', statusMessage });
      },
      ask: (key, request, statusMessage) =>
        new Promise<Json>((resolve, reject) => {
          if (signal.aborted) return reject(new Error('cancelled'));
          signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
          task.inputRequests.set(key, request);
          task.waiting.set(key, (answer) => {
            if (task.inputRequests.size === 0)
              this.update(task, { status: 'working', statusMessage: 'answer received' });
            resolve(answer);
          });
          this.update(task, { status: 'input_required', statusMessage });
        }),
    };
  }

  /** Changes a task, stamps `lastUpdatedAt`, and tells the subscriptions that follow it. */
  private update(
    task: TaskState,
    change: Partial<Pick<TaskState, 'status' | 'statusMessage' | 'result' | 'error'>>,
  ): void {
    Object.assign(task, change);
    task.lastUpdatedAt = new Date().toISOString();
    for (const [subscriptionId, taskIds] of this.subscriptions) {
      if (!taskIds.has(task.taskId)) continue;
      this.send({
        jsonrpc: '2.0',
        method: 'notifications/tasks',
        params: { ...this.detailed(task), _meta: { [META.subscriptionId]: subscriptionId } },
      });
    }
  }

  /** The task named by `params.taskId`; -32602 for an unknown (or expired) one. */
  private task(params: Json): TaskState {
    const task = typeof params.taskId === 'string' ? this.tasks.get(params.taskId) : undefined;
    if (task === undefined) throw invalidParams('Unknown or expired task');
    return task;
  }

  /** The `DetailedTask` of `tasks/get` and `notifications/tasks`: the task, plus what its status carries. */
  private detailed(task: TaskState): Json {
    return {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: this.ttlMs,
      pollIntervalMs: Math.max(50, Math.round(this.stepMs / 2)),
      ...(task.status === 'input_required' ? { inputRequests: Object.fromEntries(task.inputRequests) } : {}),
      ...(task.status === 'completed' ? { result: task.result } : {}),
      ...(task.status === 'failed' ? { error: task.error } : {}),
    };
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTerminal(status: Status): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Serves over stdio: one JSON-RPC message per line each way; stops when stdin ends. */
function serveStdio(options: ExtExampleOptions): void {
  const server = new ExtExampleServer((message) => process.stdout.write(`${JSON.stringify(message)}\n`), options);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })}\n`,
      );
      return;
    }
    if (isObject(message)) server.receive(message);
  });
  lines.on('close', () => process.exit(0));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  serveStdio({ stepMs: Number(process.env.EXT_STEP_MS ?? 500) });
}
