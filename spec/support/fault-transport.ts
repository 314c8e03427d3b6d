/**
 * A fault-injecting wrapper around an SDK `Transport`, seeded for reproducibility.
 *
 * Wrap one end of a connection (by default the client's end: `side: 'client'`). Rules are set per
 * flow, `clientToServer` and `serverToClient`, and each rule can be narrowed to message kinds
 * (`request`, `notification`, `response`, `error`) and methods (a response or error matches the
 * method of the request it answers). A matching rule draws, in this fixed order, the chance to
 * `close` the connection, `failSend` (the wrapped side's `send()` rejects; only for the flow that
 * side sends), `drop`, `delay` (by `delayMs`), `duplicate` and `reorder` (hold the message until the
 * next one of the same flow has gone, or `reorderHoldMs`). Each flow has its own mulberry32
 * stream derived from `seed`, so the same seed and the same traffic give the same faults.
 *
 * ```ts
 * const faulty = new FaultTransport(clientSide, {
 *   seed: 7,
 *   serverToClient: [{ kinds: 'response', drop: 0.1 }, { kinds: 'notification', duplicate: 0.05 }],
 * });
 * await client.connect(faulty);
 * faulty.events; // what happened to every message
 * ```
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { prng } from '../../bench/stats.js';

export type MessageKind = 'request' | 'notification' | 'response' | 'error';
export type Flow = 'clientToServer' | 'serverToClient';
export type FaultAction = 'pass' | 'drop' | 'delay' | 'duplicate' | 'reorder' | 'fail' | 'close';

export interface FaultRule {
  /** Message kinds this rule applies to. @default all */
  readonly kinds?: MessageKind | readonly MessageKind[];
  /** Methods this rule applies to (responses: the method of the request they answer). @default all */
  readonly methods?: string | RegExp | readonly string[];
  /** Apply to the first `limit` matching messages only. */
  readonly limit?: number;
  readonly drop?: number;
  readonly duplicate?: number;
  readonly delay?: number;
  /** Delay in ms, fixed or drawn uniformly from `[min, max]`. @default 10 */
  readonly delayMs?: number | readonly [number, number];
  readonly reorder?: number;
  readonly failSend?: number;
  readonly close?: number;
  /** Close the connection on the `closeAfter`-th matching message (which is lost). */
  readonly closeAfter?: number;
}

export interface FaultOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Which end `inner` is. @default 'client' */
  readonly side?: 'client' | 'server';
  readonly clientToServer?: FaultRule | readonly FaultRule[];
  readonly serverToClient?: FaultRule | readonly FaultRule[];
  /** Timer used for delays and reorder holds (e.g. a ManualClock's). @default global setTimeout */
  readonly setTimeout?: (fn: () => void, ms: number) => unknown;
  /** Longest time a reordered message waits for a successor. @default 20 */
  readonly reorderHoldMs?: number;
}

/** What happened to one message (a duplicate or delayed message may log more than one action). */
export interface FaultEvent {
  readonly seq: number;
  readonly flow: Flow;
  readonly kind: MessageKind;
  readonly method: string | undefined;
  readonly id: string | number | undefined;
  readonly action: FaultAction;
}

/** mulberry32: a tiny seeded PRNG returning values in [0, 1) (the benchmark's own). */
export const mulberry32: (seed: number) => () => number = prng;

/** The kind of a JSON-RPC message. */
export function kindOf(message: JSONRPCMessage): MessageKind {
  const m = message as { method?: unknown; id?: unknown; error?: unknown };
  if (typeof m.method === 'string') return m.id === undefined ? 'notification' : 'request';
  return m.error === undefined ? 'response' : 'error';
}

const list = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

interface Flowing {
  readonly rules: readonly FaultRule[];
  readonly random: () => number;
  readonly hits: Map<FaultRule, number>;
  readonly held: Array<() => void>;
}

/** A `Transport` that drops, delays, duplicates, reorders, fails and closes, reproducibly. */
export class FaultTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Every decision, in order. */
  readonly events: FaultEvent[] = [];
  private flows: Record<Flow, Flowing>;
  private readonly methods = new Map<string, string>();
  private closed = false;
  private seq = 0;
  private readonly outFlow: Flow;
  private readonly inFlow: Flow;

  constructor(
    private readonly inner: Transport,
    private readonly options: FaultOptions = {},
  ) {
    this.outFlow = options.side === 'server' ? 'serverToClient' : 'clientToServer';
    this.inFlow = this.outFlow === 'clientToServer' ? 'serverToClient' : 'clientToServer';
    this.flows = this.makeFlows(options);
    inner.onmessage = (message, extra) => this.route(this.inFlow, message, extra);
    let notified = false;
    inner.onclose = () => {
      // InMemoryTransport fires onclose twice on the side that closes; report it once.
      this.closed = true;
      if (notified) return;
      notified = true;
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  /** Replaces the rules (e.g. after `connect`, so the handshake is left alone); keeps the PRNG streams going. */
  configure(rules: Pick<FaultOptions, Flow>): void {
    for (const flow of ['clientToServer', 'serverToClient'] as const) {
      this.flows[flow] = { ...this.flows[flow], rules: list(rules[flow]), hits: new Map() };
    }
  }

  /** Number of events per action (optionally for one flow). */
  stats(flow?: Flow): Record<FaultAction, number> {
    const stats: Record<FaultAction, number> = {
      pass: 0,
      drop: 0,
      delay: 0,
      duplicate: 0,
      reorder: 0,
      fail: 0,
      close: 0,
    };
    for (const event of this.events) if (flow === undefined || event.flow === flow) stats[event.action] += 1;
    return stats;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  /** Closes the connection now (both ends see `onclose`). */
  close(): Promise<void> {
    this.closed = true;
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return Promise.reject(new Error('FaultTransport: connection closed'));
    const failed = this.route(this.outFlow, message, options);
    return failed ? Promise.reject(new Error('FaultTransport: injected send failure')) : Promise.resolve();
  }

  private makeFlows(options: FaultOptions): Record<Flow, Flowing> {
    const seed = options.seed ?? 1;
    const make = (flow: Flow, salt: number): Flowing => ({
      rules: list(options[flow]),
      random: mulberry32(seed ^ salt),
      hits: new Map(),
      held: [],
    });
    return { clientToServer: make('clientToServer', 0x9e3779b9), serverToClient: make('serverToClient', 0x85ebca6b) };
  }

  /** Applies the faults of `flow` to one message; returns true when the send must fail. */
  private route(flow: Flow, message: JSONRPCMessage, extra: unknown): boolean {
    const kind = kindOf(message);
    const m = message as { id?: string | number; method?: string };
    let method = m.method;
    if (kind === 'request') this.methods.set(`${flow}:${String(m.id)}`, method ?? '');
    if (kind === 'response' || kind === 'error') {
      method = this.methods.get(`${flow === 'clientToServer' ? 'serverToClient' : 'clientToServer'}:${String(m.id)}`);
    }
    const state = this.flows[flow];
    const log = (action: FaultAction): void => {
      this.events.push({ seq: this.seq++, flow, kind, method, id: m.id, action });
    };
    let close = false;
    let fail = false;
    let drop = false;
    let delay = 0;
    let duplicate = false;
    let reorder = false;
    for (const rule of state.rules) {
      if (!this.matches(rule, kind, method)) continue;
      const hits = (state.hits.get(rule) ?? 0) + 1;
      state.hits.set(rule, hits);
      if (rule.limit !== undefined && hits > rule.limit) continue;
      const r = Array.from({ length: 7 }, () => state.random());
      close ||= r[0]! < (rule.close ?? 0) || hits === rule.closeAfter;
      fail ||= flow === this.outFlow && r[1]! < (rule.failSend ?? 0);
      drop ||= r[2]! < (rule.drop ?? 0);
      if (r[3]! < (rule.delay ?? 0)) {
        const [low, high] = typeof rule.delayMs === 'object' ? rule.delayMs : [rule.delayMs ?? 10, rule.delayMs ?? 10];
        delay = Math.max(delay, Math.round(low + (high - low) * r[4]!));
      }
      duplicate ||= r[5]! < (rule.duplicate ?? 0);
      reorder ||= r[6]! < (rule.reorder ?? 0);
    }
    if (close) {
      log('close');
      void this.close();
      return flow === this.outFlow;
    }
    if (fail || drop) {
      log(fail ? 'fail' : 'drop');
      return fail;
    }
    const deliver = (): void => {
      if (this.closed) return;
      if (flow !== this.outFlow) this.onmessage?.(message, extra as MessageExtraInfo | undefined);
      else
        this.inner
          .send(message, extra as TransportSendOptions | undefined)
          .catch((error: Error) => this.onerror?.(error));
    };
    const once = (): void => {
      deliver();
      if (duplicate) deliver();
    };
    if (duplicate) log('duplicate');
    if (reorder) {
      // Held back until the next message of this flow has gone (or reorderHoldMs passed).
      log('reorder');
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        if (delay > 0) this.later(delay, once);
        else once();
      };
      state.held.push(release);
      this.later(this.options.reorderHoldMs ?? 20, release);
      return false;
    }
    const releaseHeld = (): void => {
      for (const release of state.held.splice(0)) release();
    };
    if (delay > 0) {
      log('delay');
      this.later(delay, () => {
        once();
        releaseHeld();
      });
      return false;
    }
    if (!duplicate) log('pass');
    once();
    releaseHeld();
    return false;
  }

  private matches(rule: FaultRule, kind: MessageKind, method: string | undefined): boolean {
    const kinds = list(rule.kinds);
    if (kinds.length > 0 && !kinds.includes(kind)) return false;
    if (rule.methods === undefined) return true;
    if (method === undefined) return false;
    if (rule.methods instanceof RegExp) return rule.methods.test(method);
    return list(rule.methods).includes(method);
  }

  private later(ms: number, fn: () => void): void {
    (this.options.setTimeout ?? setTimeout)(fn, ms);
  }
}
