/**
 * The fake wire's server (a tiny task board answering plain-object requests) and the wire factory
 * for {@link FakeWire}. Requests carry no JSON-RPC: each answer is a value the wire decodes, or a
 * refusal with a reason. Refusals use codes of their own (404, 409, 405), so a wire that read
 * JSON-RPC codes to classify them would fail the contract. Each request is checked first (a call
 * names its tool, the others their task); one that is not is refused and fails the test
 * (spec/support/violations.ts).
 */
import { FakeWire, type FakeForm } from './fake-wire.js';
import { recordViolation } from '../support/violations.js';
import { FaultQueue } from './faults.js';
import {
  ManualTimers,
  type CancelNotice,
  type FinalPayload,
  type Json,
  type TaskFields,
  type WireDriver,
  type WireFactory,
  type WireOp,
} from './support.js';

/** Why the fake server refuses a request. */
export interface FakeRefusal {
  readonly reason: 'unknown-task' | 'terminal' | 'internal';
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** What the fake server answers: a value for the wire to decode, or a refusal. */
export type FakeAnswer = { readonly value: unknown } | { readonly refusal: FakeRefusal };

/** The wire's side of the connection, as the server sees it. */
export interface FakeConnection {
  push(message: unknown): void;
  closed(): void;
}

type CallPlan = { kind: 'task'; fields: TaskFields & { taskId: string } } | { kind: 'immediate'; result: Json };

const TERMINAL: ReadonlySet<unknown> = new Set(['completed', 'failed', 'cancelled']);

/** What a request of `op` must carry: a tool name (and arguments, if any, as an object), or a task id. */
function requestProblem(op: WireOp, input: Json): string | undefined {
  if (op === 'call') {
    if (typeof input.name !== 'string' || input.name === '') return 'no tool name';
    const args = input.arguments;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      return 'arguments is not an object';
    return undefined;
  }
  return typeof input.taskId === 'string' && input.taskId !== '' ? undefined : 'no taskId';
}

/** A tiny task server for {@link FakeWire}. */
export class FakeTaskServer {
  private readonly tasks = new Map<string, Json>();
  private readonly payloads = new Map<string, FinalPayload>();
  private readonly waiters = new Map<string, Array<() => void>>();
  private readonly watched = new Map<string, number>();
  private readonly answered = new Set<number>();
  /** Faults queued by the driver. */
  readonly faults = new FaultQueue();
  private readonly plans: CallPlan[] = [];
  private connection: FakeConnection | undefined;
  private seq = 0;
  /** Every request received, in order. */
  readonly received: Array<{ readonly op: WireOp; readonly input: Json }> = [];
  /** Requests the wire gave up ([R27]). */
  readonly notices: CancelNotice[] = [];

  constructor(
    readonly form: FakeForm,
    private readonly now: () => number,
  ) {}

  /** Connects the wire. */
  attach(connection: FakeConnection): void {
    this.connection = connection;
  }

  /** Serves one request; the answer may never come (a withheld reply). */
  async receive(requestId: number, op: WireOp, input: Json): Promise<FakeAnswer> {
    this.received.push({ op, input });
    const problem = requestProblem(op, input);
    if (problem !== undefined) {
      // Asserted before anything answers: a refusal the wire sees, and a failure of the test.
      recordViolation(`${op}: ${problem}`);
      this.answered.add(requestId);
      return { refusal: { reason: 'internal', code: 400, message: `fake server: ${problem}` } };
    }
    const answer = await this.answer(op, input);
    this.answered.add(requestId);
    return answer;
  }

  /** The wire gave up request `requestId`. */
  cancelled(requestId: number): void {
    this.notices.push({ open: !this.answered.has(requestId) });
  }

  /** Pushes for `taskId` are wanted (the inline form pushes only these); counted, undone by {@link FakeTaskServer.unwatch}. */
  watch(taskId: string): void {
    this.watched.set(taskId, (this.watched.get(taskId) ?? 0) + 1);
  }

  /** Undoes one {@link FakeTaskServer.watch}; harmless for a task not watched. */
  unwatch(taskId: string): void {
    const left = (this.watched.get(taskId) ?? 0) - 1;
    if (left > 0) this.watched.set(taskId, left);
    else this.watched.delete(taskId);
  }

  /** Snapshots of every task. */
  list(): Json[] {
    return [...this.tasks.keys()].map((taskId) => this.snapshot(taskId));
  }

  // ---- scripting (the driver's verbs) ----

  createOnNextCall(fields: TaskFields = {}): string {
    const taskId = fields.taskId ?? `fake-task-${++this.seq}`;
    this.plans.push({ kind: 'task', fields: { ...fields, taskId } });
    return taskId;
  }

  answerNextCall(result: Json): void {
    this.plans.push({ kind: 'immediate', result });
  }

  setStatus(taskId: string, status: 'working' | 'input_required', statusMessage?: string): void {
    this.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage });
  }

  finish(taskId: string, status: 'completed' | 'failed', payload: FinalPayload, statusMessage?: string): void {
    this.payloads.set(taskId, payload);
    this.update(taskId, statusMessage === undefined ? { status } : { status, statusMessage });
  }

  vanish(taskId: string): void {
    this.tasks.delete(taskId);
  }

  push(taskId: string): void {
    if (this.form === 'inline' && !this.watched.has(taskId)) return;
    this.connection?.push({ task: this.snapshot(taskId) });
  }

  pushMalformed(): void {
    this.connection?.push({ task: { status: 'working' } });
  }

  drop(): void {
    this.connection?.closed();
  }

  // ---- serving ----

  private snapshot(taskId: string): Json {
    const task = this.tasks.get(taskId);
    if (task === undefined) throw new Error(`FakeTaskServer: unknown task ${taskId}`);
    return { ...task };
  }

  private update(taskId: string, patch: Json): void {
    this.tasks.set(taskId, { ...this.snapshot(taskId), lastUpdatedAt: new Date(this.now()).toISOString(), ...patch });
    if (TERMINAL.has(patch.status)) for (const wake of this.waiters.get(taskId)?.splice(0) ?? []) wake();
  }

  private create({ ttl, pollInterval, ...fields }: TaskFields & { taskId: string }): Json {
    const at = new Date(this.now()).toISOString();
    const task: Json = {
      status: 'working',
      createdAt: at,
      lastUpdatedAt: at,
      ttl: 60_000,
      pollInterval: 1_000,
      ...fields,
    };
    if (ttl !== undefined) task.ttl = ttl ?? undefined;
    if (pollInterval !== undefined) task.pollInterval = pollInterval ?? undefined;
    for (const key of Object.keys(task)) if (task[key] === undefined) delete task[key];
    this.tasks.set(fields.taskId, task);
    return this.snapshot(fields.taskId);
  }

  private async answer(op: WireOp, input: Json): Promise<FakeAnswer> {
    const override = this.faults.take(op);
    const taskId = String(input.taskId);
    switch (override?.kind) {
      case 'hold':
        await override.gate;
        break;
      case 'fail':
        return { refusal: { reason: 'internal', ...override.error } };
      case 'malformed':
        return { value: this.malformed(op, taskId) };
      case 'other': {
        if (op === 'call' || (op === 'cancel' && this.form === 'inline')) break;
        const other = `${taskId}-other`;
        if (op === 'payload') return { value: { taskId: other, payload: { kind: 'result', result: { content: [] } } } };
        return {
          value: {
            task: { ...this.snapshot(taskId), taskId: other, ...(op === 'cancel' ? { status: 'cancelled' } : {}) },
          },
        };
      }
    }
    return this.serve(op, input, taskId);
  }

  private malformed(op: WireOp, taskId: string): unknown {
    switch (op) {
      case 'call':
        return { task: { status: 'working' } };
      case 'get':
        return { task: { taskId, status: 'paused' } };
      case 'payload':
        return { taskId, payload: 'nope' };
      case 'cancel':
        return this.form === 'fetch' ? { task: { taskId } } : { cancelled: 'maybe' };
    }
  }

  private async serve(op: WireOp, input: Json, taskId: string): Promise<FakeAnswer> {
    if (op === 'call') {
      const plan = this.plans.shift() ?? { kind: 'task', fields: { taskId: `fake-task-${++this.seq}` } };
      return { value: plan.kind === 'task' ? { task: this.create(plan.fields) } : { result: plan.result } };
    }
    const task = this.tasks.get(taskId);
    if (task === undefined)
      return { refusal: { reason: 'unknown-task', code: 404, message: `no such task: ${taskId}` } };
    const terminal = TERMINAL.has(task.status);
    if (op === 'get') {
      const payload = this.payloads.get(taskId);
      const inline = this.form === 'inline' && terminal && payload !== undefined;
      return { value: inline ? { task: this.snapshot(taskId), payload } : { task: this.snapshot(taskId) } };
    }
    if (op === 'payload') {
      if (this.form === 'inline') return { refusal: { reason: 'internal', code: 405, message: 'no such operation' } };
      if (!terminal)
        await new Promise<void>((resolve) => this.waiters.set(taskId, [...(this.waiters.get(taskId) ?? []), resolve]));
      const payload = this.payloads.get(taskId);
      if (payload === undefined)
        return { refusal: { reason: 'internal', code: 500, message: 'the task has no payload' } };
      return { value: { taskId, payload } };
    }
    if (terminal)
      return this.form === 'fetch'
        ? { refusal: { reason: 'terminal', code: 409, message: 'the task already ended' } }
        : { value: { cancelled: true } };
    this.update(taskId, { status: 'cancelled', statusMessage: 'Cancelled by the client.' });
    return { value: this.form === 'fetch' ? { task: this.snapshot(taskId) } : { cancelled: true } };
  }
}

/** A factory for {@link FakeWire} in the given form. */
export function fakeWire(form: FakeForm): WireFactory {
  return (): Promise<WireDriver> => {
    const timers = new ManualTimers();
    const server = new FakeTaskServer(form, timers.now);
    const wire = new FakeWire(server, form);
    return Promise.resolve({
      wire,
      timers,
      options: (o = {}) => ({ timeoutMs: 10_000, timers, ...o }),
      createOnNextCall: (fields) => server.createOnNextCall(fields),
      answerNextCall: (result) => server.answerNextCall(result),
      calls: () =>
        server.received
          .filter((r) => r.op === 'call')
          .map((r) => ({ name: r.input.name, arguments: r.input.arguments })),
      setStatus: (taskId, status, message) => server.setStatus(taskId, status, message),
      finish: (taskId, status, payload, message) => server.finish(taskId, status, payload, message),
      vanish: (taskId) => server.vanish(taskId),
      push: (taskId) => server.push(taskId),
      pushMalformed: () => server.pushMalformed(),
      ...server.faults.controls(),
      count: (op) => server.received.filter((r) => r.op === op).length,
      cancelNotices: () => server.notices,
      drop: () => {
        server.drop();
        return Promise.resolve();
      },
      close: () => {
        server.drop();
        return Promise.resolve();
      },
    });
  };
}
