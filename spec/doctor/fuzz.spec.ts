/**
 * Deterministic fuzzing of what a probed server sends to `runDoctor`, on both wires: the
 * 2025-11-25 wire (the model server of spec/doctor/model-server.ts, over SDK v1 or SDK v2) and the
 * 2026-07-28 tasks extension (the scripted extension server of spec/support/ext-server, over SDK
 * v2's modern era), and both through a transport factory (`both`). The doctor is given a
 * transport, so it runs the handshake itself, or (`client`) a caller's connected client, which it
 * must leave working (a ping after the run is answered).
 *
 * Between the client and the server sits a fault layer (a transport wrapper): every message the
 * server sends (the replies to initialize, tools/list, tools/call, tasks/get, tasks/result,
 * tasks/list, tasks/cancel, tasks/update, subscriptions/listen, its notifications and its
 * questions) starts VALID and is then, with a seeded probability (mulberry32), mutated: a field
 * dropped, null, of the wrong type, a huge, negative or NaN-ish number, a long string, an unknown
 * status, another task id, extra fields (`__proto__` included), a result replaced by a non-object,
 * a JSON-RPC error of odd code/message/data, a withheld, late, duplicate or unsolicited reply, an
 * odd envelope, a dropped, late, duplicate, lying or unsolicited notification.
 *
 * The doctor takes no clock: the case runs on vitest's fake timers (setTimeout and Date), advanced
 * in steps, so a case is deterministic and takes fake minutes in real milliseconds. Invariants per
 * seed (the doctor's contract, docs/doctor.md "Bounds and clean-up"):
 * - `runDoctor` settles within its documented bound (connect, tools/list pages, and per probe its
 *   bound, a request bound, and the clean-up's bound);
 * - it resolves with a report, or rejects only with the library's error classes (TaskConnectError
 *   only when the handshake itself was hit, TaskAbortError only for a stop);
 * - every row has a known verdict and severity, each check once per wire, the summary counts the
 *   rows, and no row quotes a task id ([V4]);
 * - rendering (table at several widths, colour or not; JSON; exit code) does not throw;
 * - no unhandled rejection or uncaught exception; nothing is sent, and no progress reported, after
 *   `runDoctor` settled (no timer or promise of the run left behind);
 * - a case with no fault at all gets no deviation (the harness itself is sound).
 *
 * A failing case prints its seed and the trace of what the fault layer did. Replay one with
 * `DOCTOR_FUZZ_SEED=<seed> DOCTOR_FUZZ_WIRE=2025|ext|both|client npx vitest run spec/doctor/fuzz.spec.ts`;
 * `DOCTOR_FUZZ_CASES=<n>` runs more seeds, `DOCTOR_FUZZ_FIRST=<n>` starts elsewhere,
 * `DOCTOR_FUZZ_VERBOSE=1` prints the trace of a passing case too, `DOCTOR_FUZZ_SUMMARY=1` how the
 * cases ended, `DOCTOR_FUZZ_SERVERS=1` (or `0`) switches every seed's server (or none) to one
 * deviation of its own (a third of them by default). What it found is pinned down by plain tests in
 * spec/doctor/deviants.spec.ts and spec/doctor/ext-scripted.spec.ts (an empty taskId sent back,
 * rows quoting task ids or 100 kB values, a task whose CreateTaskResult could not be read left
 * running).
 */
import { Client as V2Client, InMemoryTransport as V2InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  exitCode,
  renderReport,
  reportJson,
  runDoctor,
  type DoctorOptions,
  type DoctorReport,
} from '../../lib/doctor.js';
import * as lib from '../../lib/index.js';
import type { McpTransport } from '../../lib/index.js';
import { connectInMemory, ExtServer, fixtureTools, type ExtServerOptions } from '../support/ext-server/index.js';
import { takeViolations } from '../support/violations.js';
import { mutator, REPLY_FAULTS, shortJson, type Mutations } from '../support/mutate.js';
import { Rng } from '../support/seeded.js';
import { MODEL_OPTION_KEYS, modelServer, type Model, type ModelOptions } from './model-server.js';

type Json = Record<string, unknown>;
/** `both`: a transport factory, the extension server first (modern era), then the 2025 model server. */
type Wire = '2025' | 'ext' | 'both' | 'client';

const CASES = Number(process.env.DOCTOR_FUZZ_CASES ?? 100);
const FIRST = Number(process.env.DOCTOR_FUZZ_FIRST ?? 1);
const ONLY_SEED = process.env.DOCTOR_FUZZ_SEED === undefined ? undefined : Number(process.env.DOCTOR_FUZZ_SEED);
const ONLY_WIRE = process.env.DOCTOR_FUZZ_WIRE;
const VERBOSE = process.env.DOCTOR_FUZZ_VERBOSE === '1';
/** The share of seeds whose server is switched to one deviation (DOCTOR_FUZZ_SERVERS=1: every seed). */
const SERVERS_RATE = process.env.DOCTOR_FUZZ_SERVERS === '1' ? 1 : process.env.DOCTOR_FUZZ_SERVERS === '0' ? 0 : 0.33;
/**
 * Seeds that found a doctor bug (each pinned down by a plain test too); they always run. Each fails
 * with its fix reverted: 2025 seed 11 and `both` seed 343 when rows quote a server value whole,
 * 2025 seed 187 when an empty taskId names a task, ext seed 21 when a row quotes a task id. (The
 * task whose CreateTaskResult could not be read, credited to seed 343 too, is one no seed isolates:
 * these invariants do not see a task left running; plain tests in spec/doctor/deviants.spec.ts and
 * spec/doctor/ext-scripted.spec.ts guard it.) A seed means what it does for this version of the
 * fuzzer: changing how the PRNG is drawn (or {@link MUTATIONS}, the tables spec/support/mutate.ts
 * draws from) changes the cases. Drawing every option of the model server ({@link modelChoices})
 * changed the server of 2025 seed 187 (to `numericCursor`); it still fails with its fix reverted.
 */
const REGRESSION_SEEDS: Readonly<Record<Wire, readonly number[]>> = {
  '2025': [11, 187],
  ext: [21],
  both: [343],
  client: [],
};

/** The doctor's bounds in every case (fake ms). */
const PROBE_MS = 5_000;
const REQUEST_MS = 2_000;
const CONNECT_MS = 3_000;
/**
 * The documented bound of a run on one session: the connect bound (and the 2 s the SDK gets to let
 * go), at most 20 tools/list pages, then per probe (7 at most) its bound, one request bound and
 * 1 s more, and the clean-up's bound (3 request bounds and 5 s); a little slack for closing.
 */
const SESSION_BOUND_MS =
  CONNECT_MS + 2_000 + 20 * REQUEST_MS + 7 * (PROBE_MS + REQUEST_MS + 1_000 + 3 * REQUEST_MS + 5_000) + 5_000;
/** The bound of a run: one session, or two for a transport factory. */
const runBound = (wire: Wire): number => (wire === 'both' ? 2 : 1) * SESSION_BOUND_MS;
const STEP_MS = 100;
const VERDICTS = new Set(['ok', 'deviation', 'not-testable']);
const SEVERITIES = new Set(['MUST', 'SHOULD', 'MAY']);
const WIRES = new Set(['2025-11-25', 'io.modelcontextprotocol/tasks']);

/** The library's error classes: a rejection must be one of them. */
const ERROR_CLASSES: readonly unknown[] = (Object.values(lib) as unknown[]).filter(
  (value) => typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error,
);
const typed = (error: unknown): boolean =>
  lib.isTaskError(error) && ERROR_CLASSES.some((klass) => error.constructor === klass);

// ---------------------------------------------------------------------------------------------
// Mutations

const LONG = 'x'.repeat(100_000);
const ODD_NUMBERS: readonly unknown[] = [1e308, -1, -1e12, 0, 1.5, 2 ** 60, 'NaN', '1e400', '-Infinity', -0.5];
const ODD_STATUSES: readonly unknown[] = ['paused', '', 'COMPLETED', 'completed ', 'unknown', 7, null, 'cancelled'];
const ODD_CODES: readonly unknown[] = [
  'boom',
  1.5,
  null,
  -32602,
  -32603,
  -32601,
  -32600,
  -32002,
  -32021,
  -32003,
  0,
  1e20,
  -32000,
  {},
];
const ODD_MESSAGES: readonly unknown[] = ['', 42, null, {}, [], LONG, 'Task not found'];
const ODD_DATA: readonly unknown[] = [
  undefined,
  null,
  'x',
  42,
  [],
  { taskId: 'task-999' },
  { requiredCapabilities: 5 },
  { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
  { requiredCapabilities: { extensions: null } },
  LONG,
];

/** This fuzzer's tables (spec/support/mutate.ts): its seeds' cases are drawn from them, in this order. */
const MUTATIONS: Mutations = {
  depth: 5,
  replaced: 0.06,
  long: LONG,
  emoji: 20_000,
  numbers: ODD_NUMBERS,
  statuses: ODD_STATUSES,
  extras: [1, 'x', null, { a: 1 }, [1], LONG, { status: 'completed' }],
  codes: ODD_CODES,
  messages: ODD_MESSAGES,
  data: ODD_DATA,
};
const { mutateValue, oddError } = mutator(MUTATIONS);

const short = (value: unknown): string => shortJson(value, 240);

// ---------------------------------------------------------------------------------------------
// The fault layer: a transport wrapper in front of the client

type Message = Json;
type Extra = unknown;

/** What the fault layer saw and did in one case. */
interface Seen {
  readonly trace: string[];
  /** Task ids the server gave (from valid messages, before any mutation: another id a mutation may use). */
  readonly ids: Set<string>;
  /** Task ids the doctor was given for its own tasks (delivered tools/call replies): no row may quote one ([V4]). */
  readonly started: Set<string>;
  /** Faults applied (0: the case ran clean). */
  faults: number;
  /** The server itself was switched to a deviation (a clean run may then have deviations). */
  deviant: boolean;
  /** A fault hit the handshake (initialize, server/discover). */
  handshakeHit: boolean;
  /** The fault layer lets everything through (a caller's own traffic after the run). */
  quiet: boolean;
  /** Set once runDoctor settled: anything sent later is a leak. */
  settled: boolean;
  readonly afterSettle: string[];
}

/** The plan of a case: how often, and on what, the layer strikes. */
interface Plan {
  readonly rate: number;
  /** Methods whose replies may be hit (all when undefined). */
  readonly methods: ReadonlySet<string> | undefined;
  readonly notifyRate: number;
  readonly handshake: boolean;
  readonly unsolicitedRate: number;
  readonly abortAtMs: number | undefined;
  readonly expiry: boolean;
  readonly namedTool: boolean;
}

const HANDSHAKE = new Set(['initialize', 'server/discover']);
const METHODS = [
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'subscriptions/listen',
];

function makePlan(rng: Rng): Plan {
  const clean = rng.chance(0.08);
  const focus = rng.chance(0.5);
  const chosen = new Set(METHODS.filter(() => rng.chance(0.35)));
  return {
    rate: clean ? 0 : rng.pick([0.05, 0.15, 0.3, 0.5]),
    methods: focus ? chosen : undefined,
    notifyRate: clean ? 0 : rng.pick([0, 0.2, 0.5]),
    handshake: !clean && rng.chance(0.12),
    unsolicitedRate: clean ? 0 : rng.pick([0, 0, 0.05, 0.15]),
    abortAtMs: !clean && rng.chance(0.08) ? rng.int(40_000) : undefined,
    expiry: rng.chance(0.3),
    namedTool: rng.chance(0.5),
  };
}

/** Collects the task ids of a valid message (any `taskId` string, any depth). */
function collectIds(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 6 || typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value as Json)) {
    if (key === 'taskId' && typeof child === 'string' && child.length >= 6) into.add(child);
    else collectIds(child, into, depth + 1);
  }
}

let unsolicitedId = 900_000;

/** The transport the doctor gets: `inner` with the fault layer on what comes from the server. */
function faulty(inner: McpTransport, rng: Rng, plan: Plan, seen: Seen, wire: '2025' | 'ext'): McpTransport {
  const methods = new Map<string, string>();
  const sentAt = new Map<string, number>();
  const { trace } = seen;
  const outer: Record<string, unknown> & {
    onmessage?: (message: Message, extra?: Extra) => void;
    onclose?: () => void;
    onerror?: (error: Error) => void;
  } = {};
  const deliver = (message: Message, extra?: Extra): void => {
    if (seen.settled) return;
    const result = message.result as Json | undefined;
    const key = JSON.stringify(message.id);
    // A reply after the request bound reaches nobody: the doctor gave the call up.
    const open = Date.now() - (sentAt.get(key) ?? -Infinity) < REQUEST_MS;
    if (open && methods.get(key) === 'tools/call' && typeof result === 'object' && result !== null) {
      const task = typeof result.task === 'object' && result.task !== null ? (result.task as Json) : result;
      if (typeof task.taskId === 'string' && task.taskId.length >= 6) seen.started.add(task.taskId);
    }
    outer.onmessage?.(message, extra);
  };
  const later = (ms: number, run: () => void): void => {
    setTimeout(run, ms);
  };
  const other = (): string[] => [...seen.ids];
  const statusNote = (): Message => {
    const ids = other();
    const taskId = ids.length > 0 ? rng.pick(ids) : 'task-999';
    const status = rng.pick<unknown>(['working', 'input_required', 'completed', 'failed', 'cancelled', 'paused']);
    const at = new Date().toISOString();
    const task: Json = { taskId, status, createdAt: at, lastUpdatedAt: at, ttl: 60_000 };
    if (wire === '2025') return { jsonrpc: '2.0', method: 'notifications/tasks/status', params: task };
    return {
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: {
        ...task,
        ttlMs: 60_000,
        _meta: { 'io.modelcontextprotocol/subscriptionId': rng.pick(['1', '2', 3, 'x']) },
      },
    };
  };
  const unsolicited = (): void => {
    if (!rng.chance(plan.unsolicitedRate)) return;
    const kind = rng.int(4);
    let message: Message;
    if (kind === 0) message = statusNote();
    else if (kind === 1)
      message = {
        jsonrpc: '2.0',
        id: rng.pick<unknown>([++unsolicitedId, `x-${unsolicitedId}`, null, 1, 2, 3]),
        ...(rng.chance(0.5)
          ? { result: { task: { taskId: 'task-999', status: 'working' } } }
          : { error: oddError(rng) }),
      };
    else if (kind === 2)
      message = {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: rng.pick<unknown>([0, 1, 'x']), progress: rng.pick<unknown>([1, -1, 'x', null]) },
      };
    else
      message = {
        jsonrpc: '2.0',
        id: `srv-u-${++unsolicitedId}`,
        method: 'elicitation/create',
        params: mutateValue(
          {
            message: 'Proceed?',
            requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } } },
            _meta: { 'io.modelcontextprotocol/related-task': { taskId: other()[0] ?? 'task-999' } },
          },
          rng,
          other(),
        ).value,
      };
    trace.push(`unsolicited: ${short(message)}`);
    deliver(message);
  };

  const incoming = (message: Message, extra?: Extra): void => {
    if (seen.quiet) return deliver(message, extra);
    unsolicited();
    const isResponse = message.method === undefined && message.id !== undefined;
    const method = isResponse ? methods.get(JSON.stringify(message.id)) : String(message.method);
    if (isResponse) collectIds(message.result, seen.ids);
    else collectIds(message.params, seen.ids);
    const handshake = method !== undefined && HANDSHAKE.has(method);
    const eligible = handshake
      ? plan.handshake
      : isResponse
        ? plan.methods === undefined || (method !== undefined && plan.methods.has(method))
        : true;
    const rate = isResponse || handshake ? plan.rate : plan.notifyRate;
    if (!eligible || !rng.chance(handshake ? 0.7 : rate)) {
      deliver(message, extra);
      return;
    }
    seen.faults += 1;
    if (handshake) seen.handshakeHit = true;
    const label = `${method ?? '?'}${isResponse ? `#${JSON.stringify(message.id)}` : ''}`;
    if (isResponse) {
      const fault = rng.pick(REPLY_FAULTS);
      const body = 'result' in message ? message.result : undefined;
      switch (fault) {
        case 'mutate': {
          if (!('result' in message)) {
            const error = oddError(rng);
            trace.push(`${label} error replaced: ${short(error)}`);
            return deliver({ jsonrpc: '2.0', id: message.id, error }, extra);
          }
          const mutated = mutateValue(body, rng, other());
          trace.push(`${label} mutated (${mutated.label}): ${short(mutated.value)}`);
          return deliver({ jsonrpc: '2.0', id: message.id, result: mutated.value }, extra);
        }
        case 'error': {
          const error = oddError(rng);
          trace.push(`${label} error: ${short(error)}`);
          return deliver({ jsonrpc: '2.0', id: message.id, error }, extra);
        }
        case 'duplicate': {
          trace.push(`${label} valid, then a duplicate`);
          deliver(message, extra);
          const dup =
            rng.chance(0.5) && body !== undefined
              ? { ...message, result: mutateValue(body, rng, other()).value }
              : message;
          return deliver(dup, extra);
        }
        case 'late': {
          const delay = rng.int(8_000);
          trace.push(`${label} late by ${delay} ms`);
          return later(delay, () => deliver(message, extra));
        }
        case 'withheld':
          trace.push(`${label} withheld`);
          return;
        case 'unsolicited': {
          const id = rng.pick<unknown>([
            ++unsolicitedId,
            `x-${unsolicitedId}`,
            null,
            typeof message.id === 'number' ? message.id + 1 : 0,
          ]);
          trace.push(`${label} preceded by a reply of id ${JSON.stringify(id)}`);
          deliver({ ...message, id }, extra);
          return deliver(message, extra);
        }
        case 'envelope': {
          const odd = rng.pick<Message>([
            { jsonrpc: '2.0', id: message.id, result: body ?? {}, error: oddError(rng) },
            { jsonrpc: '2.0', id: message.id },
            { jsonrpc: '1.0', id: message.id, result: body },
            { id: message.id, result: body },
            { jsonrpc: '2.0', id: typeof message.id === 'number' ? String(message.id) : 1e9, result: body },
          ]);
          trace.push(`${label} odd envelope: ${short(odd)}`);
          return deliver(odd, extra);
        }
      }
    }
    // A notification or a request of the server.
    const fault = rng.pick(['mutate', 'mutate', 'drop', 'duplicate', 'late', 'lie', 'other'] as const);
    const params = (message.params ?? {}) as Json;
    switch (fault) {
      case 'mutate': {
        const mutated = mutateValue(params, rng, other());
        trace.push(`${label} params mutated (${mutated.label})`);
        return deliver({ ...message, params: mutated.value }, extra);
      }
      case 'drop':
        trace.push(`${label} dropped`);
        if (message.id !== undefined) return deliver(message, extra); // a request is never dropped: the server waits
        return;
      case 'duplicate':
        trace.push(`${label} duplicated`);
        deliver(message, extra);
        return deliver(message, extra);
      case 'late': {
        const delay = rng.int(5_000);
        trace.push(`${label} late by ${delay} ms`);
        return later(delay, () => deliver(message, extra));
      }
      case 'lie': {
        const status = rng.pick(['working', 'input_required', 'completed', 'failed', 'cancelled']);
        trace.push(`${label} says ${status}`);
        return deliver({ ...message, params: { ...params, status } }, extra);
      }
      case 'other': {
        const taskId = rng.pick([...other(), 'task-999']);
        trace.push(`${label} names another task`);
        return deliver({ ...message, params: { ...params, taskId } }, extra);
      }
    }
  };

  inner.onmessage = (message: unknown, extra?: unknown) => incoming(message as Message, extra);
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (error: Error) => outer.onerror?.(error);
  const target = inner as unknown as Record<string, unknown>;
  Object.assign(outer, {
    start: () => (target.start as () => Promise<void>).call(inner),
    close: () => (target.close as () => Promise<void>).call(inner),
    send: (message: Message, options?: unknown) => {
      if (seen.settled) seen.afterSettle.push(short(message).slice(0, 120));
      if (message.method !== undefined && message.id !== undefined) {
        methods.set(JSON.stringify(message.id), typeof message.method === 'string' ? message.method : '?');
        sentAt.set(JSON.stringify(message.id), Date.now());
      }
      return (target.send as (m: unknown, o?: unknown) => Promise<void>).call(inner, message, options);
    },
    setProtocolVersion: (version: string) =>
      (target.setProtocolVersion as ((v: string) => void) | undefined)?.call(inner, version),
  });
  Object.defineProperty(outer, 'sessionId', { get: () => target.sessionId, enumerable: true });
  return outer as unknown as McpTransport;
}

// ---------------------------------------------------------------------------------------------
// One case

interface World {
  readonly transport: McpTransport;
  /** A caller's client: whether it connected (a case whose handshake failed is skipped). */
  readonly connected?: boolean;
  /** A caller's client: a ping after the run, answered. */
  readonly ping?: () => Promise<boolean>;
  readonly options: DoctorOptions;
  /** Problems the server itself found with what the doctor sent. */
  failures(): string[];
  close(): Promise<void>;
}

/** Names a hostile server gives itself and its tool: long, multi-line, with escape sequences. */
const ODD_NAMES: readonly string[] = [
  'n'.repeat(500),
  'line one\nline two\r\n\u001b[2J\u001b]0;title\u0007',
  '\u202eevil\u2028next\u0085',
  LONG,
];

/**
 * Every deviation and allowed behaviour of the model server, each one switch, its values drawn
 * from `rng` (a test checks that every option of the model, {@link MODEL_OPTION_KEYS}, is here).
 * Changing the table changes the server of each seed that has one (see {@link REGRESSION_SEEDS}).
 */
function modelChoices(rng: Rng): ModelOptions[] {
  return [
    { silent: true },
    { ttlIgnored: true },
    { cancelRewrites: true },
    { noCancel: true },
    { untagged: true },
    { unknownCode: rng.pick([-32603, -32002, -32600]) },
    { endlessList: true },
    { numericCursor: true },
    { neverEnds: true },
    { earlyResult: true },
    { selfCancel: true },
    { slowReadMs: 2_500 },
    { unanswered: rng.pick(['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list']) },
    { lateEndNoteMs: 200 },
    { workMs: rng.pick([0, 5, 4_000]) },
    { madeUpCursorUnanswered: true },
    { createdTaskId: rng.pick(['', 'x'.repeat(300), 'model-0-fixed']) },
    // `paused` is a status the library cannot read; the task runs on under its own.
    { createdStatus: rng.pick(['paused', 'completed', 'input_required']) },
    { createdAt: rng.pick<unknown>([LONG, 'yesterday', 1_700_000_000_000, null]) },
    // Needs a call with `late: true` (world2025 names the tool so).
    { lateCreateMs: rng.pick([1_000, 3_000, 10_000]) },
    { cancelledAtOnce: true },
    // The failing tool is then `plain` (world2025), which the doctor must not call as a task.
    { forbiddenTool: true },
    { deleteCancelled: true },
    { maxTtl: rng.pick([500, 2_000]) },
    { serverName: rng.pick(ODD_NAMES) },
    { workName: rng.pick(ODD_NAMES) },
    { earlyNoteOnly: true },
  ];
}

/**
 * A server of its own per seed, on a PRNG of its own (so that the fault layer's draws, and what each
 * seed means for them, stay as they were): with `DOCTOR_FUZZ_SERVERS=1` (or for a third of the
 * seeds by default) one deviation or allowed behaviour of the model server is switched on.
 */
function modelOptions(seed: number): ModelOptions {
  const rng = new Rng(seed * 104_729 + 7);
  if (!rng.chance(SERVERS_RATE)) return {};
  return rng.pick(modelChoices(rng));
}

async function world2025(seed: number, rng: Rng, plan: Plan, seen: Seen, only?: 'v2'): Promise<World> {
  const switched = modelOptions(seed);
  const model: Model = modelServer(switched);
  if (Object.keys(switched).length > 0) seen.deviant = true;
  seen.trace.push(`model server ${short(switched)}`);
  const sdk = only ?? (seed % 2 === 0 ? 'v1' : 'v2');
  const [clientSide, serverSide] =
    sdk === 'v1' ? V1InMemoryTransport.createLinkedPair() : V2InMemoryTransport.createLinkedPair();
  await model.server.connect(serverSide);
  seen.trace.push(`2025-11-25 wire, SDK ${sdk}`);
  // The battery's tool by the name the server lists; a late CreateTaskResult needs `late: true`.
  const work = switched.workName ?? 'work';
  const tool =
    switched.lateCreateMs !== undefined
      ? { tool: { name: work, arguments: { late: true } } }
      : plan.namedTool
        ? { tool: { name: work } }
        : {};
  return {
    transport: faulty(clientSide, rng, plan, seen, '2025'),
    options: {
      sdk,
      ...tool,
      failTool: { name: switched.forbiddenTool === true ? 'plain' : 'fail' },
      inputTool: { name: 'ask' },
    },
    failures: () => model.failures,
    close: async () => {
      model.stop();
      await model.server.close();
    },
  };
}

/** The extension server's options of a seed (on a PRNG of its own, as {@link modelOptions}). */
function extOptions(seed: number): ExtServerOptions {
  const rng = new Rng(seed * 104_729 + 11);
  if (!rng.chance(SERVERS_RATE)) return {};
  return rng.pick<ExtServerOptions>([
    { notifications: 'off' },
    { notifications: 'ack-only' },
    { cancel: rng.pick(['deferred', 'ignore', 'complete'] as const) },
    { expiry: rng.pick(['keep', 'fail', 'delete'] as const), ttlMs: 2_000 },
    { getResultType: rng.pick(['task', 'omit'] as const) },
    { ttlMs: null },
    { pollIntervalMs: rng.pick([0, 10_000, [50, 0, 5]]) },
    { wholeSeconds: true },
    { stampInnerResultType: false },
  ]);
}

async function worldExt(seed: number, rng: Rng, plan: Plan, seen: Seen): Promise<World> {
  let n = 0;
  const switched = extOptions(seed);
  if (Object.keys(switched).length > 0) seen.deviant = true;
  seen.trace.push(`extension server ${short(switched)}`);
  const server = new ExtServer({
    pollIntervalMs: 50,
    ...switched,
    tools: fixtureTools(),
    taskIds: () => `ext-task-${++n}`,
  });
  const connection = await connectInMemory(server);
  seen.trace.push('extension wire, SDK v2');
  return {
    transport: faulty(connection.clientTransport, rng, plan, seen, 'ext'),
    options: {
      sdk: 'v2',
      tool: { name: 'slow_compute', arguments: { label: 'doctor', polls: 3 } },
      failTool: { name: 'protocol_error_job' },
      inputTool: { name: 'confirm_delete' },
    },
    failures: () => [],
    close: () => connection.close(),
  };
}

/**
 * Both wires through a transport factory: the extension server (its fixture tools renamed to the
 * model server's `work`, `fail` and `ask`) for the 2026-07-28 session, then the model server for the
 * 2025-11-25 one. A third transport is refused (the doctor asks for two).
 */
async function worldBoth(seed: number, rng: Rng, plan: Plan, seen: Seen): Promise<World> {
  const names: Record<string, string> = { slow_compute: 'work', protocol_error_job: 'fail', confirm_delete: 'ask' };
  let n = 0;
  const ext = new ExtServer({
    pollIntervalMs: 50,
    tools: fixtureTools()
      .filter((tool) => names[tool.name] !== undefined)
      .map((tool) => ({ ...tool, name: names[tool.name]! })),
    taskIds: () => `ext-task-${++n}`,
  });
  const modern = await connectInMemory(ext);
  const legacy = await world2025(seed, rng, plan, seen, 'v2');
  const transports = [faulty(modern.clientTransport, rng, plan, seen, 'ext'), legacy.transport];
  seen.trace.push('both wires through a factory, SDK v2');
  return {
    transport: (() => transports.shift() ?? Promise.reject(new Error('a third transport'))) as unknown as McpTransport,
    options: { ...legacy.options, sdk: 'v2' },
    failures: () => legacy.failures(),
    close: async () => {
      await modern.close();
      await legacy.close();
    },
  };
}

/**
 * A caller's connected client (the 2025 model server, SDK v1 or v2): the doctor taps its session
 * and leaves it open, so nothing of the run may act on it afterwards; it still answers a ping.
 */
async function worldClient(seed: number, rng: Rng, plan: Plan, seen: Seen): Promise<World> {
  const base = await world2025(seed, rng, plan, seen);
  const Client = base.options.sdk === 'v1' ? V1Client : V2Client;
  const client = new Client({ name: 'fuzz-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const connecting = client.connect(base.transport as never).then(
    () => true,
    () => false,
  );
  let connected: boolean | undefined;
  void connecting.then((ok) => (connected = ok));
  while (connected === undefined) await vi.advanceTimersByTimeAsync(STEP_MS);
  seen.trace.push(`a caller's client, SDK ${String(base.options.sdk)}${connected ? '' : ': it could not connect'}`);
  return {
    ...base,
    transport: client as never,
    connected,
    ping: async () => {
      const pinged = client.ping().then(
        () => true,
        () => false,
      );
      let ok: boolean | undefined;
      void pinged.then((value) => (ok = value));
      for (let i = 0; i < 100 && ok === undefined; i += 1) await vi.advanceTimersByTimeAsync(STEP_MS);
      return ok === true;
    },
    close: async () => {
      await client.close();
      await base.close();
    },
  };
}

const processErrors: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  processErrors.push(reason);
};

function explain(error: unknown): string {
  if (error instanceof Error) return `${error.constructor.name}: ${error.message.slice(0, 300)}`;
  return `${typeof error} ${short(error)}`;
}

/** Problems with a report (its shape, counts, secrets, rendering). */
function reportProblems(report: DoctorReport, ids: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const keys = new Set<string>();
  for (const row of report.rows) {
    const where = `${row.wire} ${row.check}`;
    if (!VERDICTS.has(row.verdict)) problems.push(`${where}: verdict ${short(row.verdict)}`);
    if (!SEVERITIES.has(row.severity)) problems.push(`${where}: severity ${short(row.severity)}`);
    if (!WIRES.has(row.wire)) problems.push(`${where}: wire ${short(row.wire)}`);
    for (const field of ['check', 'rule', 'quote', 'seen'] as const)
      if (typeof row[field] !== 'string' || row[field] === '') problems.push(`${where}: ${field} ${short(row[field])}`);
    if (typeof row.coping?.does !== 'string' || typeof row.coping.handled !== 'boolean')
      problems.push(`${where}: coping ${short(row.coping)}`);
    if (keys.has(`${row.wire}/${row.check}`)) problems.push(`${where}: two rows`);
    // A probe that threw (a TypeError on a malformed reply, say) crashed instead of naming the fault.
    if (row.seen.startsWith('the probe failed')) problems.push(`${where}: ${row.seen}`);
    keys.add(`${row.wire}/${row.check}`);
    if (typeof row.seen === 'string' && row.seen.length > 2_000)
      problems.push(`${where}: seen is ${row.seen.length} chars`);
    // [V4]: task ids are secrets.
    for (const id of ids)
      if (JSON.stringify(row).includes(id)) problems.push(`${where}: quotes a task id: ${short(row.seen)}`);
  }
  for (const section of report.wires)
    for (const id of ids) if (section.note.includes(id)) problems.push(`wire ${section.wire} note quotes a task id`);
  for (const note of report.tasks.notes)
    for (const id of ids) if (note.includes(id)) problems.push('a task note quotes a task id');
  const count = (verdict: string): number => report.rows.filter((row) => row.verdict === verdict).length;
  const { summary } = report;
  if (
    summary.ok !== count('ok') ||
    summary.deviations !== count('deviation') ||
    summary.notTestable !== count('not-testable') ||
    summary.mustViolations !== report.rows.filter((r) => r.verdict === 'deviation' && r.severity === 'MUST').length
  )
    problems.push(`summary ${short(summary)} does not count the rows`);
  const t = report.tasks;
  if (![t.started, t.finished, t.cancelled, t.leftRunning].every((v) => Number.isInteger(v) && v >= 0))
    problems.push(`task account ${short(t)}`);
  if (t.finished + t.cancelled + t.leftRunning > t.started)
    problems.push(`task account adds up to more than started: ${short(t)}`);
  try {
    for (const width of [30, 80, 200]) for (const color of [false, true]) renderReport(report, { width, color });
    renderReport(report, { withoutLibrary: true });
    const json = reportJson(report);
    const back = JSON.parse(json) as DoctorReport;
    if (back.rows.length !== report.rows.length) problems.push('the JSON lost rows');
    const code = exitCode(report);
    if (code !== (summary.mustViolations > 0 ? 1 : 0)) problems.push(`exitCode ${code}`);
  } catch (error) {
    problems.push(`rendering threw ${explain(error)}`);
  }
  return problems;
}

async function runCase(wire: Wire, seed: number): Promise<{ problems: string[]; trace: string[]; summary: string }> {
  const rng = new Rng(seed * 7919 + { '2025': 0, ext: 1, both: 2, client: 3 }[wire]);
  const plan = makePlan(rng);
  const seen: Seen = {
    trace: [`plan ${short({ ...plan, methods: plan.methods && [...plan.methods] })}`],
    ids: new Set(),
    started: new Set(),
    faults: 0,
    deviant: false,
    quiet: false,
    handshakeHit: false,
    settled: false,
    afterSettle: [],
  };
  const problems: string[] = [];
  processErrors.splice(0);
  takeViolations();
  const world = await { '2025': world2025, ext: worldExt, both: worldBoth, client: worldClient }[wire](
    seed,
    rng,
    plan,
    seen,
  );
  if (world.connected === false) {
    await world.close();
    vi.clearAllTimers();
    takeViolations();
    return { problems: [], trace: seen.trace, summary: 'the caller could not connect (0 faults)' };
  }
  const stop = new AbortController();
  const start = Date.now();
  const progressAfter: string[] = [];
  let state: { done: boolean; report?: DoctorReport; error?: unknown; at?: number } = { done: false };
  runDoctor(world.transport, {
    ...world.options,
    probeTimeoutMs: PROBE_MS,
    requestTimeoutMs: REQUEST_MS,
    connectTimeoutMs: CONNECT_MS,
    noAnswerMs: 300,
    retentionCheckMs: 400,
    expiryBudgetMs: plan.expiry ? 6_000 : 1,
    signal: stop.signal,
    onProgress: (event) => {
      if (seen.settled) progressAfter.push(`${event.wire} ${event.probe}`);
      seen.trace.push(`+${Date.now() - start} ms probe ${event.probe}`);
    },
  }).then(
    (report) => {
      state = { done: true, report, at: Date.now() };
    },
    (error: unknown) => {
      state = { done: true, error, at: Date.now() };
    },
  );
  const abortAt = plan.abortAtMs === undefined ? undefined : start + plan.abortAtMs;
  const RUN_BOUND_MS = runBound(wire);
  while (!state.done && Date.now() - start < RUN_BOUND_MS + 60_000) {
    if (abortAt !== undefined && !stop.signal.aborted && Date.now() >= abortAt) {
      seen.trace.push(`abort at +${Date.now() - start} ms`);
      stop.abort(new Error('fuzz stop'));
    }
    await vi.advanceTimersByTimeAsync(STEP_MS);
  }
  seen.settled = true;
  const took = (state.at ?? Date.now()) - start;
  let outcome: string;
  if (!state.done) {
    outcome = 'pending';
    problems.push(`runDoctor still pending ${took} ms after it started (bound ${RUN_BOUND_MS} ms)`);
  } else {
    if (took > RUN_BOUND_MS) problems.push(`runDoctor took ${took} ms (bound ${RUN_BOUND_MS} ms)`);
    if (state.error !== undefined) {
      outcome = (state.error as Error)?.constructor?.name ?? typeof state.error;
      if (!typed(state.error)) problems.push(`runDoctor rejected with ${explain(state.error)}`);
      else if (state.error instanceof lib.TaskAbortError) {
        if (!stop.signal.aborted) problems.push(`TaskAbortError without a stop: ${explain(state.error)}`);
      } else if (state.error instanceof lib.TaskConnectError) {
        if (!seen.handshakeHit && !seen.trace.some((line) => line.startsWith('unsolicited')))
          problems.push(`TaskConnectError with the handshake untouched: ${explain(state.error)}`);
      } else problems.push(`runDoctor rejected with ${explain(state.error)}`);
    } else {
      const report = state.report!;
      const offered = report.wires.filter((w) => w.offered && w.tool !== undefined).map((w) => w.wire.slice(0, 4));
      outcome = `report: ${report.summary.deviations} deviations, battery on [${offered.join(',')}]`;
      if (stop.signal.aborted && plan.abortAtMs !== undefined && took > plan.abortAtMs + 3 * REQUEST_MS + 5_000 + 5_000)
        problems.push('a stopped run resolved with a report long after the stop');
      problems.push(...reportProblems(report, seen.started));
      if (seen.faults === 0 && plan.unsolicitedRate === 0 && !seen.deviant && report.summary.deviations > 0)
        problems.push(
          `a clean run got deviations: ${report.rows
            .filter((r) => r.verdict === 'deviation')
            .map((r) => `${r.wire} ${r.check}: ${r.seen}`)
            .join('; ')}`,
        );
    }
  }
  // Ten fake minutes more: nothing of the run may still act.
  await vi.advanceTimersByTimeAsync(600_000);
  if (seen.afterSettle.length > 0)
    problems.push(`sent after runDoctor settled: ${seen.afterSettle.slice(0, 3).join(' | ')}`);
  if (progressAfter.length > 0) problems.push(`onProgress after runDoctor settled: ${progressAfter.join(', ')}`);
  if (world.ping !== undefined) {
    // The caller's client is the caller's again: the fault layer lets its traffic through.
    seen.settled = false;
    seen.quiet = true;
    if (!(await world.ping())) problems.push("the caller's client no longer answers a ping after the run");
    seen.settled = true;
  }
  await world.close();
  await vi.advanceTimersByTimeAsync(1_000);
  for (const error of processErrors) problems.push(`unhandled: ${explain(error)}`);
  for (const failure of world.failures()) problems.push(`the server's assertion failed: ${failure}`);
  for (const violation of takeViolations()) problems.push(`the server refused a request: ${violation}`);
  vi.clearAllTimers();
  return { problems, trace: seen.trace, summary: `${outcome} (${seen.faults} faults)` };
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
afterEach(() => {
  vi.useRealTimers();
});

const seeds = (wire: Wire): number[] =>
  ONLY_SEED === undefined
    ? [...Array.from({ length: CASES }, (_, i) => FIRST + i), ...REGRESSION_SEEDS[wire]]
    : [ONLY_SEED];

const TITLES: Record<Wire, string> = {
  '2025': 'a 2025-11-25 server',
  ext: 'a tasks extension server',
  both: 'a server of both eras (a transport factory)',
  client: "a 2025-11-25 server, through a caller's connected client",
};

describe("doctor fuzzing: the model server's options", () => {
  it('every option of the model server (spec/doctor/model-server.ts) is one the fuzzer draws', () => {
    // Before the fix, nine options were never drawn (the newer deviations among them): a seed
    // could not find what the doctor does with them.
    const drawn = new Set(modelChoices(new Rng(1)).flatMap((choice) => Object.keys(choice)));
    expect([...drawn].sort()).toEqual([...MODEL_OPTION_KEYS].sort());
  });
});

for (const wire of ['2025', 'ext', 'both', 'client'] as const) {
  describe(`doctor: fuzzing what ${TITLES[wire]} sends`, () => {
    it.skipIf(ONLY_WIRE !== undefined && ONLY_WIRE !== wire)(
      `${ONLY_SEED === undefined ? CASES : 1} seeded cases keep the doctor's contract`,
      async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
        const failures: string[] = [];
        const outcomes = new Map<string, number>();
        for (const seed of seeds(wire)) {
          const { problems, trace, summary } = await runCase(wire, seed);
          const kind = summary.replace(/ \(\d+ faults\)$/, '');
          outcomes.set(kind, (outcomes.get(kind) ?? 0) + 1);
          if (problems.length > 0 || VERBOSE) {
            const lines = trace.length > 120 ? [...trace.slice(0, 20), '…', ...trace.slice(-100)] : trace;
            console.log(
              `DOCTOR_FUZZ_WIRE=${wire} DOCTOR_FUZZ_SEED=${seed}: ${summary}\n  ${problems.join('\n  ')}\n  trace:\n    ${lines.join('\n    ')}`,
            );
            if (problems.length > 0) failures.push(`${wire} seed ${seed}: ${problems.join('; ')}`);
          }
        }
        if (process.env.DOCTOR_FUZZ_SUMMARY === '1')
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
