/**
 * Wire factories for the MCP 2025-11-25 wire: the scripted 2025-11-25 server
 * (spec/support/scripted-server.ts) and a real SDK client on it, SDK v1 (`@modelcontextprotocol/sdk`)
 * or SDK v2 (`@modelcontextprotocol/client`, legacy era, the default negotiation). The wire is the one
 * `resolveWire` picks for the connection, which must be {@link Wire2025}.
 *
 * The scripted server keeps its usual task board; the driver puts one-shot overrides in front of
 * `tools/call` and `tasks/get|result|cancel`, and reads [R27] notices off the server's log. The
 * server asserts every request before it answers (spec/support/request-checks.ts), and a planned
 * task only answers a call that asked for one: a refusal fails the test (spec/support/violations.ts).
 */
import { Client as V2Client, InMemoryTransport as V2InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { openPort, resolveWire, Wire2025, type SdkMajor } from '../../lib/internal.js';
import { rpcError, ScriptedServer, type Handler, type RequestId } from '../support/scripted-server.js';
import { FaultQueue, withFaults } from './faults.js';
import {
  ManualTimers,
  type CancelNotice,
  type Json,
  type TaskFields,
  type WireDriver,
  type WireFactory,
  type WireOp,
} from './support.js';

const METHODS: Readonly<Record<WireOp, string>> = {
  call: 'tools/call',
  get: 'tasks/get',
  payload: 'tasks/result',
  cancel: 'tasks/cancel',
};

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

type CallPlan = { kind: 'task'; init: Json } | { kind: 'immediate'; result: Json };

/** Replies that break the 2025-11-25 shapes (each one fails the wire's decoder). */
const MALFORMED: Readonly<Record<WireOp, (params: Json) => Json>> = {
  call: () => ({ task: { status: 'working' } }),
  get: (p) => ({ taskId: p.taskId, status: 'paused', createdAt: '', lastUpdatedAt: '', ttl: null }),
  payload: () => ({ content: 'not a list' }),
  cancel: (p) => ({ taskId: p.taskId, status: 42 }),
};

/** The scripted server's task fields from the driver's neutral ones (`null` leaves a key out). */
function taskInit(fields: TaskFields, taskId: string): Json {
  const { ttl, pollInterval, ...rest } = fields;
  const init: Json = { ...rest, taskId };
  if (ttl !== undefined) init.ttl = ttl ?? undefined;
  if (pollInterval !== undefined) init.pollInterval = pollInterval ?? undefined;
  return init;
}

/** Connects a client of the given SDK major to `server` over that SDK's in-memory transport. */
async function connectClient(sdk: SdkMajor, server: ScriptedServer): Promise<V1Client | V2Client> {
  const info = { name: 'wire-contract', version: '1.0.0' };
  if (sdk === 'v1') {
    const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new V1Client(info, { capabilities: {} });
    await client.connect(clientSide);
    return client;
  }
  // SDK v2 in its default (legacy) negotiation: an `initialize` handshake, 2025-11-25 answered.
  const [clientSide, serverSide] = V2InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new V2Client(info, { capabilities: {} });
  await client.connect(clientSide);
  if (client.getProtocolEra() !== 'legacy')
    throw new Error(`expected a legacy session, got ${String(client.getProtocolEra())}`);
  return client;
}

/** A factory for the 2025-11-25 wire over an SDK `sdk` client. */
export function scripted2025(sdk: SdkMajor): WireFactory {
  return async (): Promise<WireDriver> => {
    const timers = new ManualTimers();
    const server = new ScriptedServer({ now: timers.now });
    const board = server.tasks;
    const notices: CancelNotice[] = [];
    server.onReceive = (entry) => {
      if (entry.method === 'notifications/cancelled')
        notices.push({ open: !server.answered.has(entry.params.requestId as RequestId) });
    };

    const faults = new FaultQueue();
    const plans: CallPlan[] = [];
    let seq = 0;
    const other = (p: Json): Json => ({ ...board.get(String(p.taskId)), taskId: `${String(p.taskId)}-other` });
    const OTHER: Readonly<Record<Exclude<WireOp, 'call'>, (params: Json) => Json>> = {
      get: other,
      cancel: (p) => ({ ...other(p), status: 'cancelled' }),
      payload: (p) => ({ _meta: { [RELATED_TASK]: { taskId: `${String(p.taskId)}-other` } }, content: [] }),
    };

    const scripted = (op: WireOp, normal: Handler): Handler =>
      withFaults(faults, op, normal, {
        malformed: (params) => MALFORMED[op](params),
        other: (params, ctx) => (op === 'call' ? normal(params, ctx) : OTHER[op](params)),
        fail: (error) => rpcError(error.code, error.message, error.data),
      });

    server.on(
      'tools/call',
      scripted('call', (params) => {
        const plan = plans.shift() ?? { kind: 'task', init: {} };
        if (plan.kind === 'immediate') return plan.result;
        // A task is the answer only to a call that asked for one ([V14]).
        if (typeof params.task !== 'object' || params.task === null)
          throw server.refuse('tools/call', 'the driver planned a task, the call asked for none ([V14])');
        return board.createResult(plan.init);
      }),
    );
    for (const op of ['get', 'payload', 'cancel'] as const) {
      const normal = board.handlers[METHODS[op]];
      if (normal === undefined) throw new Error(`the scripted server has no ${METHODS[op]} handler`);
      server.on(METHODS[op], scripted(op, normal));
    }

    const client = await connectClient(sdk, server);
    const wire = resolveWire(openPort(client));
    if (!(wire instanceof Wire2025)) throw new Error('resolveWire did not pick the 2025-11-25 wire');
    let closed = false;

    return {
      wire,
      timers,
      options: (o = {}) => ({ timeoutMs: 10_000, timers, ...o }),
      createOnNextCall: (fields = {}) => {
        const taskId = fields.taskId ?? `wire-task-${++seq}`;
        plans.push({ kind: 'task', init: taskInit(fields, taskId) });
        return taskId;
      },
      answerNextCall: (result) => {
        plans.push({ kind: 'immediate', result });
      },
      calls: () => server.params('tools/call').map((p) => ({ name: p.name, arguments: p.arguments })),
      setStatus: (taskId, status, statusMessage) => {
        board.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage });
      },
      finish: (taskId, status, payload, statusMessage) => {
        const stored =
          payload.kind === 'result'
            ? { result: payload.result }
            : { error: rpcError(payload.error.code, payload.error.message, payload.error.data) };
        board.finish(taskId, status, stored, statusMessage === undefined ? {} : { statusMessage });
      },
      vanish: (taskId) => board.delete(taskId),
      push: (taskId) => server.notify('notifications/tasks/status', board.get(taskId)),
      pushMalformed: () => server.notify('notifications/tasks/status', { status: 'working' }),
      ...faults.controls(),
      count: (op) => server.count(METHODS[op]),
      cancelNotices: () => notices,
      drop: () => server.close(),
      close: async () => {
        if (closed) return;
        closed = true;
        await client.close();
        await server.close();
      },
    };
  };
}
