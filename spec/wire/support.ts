/**
 * Support for the wire contract suite: the driver API every wire factory implements, manual
 * timers (deterministic request timeouts), and small observation helpers.
 *
 * The driver speaks of tasks in protocol-neutral terms (a tool call, a task's status, its final
 * payload, a push, a dropped connection); each factory translates them into its server's own
 * protocol form, so the same contract runs against every {@link TaskWire}.
 */
import { expect, it } from 'vitest';
import { TaskProtocolError, TaskRpcError, type Task } from '../../lib/index.js';
import type { ErrorClass, TaskPayload, TaskWire, Timers, WireRequestOptions } from '../../lib/internal.js';
import { flush, rejection } from '../helpers.js';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** The operations a driver can script replies for: a tool call, reading a task, fetching its payload, cancelling it. */
export type WireOp = 'call' | 'get' | 'payload' | 'cancel';

/**
 * The task fields a server reports when it creates a task. Every field is optional; `null` for
 * `ttl` or `pollInterval` means the server leaves the key out (D1, D2).
 */
export interface TaskFields {
  readonly taskId?: string;
  readonly status?: 'working' | 'input_required';
  readonly statusMessage?: string;
  readonly ttl?: number | null;
  readonly pollInterval?: number | null;
  readonly createdAt?: string;
  readonly lastUpdatedAt?: string;
}

/** A JSON-RPC error object, as a server sends it. */
export interface ServerError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * How a task ends: with a tool result (a completed result, an `isError` result, or a bare object
 * such as `{}` for the meta-only shape of D6), or with a JSON-RPC error ([V17], [V18], D6).
 */
export type FinalPayload =
  { readonly kind: 'result'; readonly result: Json } | { readonly kind: 'error'; readonly error: ServerError };

/** A cancellation notice the client sent about one of its requests ([R27]). */
export interface CancelNotice {
  /** False when the server had already answered the request the notice names. */
  readonly open: boolean;
}

/**
 * Scripts the server side of one connection, in protocol-neutral terms. Every one-shot override
 * (`malformedNext`, `otherTaskNext`, `failNext`, `holdNext`) applies to the next request of that
 * operation only; several queue up in order.
 */
export interface WireDriver {
  /** The wire under test, connected to the scripted server. */
  readonly wire: TaskWire;
  /** Manual timers: nothing fires until {@link ManualTimers.advance}. */
  readonly timers: ManualTimers;
  /** Request options on {@link timers} (timeout 10 s unless overridden). */
  options(overrides?: Partial<WireRequestOptions>): WireRequestOptions;

  /** The next tool call creates a task with these fields; returns its id. */
  createOnNextCall(fields?: TaskFields): string;
  /** The next tool call is answered at once with this tool result (whether or not it asked for a task). */
  answerNextCall(result: Json): void;
  /** Names and arguments of the tool calls the server received, in order. */
  calls(): ReadonlyArray<{ readonly name: unknown; readonly arguments: unknown }>;

  /** Moves a task to a non-terminal status. */
  setStatus(taskId: string, status: 'working' | 'input_required', statusMessage?: string): void;
  /** Ends a task with its final payload. */
  finish(taskId: string, status: 'completed' | 'failed', payload: FinalPayload, statusMessage?: string): void;
  /** The server forgets the task (expiry): later requests about it are refused as unknown. */
  vanish(taskId: string): void;

  /** Pushes the task's current snapshot to the client (a status notification). */
  push(taskId: string): void;
  /** Pushes a status message the client cannot decode. */
  pushMalformed(): void;

  /** The next reply to `op` is malformed. */
  malformedNext(op: WireOp): void;
  /** The next reply to `op` is about another task than the one asked for. */
  otherTaskNext(op: Exclude<WireOp, 'call'>): void;
  /** The next `op` fails with this server error. */
  failNext(op: WireOp, error: ServerError): void;
  /**
   * The next `op` reaches the server but gets no answer until `release` is called (never, to
   * withhold it); once released it is answered from the state at that time.
   */
  holdNext(op: WireOp): () => void;

  /** How many `op` requests reached the server. */
  count(op: WireOp): number;
  /** Cancellation notices the client sent ([R27]). */
  cancelNotices(): readonly CancelNotice[];
  /** Drops the connection from the server side. */
  drop(): Promise<void>;
  /** Tears everything down (idempotent). */
  close(): Promise<void>;
}

/** Starts a scripted server of the wire's protocol form and a connected wire. */
export type WireFactory = () => Promise<WireDriver>;

/** One armed timer. */
interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  readonly weak: boolean;
}

/** {@link Timers} moved by hand: timers run in due order while {@link advance} moves time. */
export class ManualTimers implements Timers {
  private time: number;
  private seq = 0;
  private entries: Entry[] = [];
  /** Every timer ever armed, with its delay and weakness. */
  readonly armed: Array<{ readonly ms: number; readonly weak: boolean }> = [];

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.time = start;
  }

  /** The current time in ms. */
  now = (): number => this.time;

  after(ms: number, run: () => void, weak = false): unknown {
    const entry: Entry = { at: this.time + Math.max(0, ms), seq: this.seq++, run, weak };
    this.entries.push(entry);
    this.armed.push({ ms, weak });
    return entry;
  }

  cancel(timer: unknown): void {
    this.entries = this.entries.filter((entry) => entry !== timer);
  }

  /** Timers armed and not yet run or cancelled. */
  get pending(): number {
    return this.entries.length;
  }

  /** Moves time by `ms`, running due timers in order and letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await flush();
      this.entries.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.entries[0];
      if (next === undefined || next.at > end) break;
      this.entries.shift();
      this.time = Math.max(this.time, next.at);
      next.run();
    }
    this.time = end;
    await flush();
  }
}

/** The state of a promise, readable at any time. */
export interface Tracked<T> {
  readonly settled: boolean;
  readonly value: T | undefined;
  readonly error: unknown;
  readonly rejected: boolean;
}

/** Tracks `promise` without awaiting it (a rejection counts as handled). */
export function track<T>(promise: Promise<T>): Tracked<T> {
  const state: { settled: boolean; value: T | undefined; error: unknown; rejected: boolean } = {
    settled: false,
    value: undefined,
    error: undefined,
    rejected: false,
  };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.rejected = true;
      state.error = error;
    },
  );
  return state;
}

/** A tool result with one text block. */
export const text = (value: string): Json => ({ content: [{ type: 'text', text: value }] });

/**
 * Contract tests that a wire may be known to fail (a library bug on record):
 * - `failed-with-invalid-params`: a task failed with a -32602 JSON-RPC error read as vanished;
 * - `task-id-in-cause`: a message along a wire error's cause chain repeats the task id;
 * - `result-type-kept`: a tool result keeps the protocol's `resultType` (2026 replies carry one).
 */
export type DeviationId = 'failed-with-invalid-params' | 'task-id-in-cause' | 'result-type-kept';

/** Known deviations of one wire, each with its reason: those tests run as expected failures. */
export type KnownDeviations = Readonly<Partial<Record<DeviationId, string>>>;

/** Gives each test the driver of its own fresh connection. */
export interface Rig {
  readonly driver: WireDriver;
  /** The wire's known deviations. */
  readonly known: KnownDeviations;
}

/**
 * Registers a contract test that can be a known deviation: then it runs as `it.fails`, so the
 * suite stays green while the bug stands and turns red once it is fixed (drop the entry then).
 * `WIRE_CONTRACT_STRICT=1` runs known deviations as ordinary tests, to see how they fail.
 */
export function deviable(rig: Rig, id: DeviationId, title: string, test: () => Promise<void>): void {
  const reason = rig.known[id];
  if (reason === undefined || process.env.WIRE_CONTRACT_STRICT === '1') it(title, test);
  else it.fails(`${title} [known deviation: ${reason}]`, test);
}

/** Starts a tool call the server turns into a task; returns the task's id and decoded snapshot. */
export async function startTask(d: WireDriver, fields: TaskFields = {}): Promise<{ id: string; task: Task }> {
  const id = d.createOnNextCall(fields);
  const start = await d.wire.startToolCall({ name: 'job', arguments: { n: 1 }, task: {} }, d.options());
  if (start.kind !== 'task') throw new Error(`expected a task, got ${start.kind}`);
  return { id, task: start.snapshot.task };
}

/** The final payload the seam promises: `getPayload` when fetched, else the terminal snapshot's. */
export async function finalPayload(d: WireDriver, taskId: string): Promise<TaskPayload | undefined> {
  if (d.wire.features().payloadFetch) return d.wire.getPayload(taskId, d.options());
  return (await d.wire.getTask(taskId, d.options())).payload;
}

/** Awaits the failure of `promise`, checks it is a wire error, and returns how the wire classifies it. */
export async function failureClass(d: WireDriver, promise: Promise<unknown>): Promise<ErrorClass> {
  const error = await rejection(promise);
  // The seam: failed requests are TaskRpcError, malformed replies TaskProtocolError.
  expect(
    error instanceof TaskRpcError || error instanceof TaskProtocolError,
    `a wire error, got ${String(error)}`,
  ).toBe(true);
  return d.wire.classify(error);
}
