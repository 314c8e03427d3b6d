/**
 * Deterministic fuzzing of what a server sends, through the public API, on both wires (the
 * 2025-11-25 wire over SDK v1 and SDK v2's legacy era, and the 2026-07-28 tasks extension over SDK
 * v2's modern era).
 *
 * A scripted server answers `tools/call`, `tasks/get`, `tasks/result`, `tasks/cancel`,
 * `tasks/update` and `subscriptions/listen` and sends status notifications; each reply starts as a
 * VALID reply (the scripted servers' own task stores) and is then, with some probability, mutated
 * by a seeded PRNG (mulberry32): a field dropped, set to null or to the wrong type, a huge, negative
 * or NaN-ish number, a very long string, an unknown status, extra fields, another task id, a
 * non-object result, a JSON-RPC error of odd code/message/data types, a duplicate, late, withheld or
 * unsolicited reply, a mutated or unsolicited notification. Each case drives `callToolAsTask`,
 * iterates the handle and awaits `result()`, sometimes with `cancel()` or a `timeoutMs`, all on an
 * injected clock, and checks the project's rule for bad input from a server:
 * - the call, the iterator, `result()` and `cancel()` settle (a deadline bounds the whole call,
 *   remote cancel included: `timeoutMs + cancelGraceMs`; otherwise a generous fake-time bound);
 * - every rejection and every `error` event is one of the library's error classes (lib/errors.ts);
 * - no unhandled rejection or uncaught exception happens;
 * - every snapshot yielded keeps the public `Task` type;
 * - a valid final payload that reached a still-running handle is not lost (the result resolves).
 *
 * A failing case prints its seed and the trace of what the server sent. Replay one with
 * `FUZZ_SEED=<seed> FUZZ_WIRE=2025|ext npx vitest run spec/wire/fuzz.spec.ts`; `FUZZ_CASES=<n>`
 * runs more seeds and `FUZZ_FIRST=<n>` starts elsewhere; `FUZZ_SUMMARY=1` prints how the cases
 * ended, `FUZZ_VERBOSE=1` (with `FUZZ_SEED`) the trace of a passing case. What it found is pinned down by plain
 * tests: a terminal notification the reads never confirm (spec/ext/terminal.spec.ts), and a
 * deadline while `close({ cancelRunning: true })` waits (spec/v2025/hostile.spec.ts,
 * spec/ext/cancel.spec.ts).
 */
import { Client as V2Client, InMemoryTransport as V2InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lib from '../../lib/index.js';
import { TaskClient, type Task, type TaskHandle } from '../../lib/index.js';
import { flush, ManualClock } from '../helpers.js';
import {
  connectInMemory,
  elicitation,
  ExtServer,
  NO_REPLY as EXT_NO_REPLY,
  raw as extRaw,
  taskTool,
  type Handler as ExtHandler,
  type HandlerContext as ExtContext,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import {
  NO_REPLY,
  raw,
  rpcError,
  ScriptedServer,
  type Handler,
  type HandlerContext,
  type Json,
} from '../support/scripted-server.js';
import { mutator, REPLY_FAULTS, shortJson, type Mutations, type ReplyFault } from '../support/mutate.js';
import { Rng } from '../support/seeded.js';
import { takeViolations } from '../support/violations.js';

const CASES = Number(process.env.FUZZ_CASES ?? 1_000);
/**
 * Seeds beyond the default range that found a library bug (the plain tests that cite them are in
 * spec/v2025/hostile.spec.ts and spec/ext/cancel.spec.ts); they always run too. Within the range,
 * ext seeds 311, 761 and 1862 found the one of spec/ext/terminal.spec.ts. A seed means what it
 * does for this version of the fuzzer: changing how the PRNG is drawn (or {@link MUTATIONS}, the
 * tables spec/support/mutate.ts draws from) changes the cases.
 */
const REGRESSION_SEEDS: Readonly<Record<'2025' | 'ext', readonly number[]>> = { '2025': [5110], ext: [2178] };
const ONLY_SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const ONLY_WIRE = process.env.FUZZ_WIRE;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';

const REQUEST_TIMEOUT_MS = 5_000;
const CANCEL_GRACE_MS = 2_000;
/** Fake-time bound of a case without a deadline: everything must have settled by then. */
const NO_DEADLINE_BOUND_MS = 15 * 60_000;
const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
const RESULT_TEXT = 'the valid result';
/** Another task the server holds (running, never the client's): replies may name it instead. */
const DECOY = 'decoy';
const DECOY_ENDS_MS = 30_000;

/** The library's error classes: every rejection and every `error` event must be one of them. */
const ERROR_CLASSES: readonly unknown[] = (Object.values(lib) as unknown[]).filter(
  (value) => typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error,
);
const typed = (error: unknown): boolean =>
  lib.isTaskError(error) && ERROR_CLASSES.some((klass) => error.constructor === klass);

// ---------------------------------------------------------------------------------------------
// Mutations

const LONG = 'x'.repeat(200_000);
const ODD_NUMBERS: readonly unknown[] = [
  1e308,
  -1,
  -1e12,
  0,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 60,
  'NaN',
  '1e400',
  '-Infinity',
];
const ODD_STATUSES: readonly unknown[] = ['paused', '', 'COMPLETED', 'completed ', 'unknown', 7, null];
const ODD_CODES: readonly unknown[] = [
  'boom',
  1.5,
  null,
  -32602,
  -32603,
  -32601,
  -32600,
  -32001,
  -32021,
  -32022,
  0,
  1e20,
  -32000,
  {},
];
const ODD_MESSAGES: readonly unknown[] = ['', 42, null, {}, [], LONG, 'Task not found'];
const ODD_DATA: readonly unknown[] = [undefined, null, 'x', 42, [], { taskId: 'other-task' }, { supported: 5 }, LONG];

/** This fuzzer's tables (spec/support/mutate.ts): its seeds' cases are drawn from them, in this order. */
const MUTATIONS: Mutations = {
  depth: 4,
  replaced: 0.08,
  long: LONG,
  emoji: 50_000,
  numbers: ODD_NUMBERS,
  statuses: ODD_STATUSES,
  extras: [1, 'x', null, { a: 1 }, [1], LONG],
  codes: ODD_CODES,
  messages: ODD_MESSAGES,
  data: ODD_DATA,
};
const { mutateValue, oddError } = mutator(MUTATIONS);

/** How one reply is sent. */
type Fault = 'none' | ReplyFault;

function pickFault(rng: Rng, rate: number): Fault {
  if (!rng.chance(rate)) return 'none';
  return rng.pick(REPLY_FAULTS);
}

const short = (value: unknown): string => shortJson(value, 300);

// ---------------------------------------------------------------------------------------------
// One case

/** What the server's task does, and when; and what the caller does. */
interface Plan {
  /** The task ends at this `tasks/get` (0: ended before the first read). */
  readonly endAtGet: number;
  readonly outcome: 'completed' | 'failed-result' | 'failed-error' | 'cancelled' | 'never';
  /** The task asks for input at this `tasks/get` (before it ends). */
  readonly inputAtGet: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly cancelAtMs: number | undefined;
  /** `dispose()` instead of `cancel()`. */
  readonly dispose: boolean;
  /** `close({ cancelRunning })` at this time, with the task maybe still running. */
  readonly closeAtMs: number | undefined;
  readonly cancelRunning: boolean;
  /** The server drops the connection at this time (only with a deadline: handles wait for a reconnection). */
  readonly dropAtMs: number | undefined;
  /** Extension only: the client has a `reconnect` factory (then a drop needs no deadline). */
  readonly reconnect: boolean;
  /** `detach()` the handle at this time, and `resume()` it from its reference. */
  readonly resumeAtMs: number | undefined;
  /** The call's `signal` aborts at this time. */
  readonly abortAtMs: number | undefined;
  readonly progress: boolean;
  readonly faultRate: number;
  readonly notifyRate: number;
  /** Notifications the server sends on its own timers, at these times. */
  readonly pushesAtMs: readonly number[];
}

function makePlan(rng: Rng, ext: boolean): Plan {
  const endAtGet = rng.int(5);
  const outcome = rng.pick([
    'completed',
    'completed',
    'completed',
    'failed-result',
    'failed-error',
    'cancelled',
    'never',
  ] as const);
  const drop = rng.chance(0.08);
  const reconnect = ext && rng.chance(0.5);
  const deadline = rng.chance(0.35) || outcome === 'never' || (drop && !reconnect);
  const stop = rng.chance(0.25);
  return {
    endAtGet,
    outcome,
    inputAtGet: rng.chance(0.3) ? rng.int(endAtGet + 1) : undefined,
    // A task that never ends needs a deadline to settle.
    timeoutMs: deadline ? 1_000 + rng.int(30_000) : undefined,
    cancelAtMs: stop ? rng.int(10_000) : undefined,
    dispose: stop && rng.chance(0.4),
    closeAtMs: rng.chance(0.1) ? rng.int(10_000) : undefined,
    cancelRunning: rng.chance(0.5),
    abortAtMs: rng.chance(0.1) ? rng.int(10_000) : undefined,
    dropAtMs: drop ? rng.int(10_000) : undefined,
    reconnect,
    resumeAtMs: rng.chance(0.08) ? rng.int(10_000) : undefined,
    progress: rng.chance(0.3),
    faultRate: rng.pick([0.1, 0.25, 0.4, 0.6]),
    notifyRate: rng.pick([0, 0.2, 0.5]),
    pushesAtMs: Array.from({ length: rng.int(6) }, () => rng.int(20_000)),
  };
}

/** What one case observed, to check the invariants. */
interface Observed {
  trace: string[];
  /** Set when a valid final payload was sent while `result()` had not settled. */
  validPayloadWhileOpen: boolean;
  /** Set when the server lied about the task's status with a well-formed snapshot. */
  lied: boolean;
  resultSettled: boolean;
}

/** The side of a case that differs per wire: the server and the connected TaskClient. */
interface World {
  readonly tasks: TaskClient;
  /** The server drops the connection. */
  drop(): Promise<void>;
  close(): Promise<void>;
}

type Tracked<T> = { settled: boolean; value?: T; error?: unknown; rejected: boolean; at?: number };
function track<T>(promise: Promise<T>, now?: () => number): Tracked<T> {
  const state: Tracked<T> = { settled: false, rejected: false };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
      state.at = now?.();
    },
    (error: unknown) => {
      state.settled = true;
      state.rejected = true;
      state.error = error;
      state.at = now?.();
    },
  );
  return state;
}

/** What a world gives the shared fault layer. */
interface FaultKit {
  readonly rng: Rng;
  readonly plan: Plan;
  readonly seen: Observed;
  readonly clock: ManualClock;
  /** A handler return value that sends `message` verbatim. */
  raw(message: unknown): unknown;
  readonly noReply: unknown;
  /** Sends any message to the client now. */
  send(message: Json): void;
  /** True when `value` (a reply) carries the valid final payload of a completed task. */
  bearsPayload(method: string, value: unknown): boolean;
  /** Called before every reply: the world may push a notification. */
  before(): void;
}

interface FaultContext {
  readonly id: string | number;
  reply(result: unknown): void;
}

let unsolicitedIds = 900_000;

/** The fault layer in front of one method: the valid reply of `normal`, then maybe a fault. */
function faulty<P, C extends FaultContext>(
  kit: FaultKit,
  method: string,
  normal: (params: P, ctx: C) => unknown,
): (params: P, ctx: C) => Promise<unknown> {
  const { rng, plan, seen, clock } = kit;
  return async (params, ctx) => {
    kit.before();
    const fault = pickFault(rng, plan.faultRate);
    if (fault === 'error') {
      const error = oddError(rng);
      seen.trace.push(`${method}#${ctx.id} error: ${short(error)}`);
      return kit.raw({ jsonrpc: '2.0', id: ctx.id, error });
    }
    let valid: unknown;
    try {
      valid = await normal(params, ctx);
    } catch (error) {
      seen.trace.push(`${method}#${ctx.id} server error: ${short(error)} ${String((error as Error).message)}`);
      throw error;
    }
    if (valid === kit.noReply) {
      seen.trace.push(`${method}#${ctx.id} (no reply: a stream)`);
      return valid;
    }
    const note = (what: string, value: unknown, isValid: boolean): void => {
      seen.trace.push(`${method}#${ctx.id} ${what}: ${short(value)}`);
      if (isValid && kit.bearsPayload(method, value) && !seen.resultSettled) seen.validPayloadWhileOpen = true;
    };
    switch (fault) {
      case 'none':
        note('valid', valid, true);
        return valid;
      case 'mutate': {
        const mutated = mutateValue(valid, rng, [DECOY]);
        note(`mutated (${mutated.label})`, mutated.value, false);
        return kit.raw({ jsonrpc: '2.0', id: ctx.id, result: mutated.value });
      }
      case 'duplicate': {
        note('valid, then a duplicate', valid, true);
        ctx.reply(valid);
        const dup = rng.chance(0.5) ? mutateValue(valid, rng, [DECOY]).value : valid;
        return kit.raw({ jsonrpc: '2.0', id: ctx.id, result: dup });
      }
      case 'late': {
        const delay = rng.int(20_000);
        const mutated = rng.chance(0.5) ? mutateValue(valid, rng, [DECOY]) : undefined;
        clock.setTimeout(() => {
          note(`late by ${delay} ms${mutated ? ` (${mutated.label})` : ''}`, mutated?.value ?? valid, !mutated);
          ctx.reply(mutated === undefined ? valid : mutated.value);
        }, delay);
        return kit.noReply;
      }
      case 'withheld':
        seen.trace.push(`${method}#${ctx.id} withheld`);
        return kit.noReply;
      case 'unsolicited': {
        const id = rng.pick<string | number | null>([
          ++unsolicitedIds,
          `srv-${unsolicitedIds}`,
          null,
          typeof ctx.id === 'number' ? String(ctx.id) : ctx.id + 1000,
        ]);
        const body = rng.chance(0.5) ? { result: valid } : { error: oddError(rng) };
        seen.trace.push(`unsolicited reply id ${JSON.stringify(id)}: ${short(body)}`);
        kit.send({ jsonrpc: '2.0', id, ...body });
        note('valid', valid, true);
        return valid;
      }
      case 'envelope': {
        const message = rng.pick<Json>([
          { jsonrpc: '2.0', id: ctx.id, result: valid, error: oddError(rng) },
          { jsonrpc: '2.0', id: ctx.id },
          { jsonrpc: '1.0', id: ctx.id, result: valid },
          { id: ctx.id, result: valid },
          { jsonrpc: '2.0', id: ctx.id, result: valid, method: 'tasks/get' },
          { jsonrpc: '2.0', id: typeof ctx.id === 'number' ? String(ctx.id) : 1e9, result: valid },
        ]);
        seen.trace.push(`${method}#${ctx.id} odd envelope: ${short(message)}`);
        return kit.raw(message);
      }
    }
  };
}

/** A well-formed snapshot that lies about the status (the task's real status is something else). */
function lie(snapshot: Json, rng: Rng, seen: Observed): Json {
  const status = rng.pick(['working', 'input_required', 'completed', 'failed', 'cancelled']);
  if (status !== snapshot.status) seen.lied = true;
  return { ...snapshot, status };
}

/** The notification (valid, lying, mutated, about another task) a server pushes. */
function pushParams(snapshot: Json, rng: Rng, seen: Observed): { params: Json; label: string; valid: boolean } {
  const roll = rng.float();
  if (roll < 0.15) return { params: lie(snapshot, rng, seen), label: 'lying', valid: false };
  if (roll < 0.25)
    return { params: { ...snapshot, taskId: rng.pick([DECOY, 'task-999']) }, label: 'another task', valid: false };
  if (roll < 0.4) return { params: snapshot, label: 'valid', valid: true };
  const mutated = mutateValue(snapshot, rng, [DECOY]);
  const params =
    typeof mutated.value === 'object' && mutated.value !== null && !Array.isArray(mutated.value)
      ? (mutated.value as Json)
      : { value: mutated.value };
  return { params, label: mutated.label, valid: false };
}

const RELATED = 'io.modelcontextprotocol/related-task';

/** A 2025-11-25 world: the scripted server with faults in front of every method. */
async function world2025(seed: number, rng: Rng, plan: Plan, clock: ManualClock, seen: Observed): Promise<World> {
  const server = new ScriptedServer({ tools: [{ name: 'job', taskSupport: 'required' }], now: clock.now });
  const board = server.tasks;
  board.create({ taskId: DECOY, ttl: 600_000, pollInterval: 1_000 });
  // The decoy ends too (a client that follows it, told its id by a mutated reply, settles).
  clock.setTimeout(() => board.finish(DECOY, 'completed', { result: { content: [] } }), DECOY_ENDS_MS);
  let taskId: string | undefined;
  let progressToken: unknown;
  let gets = 0;
  let inputIssued = false;

  const result = { content: [{ type: 'text', text: RESULT_TEXT }] };
  const live = (): boolean => {
    if (taskId === undefined) return false;
    const status = board.get(taskId).status as string;
    return status === 'working' || status === 'input_required';
  };
  const end = (): void => {
    if (!live()) return;
    const id = taskId!;
    if (plan.outcome === 'completed') board.finish(id, 'completed', { result });
    else if (plan.outcome === 'failed-result')
      board.finish(id, 'failed', { result: { ...result, isError: true } }, { statusMessage: 'tool failed' });
    else if (plan.outcome === 'failed-error')
      board.finish(id, 'failed', { error: rpcError(-32603, 'the tool broke', { why: 'x' }) });
    else if (plan.outcome === 'cancelled') board.update(id, { status: 'cancelled' });
  };
  const push = (): void => {
    if (taskId === undefined) return;
    if (plan.progress && rng.chance(0.3)) {
      const params = rng.chance(0.5)
        ? { progressToken, progress: rng.pick<unknown>([1, -1, 'x', null, 1e308]), total: rng.pick<unknown>([2, 'y']) }
        : mutateValue({ progressToken, progress: 1, total: 2, message: 'half' }, rng, ['task-999']).value;
      seen.trace.push(`notify notifications/progress: ${short(params)}`);
      server.send({ jsonrpc: '2.0', method: 'notifications/progress', params });
      return;
    }
    const { params, label } = pushParams(board.get(taskId), rng, seen);
    seen.trace.push(`notify notifications/tasks/status (${label}): ${short(params)}`);
    server.notify('notifications/tasks/status', params);
  };
  /** 2025-11-25 input: a related-task elicitation/create while the task is input_required. */
  const askInput = (): void => {
    const id = taskId!;
    board.update(id, { status: 'input_required' });
    const valid: Json = {
      message: 'Go on?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
      _meta: { [RELATED]: { taskId: id } },
    };
    const params = rng.chance(plan.faultRate) ? mutateValue(valid, rng, [DECOY]).value : valid;
    seen.trace.push(`request elicitation/create: ${short(params)}`);
    void server
      .request('elicitation/create', (typeof params === 'object' && params !== null ? params : {}) as Json)
      .then((reply) => {
        seen.trace.push(`elicitation/create answered: ${short(reply)}`);
        if (live()) board.update(id, { status: 'working' });
      });
  };

  const kit: FaultKit = {
    rng,
    plan,
    seen,
    clock,
    raw,
    noReply: NO_REPLY,
    send: (message) => server.send(message),
    bearsPayload: (method) => method === 'tasks/result' && plan.outcome === 'completed',
    before: () => {
      if (rng.chance(plan.notifyRate)) push();
    },
  };
  const on = (method: string, normal: Handler): void => {
    server.on(method, faulty<Json, HandlerContext>(kit, method, normal));
  };

  on('tools/call', (params) => {
    progressToken = (params._meta as Json | undefined)?.progressToken;
    const created = board.createResult({ ttl: 600_000, pollInterval: 1_000 });
    taskId = (created.task as Json).taskId as string;
    if (plan.endAtGet === 0 && plan.inputAtGet === undefined) end();
    return { task: board.get(taskId) };
  });
  on('tasks/get', (params, ctx) => {
    gets += 1;
    if (live()) {
      if (plan.inputAtGet !== undefined && !inputIssued && gets >= plan.inputAtGet) {
        inputIssued = true;
        askInput();
      } else if (gets >= plan.endAtGet && plan.outcome !== 'never' && board.get(taskId!).status === 'working') end();
    }
    return board.handlers['tasks/get']!(params, ctx);
  });
  on('tasks/result', board.handlers['tasks/result']!);
  on('tasks/cancel', board.handlers['tasks/cancel']!);
  // tools/list (read to learn the tool's taskSupport) on a PRNG of its own: the other draws, and so
  // what each seed means for them, stay as they were.
  const listRng = new Rng(seed * 104_729 + 7);
  const listKit: FaultKit = { ...kit, rng: listRng, before: () => undefined };
  server.on(
    'tools/list',
    faulty<Json, HandlerContext>(listKit, 'tools/list', () => ({
      tools: [
        { name: 'job', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
        { name: 'other', inputSchema: { type: 'object' } },
      ],
    })),
  );
  for (const at of plan.pushesAtMs) clock.setTimeout(push, at);

  const sdk = seed % 2 === 0 ? 'v1' : 'v2';
  const info = { name: 'fuzz', version: '1.0.0' };
  const capabilities = { elicitation: {} };
  let client: V1Client | V2Client;
  if (sdk === 'v1') {
    const [clientSide, serverSide] = V1InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new V1Client(info, { capabilities });
    await client.connect(clientSide);
  } else {
    const [clientSide, serverSide] = V2InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new V2Client(info, { capabilities });
    await client.connect(clientSide);
  }
  seen.trace.push(`2025-11-25 wire over SDK ${sdk}`);
  const tasks = new TaskClient(client, {
    clock,
    random: () => 0,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    cancelGraceMs: CANCEL_GRACE_MS,
    onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
  });
  return { tasks, drop: () => server.close(), close: () => server.close() };
}

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** An extension world: the scripted extension server with faults in front of every method. */
async function worldExt(_seed: number, rng: Rng, plan: Plan, clock: ManualClock, seen: Observed): Promise<World> {
  let nextId = 0;
  const server = new ExtServer({
    now: clock.now,
    notifications: 'ack-only',
    pollIntervalMs: 1_000,
    ttlMs: 600_000,
    taskIds: () => (nextId++ === 0 ? DECOY : `task-${nextId}`),
    tools: [taskTool('job', { advance: 'manual' })],
  });
  const store = server.tasks;
  store.create({ advance: 'manual' });
  clock.setTimeout(() => store.complete(DECOY, { content: [] }), DECOY_ENDS_MS);
  const builtins = builtinMethods(server);
  let taskId: string | undefined;
  let gets = 0;
  let listenId: string | number | undefined;
  let inputIssued = false;

  const result = { content: [{ type: 'text', text: RESULT_TEXT }] };
  const live = (): boolean => {
    if (taskId === undefined || !store.has(taskId)) return false;
    const status = store.detailed(taskId).status;
    return status === 'working' || status === 'input_required';
  };
  const end = (): void => {
    if (!live()) return;
    const id = taskId!;
    if (plan.outcome === 'completed') store.complete(id, result);
    else if (plan.outcome === 'failed-result')
      store.update(id, { status: 'completed', result: { ...result, isError: true } });
    else if (plan.outcome === 'failed-error') store.fail(id, rpcError(-32603, 'the tool broke', { why: 'x' }));
    else if (plan.outcome === 'cancelled') store.cancel(id);
  };
  const carriesPayload = (value: unknown): boolean =>
    plan.outcome === 'completed' &&
    typeof value === 'object' &&
    value !== null &&
    (value as Json).status === 'completed' &&
    (value as Json).result !== undefined;
  const push = (): void => {
    if (taskId === undefined || listenId === undefined || !store.has(taskId)) return;
    const { params, label, valid } = pushParams({ ...store.detailed(taskId) }, rng, seen);
    const tagged = rng.chance(0.9) ? { ...params, _meta: { [SUBSCRIPTION_ID]: listenId } } : params;
    seen.trace.push(`notify notifications/tasks (${label}): ${short(tagged)}`);
    if (valid && carriesPayload(params) && !seen.resultSettled) seen.validPayloadWhileOpen = true;
    server.notify('notifications/tasks', tagged);
  };

  const kit: FaultKit = {
    rng,
    plan,
    seen,
    clock,
    raw: extRaw,
    noReply: EXT_NO_REPLY,
    send: (message) => sendAll(message),
    bearsPayload: (method, value) => method === 'tasks/get' && carriesPayload(value),
    before: () => {
      if (rng.chance(plan.notifyRate)) push();
    },
  };
  const links = new Set<ExtContext['link']>();
  const sendAll = (message: Json): void => {
    for (const link of links) link.send(message);
  };
  const on = (method: string, normal: ExtHandler): void => {
    const layered = faulty<Json, ExtContext>(kit, method, normal);
    server.on(method, (params, ctx) => {
      links.add(ctx.link);
      return layered(params, ctx);
    });
  };

  on('tools/call', async (params, ctx) => {
    const created = (await builtins['tools/call']!(params, ctx)) as Json;
    taskId = created.taskId as string | undefined;
    if (plan.endAtGet === 0 && plan.inputAtGet === undefined) {
      end();
      if (taskId !== undefined && store.has(taskId)) return { resultType: 'task', ...strip(store.detailed(taskId)) };
    }
    return created;
  });
  on('tasks/get', (params, ctx) => {
    gets += 1;
    if (live()) {
      if (plan.inputAtGet !== undefined && !inputIssued && gets >= plan.inputAtGet) {
        inputIssued = true;
        store.requestInput(taskId!, { confirm: elicitation('Go on?', { confirm: { type: 'boolean' } }) });
      } else if (gets >= plan.endAtGet && plan.outcome !== 'never' && store.detailed(taskId!).status === 'working')
        end();
    }
    return builtins['tasks/get']!(params, ctx);
  });
  on('tasks/update', builtins['tasks/update']!);
  on('tasks/cancel', builtins['tasks/cancel']!);
  on('subscriptions/listen', (params, ctx) => {
    listenId = ctx.id;
    const shape = rng.chance(plan.faultRate) ? rng.int(4) : -1;
    if (shape === 0) {
      // An acknowledgement of the wrong shape, then nothing.
      const ack = mutateValue({ notifications: { taskIds: [taskId] } }, rng, ['task-999']).value;
      seen.trace.push(`subscriptions/listen#${ctx.id} odd ack: ${short(ack)}`);
      ctx.link.send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { ...(typeof ack === 'object' && ack !== null ? ack : {}), _meta: { [SUBSCRIPTION_ID]: ctx.id } },
      });
      return EXT_NO_REPLY;
    }
    if (shape === 1) {
      seen.trace.push(`subscriptions/listen#${ctx.id} ends at once`);
      return { resultType: 'complete' };
    }
    if (shape === 2) {
      // Acknowledged, then an acknowledgement for a subscription that does not exist.
      void builtins['subscriptions/listen']!(params, ctx);
      ctx.link.send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: ['task-999'] }, _meta: { [SUBSCRIPTION_ID]: 'nope' } },
      });
      seen.trace.push(`subscriptions/listen#${ctx.id} acknowledged twice`);
      return EXT_NO_REPLY;
    }
    return builtins['subscriptions/listen']!(params, ctx);
  });
  for (const at of plan.pushesAtMs) clock.setTimeout(push, at);

  const connection = await connectInMemory(server);
  const { clientTransport } = connection;
  seen.trace.push('extension wire over SDK v2');
  let current = connection;
  const tasks = await TaskClient.connect(clientTransport, {
    sdk: 'v2',
    clock,
    // Extension cases that drop the connection reconnect to the same server half the time.
    ...(plan.reconnect
      ? {
          reconnect: async () => {
            current = await connectInMemory(server);
            const client = new V2Client(
              { name: 'fuzz', version: '1.0.0' },
              { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
            );
            await client.connect(current.clientTransport);
            seen.trace.push('reconnected');
            return client;
          },
        }
      : {}),
    random: () => 0,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    cancelGraceMs: CANCEL_GRACE_MS,
    onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
  });
  return { tasks, drop: () => current.close(), close: async () => {} };
}

/** A CreateTaskResult's task fields (no payload) from a detailed snapshot. */
function strip(task: Json): Json {
  const { result: _r, error: _e, inputRequests: _i, ...rest } = task;
  return rest;
}

/** Problems with one yielded snapshot (the public `Task` type). */
function snapshotProblem(task: Task): string | undefined {
  if (typeof task !== 'object' || task === null) return `snapshot is ${typeof task}`;
  if (typeof task.taskId !== 'string' || task.taskId === '') return `taskId ${short(task.taskId)}`;
  if (!STATUSES.has(task.status)) return `status ${short(task.status)}`;
  if (typeof task.createdAt !== 'string' || typeof task.lastUpdatedAt !== 'string') return 'times not strings';
  if (task.ttl !== null && !(Number.isFinite(task.ttl) && task.ttl >= 0)) return `ttl ${short(task.ttl)}`;
  if (
    'pollInterval' in task &&
    task.pollInterval !== undefined &&
    !(Number.isFinite(task.pollInterval) && task.pollInterval >= 0)
  )
    return `pollInterval ${short(task.pollInterval)}`;
  if ('statusMessage' in task && task.statusMessage !== undefined && typeof task.statusMessage !== 'string')
    return `statusMessage ${short(task.statusMessage)}`;
  return undefined;
}

const processErrors: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  processErrors.push(reason);
};

function explain(error: unknown): string {
  if (error instanceof Error) return `${error.constructor.name}: ${error.message.slice(0, 200)}`;
  return `${typeof error} ${short(error)}`;
}

/** Runs one case; returns its problems (empty when the invariants hold), its trace and a summary. */
async function runCase(
  wire: '2025' | 'ext',
  seed: number,
): Promise<{ problems: string[]; trace: string[]; summary: string }> {
  const rng = new Rng(seed * 7919 + (wire === 'ext' ? 1 : 0));
  const plan = makePlan(rng, wire === 'ext');
  const clock = new ManualClock();
  const seen: Observed = { trace: [], validPayloadWhileOpen: false, lied: false, resultSettled: false };
  seen.trace.push(`plan ${JSON.stringify(plan)}`);
  const problems: string[] = [];
  processErrors.splice(0);
  const world = await (wire === '2025' ? world2025 : worldExt)(seed, rng, plan, clock, seen);
  const reported: unknown[] = [];
  world.tasks.on('error', (error) => reported.push(error));
  const start = clock.now();
  const progress: unknown[] = [];
  const aborter = new AbortController();
  const abortAt = plan.abortAtMs === undefined ? undefined : start + plan.abortAtMs;
  const dropAt = plan.dropAtMs === undefined ? undefined : start + plan.dropAtMs;
  let dropped = false;

  const call = track(
    world.tasks.callToolAsTask(
      'job',
      { n: seed },
      {
        ...(plan.timeoutMs === undefined ? {} : { timeoutMs: plan.timeoutMs }),
        ...(plan.progress ? { onProgress: (p: unknown) => void progress.push(p) } : {}),
        ...(plan.abortAtMs === undefined ? {} : { signal: aborter.signal }),
      },
    ),
    clock.now,
  );
  let result: Tracked<unknown> | undefined;
  let iteration: Tracked<Task[]> | undefined;
  let stop: Tracked<unknown> | undefined;
  let closing: Tracked<unknown> | undefined;
  let stoppedAt = 0;
  let closedAt = 0;
  let handle: TaskHandle | undefined;
  const bound = start + (plan.timeoutMs === undefined ? NO_DEADLINE_BOUND_MS : plan.timeoutMs + CANCEL_GRACE_MS);
  const stopAt = plan.cancelAtMs === undefined ? undefined : start + plan.cancelAtMs;
  const closeAt = plan.closeAtMs === undefined ? undefined : start + plan.closeAtMs;

  /** What the detached handle left behind: it must settle too. */
  const detached: Array<Tracked<unknown>> = [];
  const follow = (own: TaskHandle): void => {
    handle = own;
    result = track(own.result(), clock.now);
    const iterate = async (): Promise<Task[]> => {
      const out: Task[] = [];
      for await (const task of handle!) {
        const problem = snapshotProblem(task);
        if (problem !== undefined) problems.push(`iterator yielded a bad snapshot: ${problem}: ${short(task)}`);
        out.push(task);
      }
      return out;
    };
    iteration = track(iterate(), clock.now);
  };
  const attach = (): void => {
    if (handle === undefined && call.value !== undefined) follow(call.value);
  };
  const resumeAt = plan.resumeAtMs === undefined ? undefined : start + plan.resumeAtMs;
  let resumed = false;

  const done = (): boolean =>
    call.settled &&
    (handle === undefined || (result!.settled && iteration!.settled)) &&
    (stop === undefined || stop.settled) &&
    (closing === undefined || closing.settled);

  while (clock.now() < bound) {
    attach();
    if (result !== undefined) seen.resultSettled = result.settled;
    if (handle !== undefined && stopAt !== undefined && stop === undefined && clock.now() >= stopAt) {
      seen.trace.push(`${plan.dispose ? 'dispose' : 'cancel'}() at +${clock.now() - start} ms`);
      stoppedAt = clock.now();
      stop = track<unknown>(plan.dispose ? handle.dispose() : handle.cancel(), clock.now);
    }
    if (abortAt !== undefined && !aborter.signal.aborted && clock.now() >= abortAt) {
      seen.trace.push(`abort at +${clock.now() - start} ms`);
      aborter.abort();
    }
    if (resumeAt !== undefined && !resumed && handle !== undefined && clock.now() >= resumeAt) {
      resumed = true;
      if (!handle.settled && handle.kind === 'task') {
        seen.trace.push(`detach() and resume() at +${clock.now() - start} ms`);
        detached.push(result!, iteration!);
        const reference = handle.detach();
        const left = plan.timeoutMs === undefined ? undefined : start + plan.timeoutMs - clock.now();
        try {
          if (reference !== undefined)
            follow(world.tasks.resume(reference, left === undefined ? {} : { timeoutMs: Math.max(1, left) }));
        } catch (error) {
          if (!typed(error)) problems.push(`resume() threw ${explain(error)}`);
        }
      }
    }
    if (dropAt !== undefined && !dropped && clock.now() >= dropAt) {
      seen.trace.push(`the server drops the connection at +${clock.now() - start} ms`);
      dropped = true;
      await world.drop();
    }
    if (closeAt !== undefined && closing === undefined && clock.now() >= closeAt) {
      seen.trace.push(`close({ cancelRunning: ${plan.cancelRunning} }) at +${clock.now() - start} ms`);
      closedAt = clock.now();
      closing = track(world.tasks.close({ cancelRunning: plan.cancelRunning }), clock.now);
    }
    if (
      done() &&
      (stopAt === undefined || stop !== undefined || handle === undefined) &&
      (abortAt === undefined || aborter.signal.aborted) &&
      (dropAt === undefined || dropped)
    ) {
      if (closeAt === undefined || closing !== undefined) break;
    }
    await clock.advance(Math.min(250, bound - clock.now()));
  }
  attach();
  await flush();
  if (result !== undefined) seen.resultSettled = result.settled;
  const at = `+${clock.now() - start} ms`;
  const pendingAtBound = {
    call: !call.settled,
    result: result !== undefined && !result.settled,
    iteration: iteration !== undefined && !iteration.settled,
  };
  const stopPendingAtBound = stop !== undefined && !stop.settled;
  // cancel() has no bound of its own (each attempt times out and is retried per `retry`): it only
  // has to settle in the end.
  if (stop !== undefined && !plan.dispose) for (let i = 0; i < 600 && !stop.settled; i += 1) await clock.advance(1_000);
  // close() has its own bound (closeTimeoutMs), which may end after the call's.
  const closeBound = closedAt + REQUEST_TIMEOUT_MS;
  while (closing !== undefined && !closing.settled && clock.now() < closeBound)
    await clock.advance(Math.min(250, closeBound - clock.now()));

  if (pendingAtBound.call) problems.push(`callToolAsTask still pending at ${at}`);
  if (call.rejected && !typed(call.error)) problems.push(`callToolAsTask rejected with ${explain(call.error)}`);
  if (result !== undefined) {
    if (pendingAtBound.result) problems.push(`result() still pending at ${at}`);
    else if (result.rejected && !typed(result.error)) problems.push(`result() rejected with ${explain(result.error)}`);
  }
  if (iteration !== undefined) {
    if (pendingAtBound.iteration) problems.push(`the iterator still pending at ${at}`);
    else if (iteration.rejected && !typed(iteration.error))
      problems.push(`the iterator threw ${explain(iteration.error)}`);
  }
  if (stop !== undefined) {
    const what = plan.dispose ? 'dispose()' : 'cancel()';
    if (plan.dispose ? stopPendingAtBound : !stop.settled)
      problems.push(`${what} still pending at ${plan.dispose ? at : `+${clock.now() - start} ms`}`);
    else if (stop.rejected && !typed(stop.error)) problems.push(`${what} rejected with ${explain(stop.error)}`);
    // dispose() is bounded by cancelGraceMs.
    else if (plan.dispose && stop.at! - stoppedAt > CANCEL_GRACE_MS)
      problems.push(`dispose() took ${stop.at! - stoppedAt} ms (cancelGraceMs ${CANCEL_GRACE_MS})`);
  }
  if (closing !== undefined) {
    // close() is bounded by closeTimeoutMs (= requestTimeoutMs here).
    if (!closing.settled) problems.push(`close() still pending at +${clock.now() - start} ms`);
    else if (closing.at! - closedAt > REQUEST_TIMEOUT_MS)
      problems.push(`close() took ${closing.at! - closedAt} ms (closeTimeoutMs ${REQUEST_TIMEOUT_MS})`);
  }
  // An abort bounds the call at the abort + cancelGraceMs (a resumed handle does not have the signal).
  if (abortAt !== undefined && aborter.signal.aborted && !resumed) {
    const abortBound = abortAt - start + CANCEL_GRACE_MS + 250;
    for (const [what, t] of [
      ['callToolAsTask', call],
      ['result()', result],
    ] as const)
      if (t !== undefined && (!t.settled || t.at! - start > abortBound))
        problems.push(`${what} settled ${t.settled ? `at +${t.at! - start} ms` : 'never'}, after the abort's bound`);
  }
  for (const t of detached)
    if (!t.settled) problems.push('a promise of the detached handle still pending');
    else if (t.rejected && !typed(t.error)) problems.push(`the detached handle rejected with ${explain(t.error)}`);
  const noInterference =
    plan.timeoutMs === undefined &&
    plan.cancelAtMs === undefined &&
    plan.closeAtMs === undefined &&
    plan.abortAtMs === undefined &&
    plan.dropAtMs === undefined &&
    plan.resumeAtMs === undefined &&
    !seen.lied;
  if (noInterference && seen.validPayloadWhileOpen && result?.settled === true && result.rejected)
    problems.push(`a valid completed result reached the open handle, yet result() rejected: ${explain(result.error)}`);

  // Close: must settle too.
  const finalClose = track(world.tasks.close(), clock.now);
  for (let i = 0; i < 40 && !finalClose.settled; i += 1) await clock.advance(1_000);
  if (!finalClose.settled) problems.push('close() still pending 40 s after the case');
  else if (finalClose.rejected && !typed(finalClose.error))
    problems.push(`close() rejected with ${explain(finalClose.error)}`);
  await world.close();
  await flush();

  for (const error of reported) if (!typed(error)) problems.push(`error event with ${explain(error)}`);
  for (const error of processErrors) problems.push(`unhandled: ${explain(error)}`);
  for (const violation of takeViolations()) problems.push(`the server refused a request: ${violation}`);
  const outcome = (t: Tracked<unknown> | undefined): string =>
    t === undefined ? 'none' : !t.settled ? 'pending' : t.rejected ? (t.error as Error).constructor.name : 'ok';
  const summary = `call ${outcome(call)} / result ${outcome(result)}${
    stop === undefined ? '' : ` / ${plan.dispose ? 'dispose' : 'cancel'} ${outcome(stop)}`
  }${seen.validPayloadWhileOpen && noInterference ? ' (valid payload reached it)' : ''}`;
  return { problems, trace: seen.trace, summary };
}

// ---------------------------------------------------------------------------------------------

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

/** `FUZZ_FIRST`: the first seed (to explore beyond the fixed ones). */
const FIRST = Number(process.env.FUZZ_FIRST ?? 1);
const seeds = (wire: '2025' | 'ext'): number[] =>
  ONLY_SEED === undefined
    ? [...Array.from({ length: CASES }, (_, i) => FIRST + i), ...REGRESSION_SEEDS[wire]]
    : [ONLY_SEED];

for (const wire of ['2025', 'ext'] as const) {
  describe(`fuzzing what a ${wire === '2025' ? '2025-11-25' : 'tasks extension'} server sends`, () => {
    it.skipIf(ONLY_WIRE !== undefined && ONLY_WIRE !== wire)(
      `${ONLY_SEED === undefined ? CASES : 1} seeded cases keep every invariant`,
      async () => {
        const failures: string[] = [];
        const outcomes = new Map<string, number>();
        for (const seed of seeds(wire)) {
          const { problems, trace, summary } = await runCase(wire, seed);
          outcomes.set(summary, (outcomes.get(summary) ?? 0) + 1);
          if (problems.length > 0 || (VERBOSE && ONLY_SEED !== undefined)) {
            const lines = trace.length > 80 ? [...trace.slice(0, 10), '…', ...trace.slice(-70)] : trace;
            console.log(
              `FUZZ_WIRE=${wire} FUZZ_SEED=${seed}\n  ${problems.join('\n  ')}\n  trace:\n    ${lines.join('\n    ')}`,
            );
            if (problems.length > 0) failures.push(`${wire} seed ${seed}: ${problems.join('; ')}`);
          }
        }
        if (process.env.FUZZ_SUMMARY === '1')
          console.log(
            [...outcomes]
              .sort((a, b) => b[1] - a[1])
              .map(([k, n]) => `${n}\t${k}`)
              .join('\n'),
          );
        expect(failures).toEqual([]);
      },
      120_000,
    );
  });
}
