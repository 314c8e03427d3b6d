/**
 * The wire factory for the 2026-07-28 `io.modelcontextprotocol/tasks` extension wire: the scripted
 * extension server (spec/support/ext-server) on one end of an in-memory pair, and an SDK v2 client
 * (`@modelcontextprotocol/client`, automatic negotiation, so the modern era) on the other. The wire
 * is the one `resolveWire` picks for that connection, which must be the extension wire.
 *
 * The driver's neutral verbs in this server's terms:
 * - `createOnNextCall` makes the server decide for a task: the next `tools/call` creates one in the
 *   server's task store (it moves only when the driver moves it) and answers the flat
 *   `CreateTaskResult` with the fields asked for (`null` leaves `ttlMs` / `pollIntervalMs` out);
 * - `finish` stores the final payload the terminal `tasks/get` carries ([E3]): a result (`completed`), or
 *   a JSON-RPC error (`failed`). A task "failed with a result" does not exist on this wire ([E15]:
 *   a tool-level failure ends `completed` with the result), so it is stored that way;
 * - `push` sends `notifications/tasks` with the task's full snapshot; the server's own pushes are
 *   off, so only the driver pushes;
 * - `malformedNext` / `otherTaskNext` / `failNext` / `holdNext` are one-shot overrides in front of
 *   the server's own methods (an acknowledgement that is not even an object stands for a malformed
 *   `tasks/cancel` reply, whose content the wire otherwise ignores);
 * - `cancelNotices` are the `notifications/cancelled` the client sent about its requests (those
 *   that end a `subscriptions/listen` are how a subscription ends on this transport, not [R27]
 *   notices, and are left out).
 *
 * The server's own methods check their requests (era, `_meta`, `taskId`); the driver's `tools/call`
 * checks the name and arguments and makes a task only of a call that declared the extension, and
 * a `tasks/result` (absent from this wire) is refused: each refusal fails the test
 * (spec/support/violations.ts).
 *
 * Replies carry `resultType` as the 2026 core requires (a plain tool result, and a completed task's
 * result, say `"complete"`).
 */
import { Client } from '@modelcontextprotocol/client';
import { openPort, resolveWire } from '../../lib/internal.js';
import {
  connectInMemory,
  ErrorCode,
  ExtServer,
  raw,
  rpcError,
  type Handler,
  type Json,
  type RequestId,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import { recordViolation } from '../support/violations.js';
import { FaultQueue, withFaults } from './faults.js';
import {
  ManualTimers,
  type CancelNotice,
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

type CallPlan = { kind: 'task'; fields: TaskFields & { taskId: string } } | { kind: 'immediate'; result: Json };

/** Replies that break the extension's shapes (each one fails the wire's decoding). */
const MALFORMED: Readonly<Record<WireOp, (params: Json, id: RequestId) => unknown>> = {
  call: () => ({ resultType: 'task', status: 'working' }),
  get: (p) => ({
    resultType: 'complete',
    taskId: p.taskId,
    status: 'paused',
    createdAt: '',
    lastUpdatedAt: '',
    ttlMs: null,
  }),
  payload: () => ({ content: 'not a list' }),
  cancel: (_p, id) => raw({ jsonrpc: '2.0', id, result: 42 }),
};

/** A factory for the extension wire over an SDK v2 client on the modern era. */
export function scriptedExt(): WireFactory {
  return async (): Promise<WireDriver> => {
    const timers = new ManualTimers();
    let nextTaskId = '';
    const server = new ExtServer({ now: timers.now, notifications: 'off', taskIds: () => nextTaskId });
    const store = server.tasks;
    const builtins = builtinMethods(server);
    const notices: CancelNotice[] = [];
    const answered = (id: unknown): boolean =>
      server.sent.some((s) => s.message.id === id && s.message.method === undefined);
    const listens = (): Set<unknown> => new Set(server.received('subscriptions/listen').map((e) => e.id));
    server.onReceive = (entry) => {
      if (entry.method !== 'notifications/cancelled') return;
      const id = entry.params.requestId;
      if (!listens().has(id)) notices.push({ open: !answered(id) });
    };

    const faults = new FaultQueue();
    const plans: CallPlan[] = [];
    let seq = 0;

    const scripted = (op: WireOp, normal: Handler): Handler =>
      withFaults(faults, op, normal, {
        malformed: (params, ctx) => MALFORMED[op](params, ctx.id),
        other: (params) => {
          const snapshot = store.detailed(String(params.taskId));
          return { resultType: 'complete', ...snapshot, taskId: `${snapshot.taskId}-other` };
        },
        fail: (error) => rpcError(error.code, error.message, error.data),
      });

    /** Refuses a request the driver did not expect: recorded (the test fails) and answered with `code`. */
    const refuse = (method: string, why: string, code: number = ErrorCode.InvalidParams): Error => {
      recordViolation(`${method}: ${why}`);
      return rpcError(code, `scripted server: ${why}`);
    };
    const checkCall = (params: Json): void => {
      if (typeof params.name !== 'string' || params.name === '') throw refuse('tools/call', 'no tool name');
      if (
        params.arguments !== undefined &&
        (typeof params.arguments !== 'object' || params.arguments === null || Array.isArray(params.arguments))
      ) {
        throw refuse('tools/call', 'arguments is not an object');
      }
    };

    // tools/call: the server decides ([E2]), here as the driver planned it.
    server.on(
      'tools/call',
      scripted('call', (params, ctx) => {
        checkCall(params);
        const plan = plans.shift() ?? { kind: 'task', fields: { taskId: `wire-task-${++seq}` } };
        if (plan.kind === 'immediate') return { resultType: 'complete', ...plan.result };
        // The extension makes a task only of a request that declared it ([E2]).
        if (!ctx.declared)
          throw refuse('tools/call', 'the driver planned a task, the call did not declare the extension');
        const { taskId, ttl, pollInterval, statusMessage, createdAt, lastUpdatedAt } = plan.fields;
        nextTaskId = taskId;
        const task: Json = {
          ...store.create({
            advance: 'manual',
            ...(statusMessage === undefined ? {} : { statusMessage }),
            ...(typeof ttl === 'number' ? { ttlMs: ttl } : {}),
            ...(typeof pollInterval === 'number' ? { pollIntervalMs: pollInterval } : {}),
          }),
        };
        if (ttl === null) delete task.ttlMs;
        if (pollInterval === null) delete task.pollIntervalMs;
        if (createdAt !== undefined) task.createdAt = createdAt;
        if (lastUpdatedAt !== undefined) task.lastUpdatedAt = lastUpdatedAt;
        return { resultType: 'task', ...task };
      }),
    );
    for (const op of ['get', 'cancel'] as const) {
      const normal = builtins[METHODS[op]];
      if (normal === undefined) throw new Error(`the extension server has no ${METHODS[op]} handler`);
      server.on(METHODS[op], scripted(op, normal));
    }
    // No tasks/result on this wire: a request for it is a bug of the wire, refused as unknown.
    server.on('tasks/result', () => {
      throw refuse('tasks/result', 'the extension has no tasks/result', ErrorCode.MethodNotFound);
    });

    const connection = await connectInMemory(server);
    const client = new Client(
      { name: 'wire-contract', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(connection.clientTransport);
    if (client.getProtocolEra() !== 'modern')
      throw new Error(`expected a modern session, got ${String(client.getProtocolEra())}`);
    const wire = resolveWire(openPort(client));
    if (wire.kind !== 'io.modelcontextprotocol/tasks')
      throw new Error(`resolveWire picked the ${wire.kind} wire, not the extension`);
    let dropped = false;
    let closed = false;

    return {
      wire,
      timers,
      options: (o = {}) => ({ timeoutMs: 10_000, timers, ...o }),
      createOnNextCall: (fields = {}) => {
        const taskId = fields.taskId ?? `wire-task-${++seq}`;
        plans.push({ kind: 'task', fields: { ...fields, taskId } });
        return taskId;
      },
      answerNextCall: (result) => {
        plans.push({ kind: 'immediate', result });
      },
      calls: () => server.params('tools/call').map((p) => ({ name: p.name, arguments: p.arguments })),
      setStatus: (taskId, status, statusMessage) => {
        store.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage });
      },
      finish: (taskId, status, payload, statusMessage) => {
        const message = statusMessage === undefined ? {} : { statusMessage };
        if (payload.kind === 'error') {
          store.update(taskId, {
            status,
            error: rpcError(payload.error.code, payload.error.message, payload.error.data),
            ...message,
          });
        } else {
          // [E15]: a tool-level failure is a completed task whose result says isError.
          store.update(taskId, { status: 'completed', result: payload.result, ...message });
        }
      },
      vanish: (taskId) => store.delete(taskId),
      push: (taskId) => server.notify('notifications/tasks', store.detailed(taskId)),
      pushMalformed: () => server.notify('notifications/tasks', { status: 'working' }),
      ...faults.controls(),
      count: (op) => server.count(METHODS[op]),
      cancelNotices: () => notices,
      drop: async () => {
        if (dropped) return;
        dropped = true;
        await connection.close();
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await client.close();
        if (!dropped) await connection.close();
      },
    };
  };
}
