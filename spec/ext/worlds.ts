/**
 * Two "worlds" for the wire-parameterised behaviour suite (behaviour.spec.ts): a scripted server
 * of each task wire, a `TaskClient` made by `TaskClient.connect(transport, { sdk: 'v2' })` on it
 * (SDK v2 in automatic negotiation: the server decides the era, and so the wire), one ManualClock
 * for both ends, and server-side controls in neutral terms:
 *
 * - `2025-11-25`: the scripted 2025 server (spec/support/scripted-server.ts), reached on the legacy
 *   era; input is a side-channel `elicitation/create` tagged with the task ([R28]-[R31]);
 * - `io.modelcontextprotocol/tasks`: the scripted extension server (spec/support/ext-server), on the
 *   modern era; input rides on `tasks/get` and is answered with `tasks/update` ([E3]-[E5]).
 *
 * Both serve a task tool `job` (a task that moves only when the test moves it; cancelled at once
 * by `tasks/cancel`) and a plain tool `plain`. Neither server pushes on its own; `push` does. Both
 * check each request before they answer (the 2025 server with spec/support/request-checks.ts and
 * the tool calls it expects, the extension server by its era and method checks); a request the
 * 2025 server refuses fails the test (spec/support/violations.ts).
 */
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { TaskClient, type InputDelivery, type TaskClientConnectOptions, type WireKind } from '../../lib/index.js';
import { ManualClock } from '../helpers.js';
import {
  connectInMemory,
  elicitation,
  ExtServer,
  immediateTool,
  rpcError,
  taskTool,
  textResult,
  type Json,
} from '../support/ext-server/index.js';
import { ScriptedServer } from '../support/scripted-server.js';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** One wire's server and client, and the server-side controls the suite needs. */
export interface World {
  readonly wire: WireKind;
  /** How input reaches a callback on this wire. */
  readonly delivery: InputDelivery;
  readonly tasks: TaskClient;
  readonly clock: ManualClock;
  /** Moves a task to a running status. */
  setStatus(taskId: string, status: 'working' | 'input_required', statusMessage?: string): void;
  /** Ends a task with a tool result. */
  complete(taskId: string, result: Json, statusMessage?: string): void;
  /** Ends a task `failed` with a JSON-RPC error. */
  fail(taskId: string, error: { code: number; message: string }, statusMessage?: string): void;
  /** The server cancels the task on its own. */
  cancelOnServer(taskId: string, statusMessage?: string): void;
  /** Sends the task's current snapshot as a status notification. */
  push(taskId: string): void;
  /**
   * Asks the task's user one elicitation question (the task waits for input meanwhile); `meta`
   * goes into the question's `_meta` (e.g. the server's trace context).
   */
  ask(taskId: string, message: string, meta?: Json): void;
  /** The answers the server received for `taskId`, in order. */
  answers(taskId: string): Json[];
  /** The task's status on the server. */
  status(taskId: string): string;
  /** `tasks/get` and `tasks/cancel` requests the server received. */
  count(method: 'tasks/get' | 'tasks/cancel'): number;
  /** The params of every `method` request the server received, in order, `_meta` included. */
  params(method: string): Json[];
  /** Closes everything (idempotent). */
  close(): Promise<void>;
}

/** Makes a world; the client options are `TaskClient.connect`'s (the shared clock is added). */
export type WorldFactory = (options?: TaskClientConnectOptions) => Promise<World>;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The 2025-11-25 world. */
export const world2025: WorldFactory = async (options = {}) => {
  const clock = new ManualClock();
  const server = new ScriptedServer({
    now: clock.now,
    tools: [{ name: 'job', taskSupport: 'optional' }, { name: 'plain' }],
  });
  const board = server.tasks;
  // The library calls the optional `job` as a task (D17) and the plain tool plainly ([R7]); the
  // server answers nothing else.
  server.on('tools/call', (params) => {
    if (params.name === 'plain') return textResult('plain answer');
    if (params.name !== 'job')
      throw server.refuse('tools/call', `no tool ${JSON.stringify(params.name)} in this world`);
    if (typeof params.task !== 'object' || params.task === null)
      throw server.refuse('tools/call', 'job was called without a task (D17)');
    return board.createResult({ pollInterval: 1_000, ttl: 3_600_000 });
  });
  const answers = new Map<string, Json[]>();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const tasks = await TaskClient.connect(clientSide, { sdk: 'v2', clock, ...options });
  let closed = false;
  return {
    wire: '2025-11-25',
    delivery: 'request',
    tasks,
    clock,
    setStatus: (taskId, status, statusMessage) =>
      void board.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage }),
    complete: (taskId, result, statusMessage) =>
      void board.finish(taskId, 'completed', { result }, statusMessage === undefined ? {} : { statusMessage }),
    fail: (taskId, error, statusMessage) =>
      void board.finish(
        taskId,
        'failed',
        { error: rpcError(error.code, error.message) },
        statusMessage === undefined ? {} : { statusMessage },
      ),
    cancelOnServer: (taskId, statusMessage) =>
      void board.update(taskId, { status: 'cancelled', ...(statusMessage === undefined ? {} : { statusMessage }) }),
    push: (taskId) => server.notify('notifications/tasks/status', board.get(taskId)),
    ask: (taskId, message, meta = {}) => {
      board.update(taskId, { status: 'input_required' });
      const request = {
        ...elicitation(message, { confirm: { type: 'boolean' } }).params,
        _meta: { ...meta, [RELATED_TASK]: { taskId } },
      };
      void server.request('elicitation/create', request).then((reply) => {
        if (reply.result !== undefined) answers.set(taskId, [...(answers.get(taskId) ?? []), reply.result as Json]);
        if (!TERMINAL.has(String(board.get(taskId).status))) board.update(taskId, { status: 'working' });
      });
    },
    answers: (taskId) => answers.get(taskId) ?? [],
    status: (taskId) => String(board.get(taskId).status),
    count: (method) => server.count(method),
    params: (method) => server.params(method),
    close: async () => {
      if (closed) return;
      closed = true;
      await tasks.close();
      await server.close();
    },
  };
};

/** The tasks extension world. */
export const worldExt: WorldFactory = async (options = {}) => {
  const clock = new ManualClock();
  const server = new ExtServer({
    now: clock.now,
    notifications: 'off',
    pollIntervalMs: 1_000,
    ttlMs: 3_600_000,
    tools: [taskTool('job', { advance: 'manual' }), immediateTool('plain', textResult('plain answer'))],
  });
  const store = server.tasks;
  let keys = 0;
  const { clientTransport } = await connectInMemory(server);
  const tasks = await TaskClient.connect(clientTransport, { sdk: 'v2', clock, ...options });
  let closed = false;
  return {
    wire: 'io.modelcontextprotocol/tasks',
    delivery: 'task-update',
    tasks,
    clock,
    setStatus: (taskId, status, statusMessage) =>
      void store.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage }),
    complete: (taskId, result, statusMessage) => void store.complete(taskId, result, statusMessage),
    fail: (taskId, error, statusMessage) => void store.fail(taskId, rpcError(error.code, error.message), statusMessage),
    cancelOnServer: (taskId, statusMessage) => void store.cancel(taskId, statusMessage),
    push: (taskId) => server.notify('notifications/tasks', store.detailed(taskId)),
    ask: (taskId, message, meta) => {
      const question = elicitation(message, { confirm: { type: 'boolean' } });
      void store.requestInput(taskId, {
        [`q${++keys}`]: meta === undefined ? question : { ...question, params: { ...question.params, _meta: meta } },
      });
    },
    answers: (taskId) => Object.values(store.inspect(taskId).answers),
    status: (taskId) => store.detailed(taskId).status,
    count: (method) => server.count(method),
    params: (method) => server.params(method),
    close: async () => {
      if (closed) return;
      closed = true;
      await tasks.close();
    },
  };
};

/** Both worlds, by wire. */
export const WORLDS: ReadonlyArray<readonly [WireKind, WorldFactory]> = [
  ['2025-11-25', world2025],
  ['io.modelcontextprotocol/tasks', worldExt],
];
