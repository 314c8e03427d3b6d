/**
 * The raw dispatch under both ports: the library's requests go straight onto the SDK client's
 * transport with ids of their own, and their answers are taken off the transport before the SDK
 * sees them. Inbound requests and notifications pass through taps first, then on to the SDK (and
 * so to the user's own handlers), unless a tap answers or consumes them.
 *
 * This uses the transport's public surface only (`send`, `onmessage`, `onclose`), which is the
 * same in both SDK majors. A transport carries one wrapper however many TaskClients share it.
 */
import { randomUUID } from 'node:crypto';
import type { McpTransport } from '../types.js';
import { onAbort } from '../util/abort.js';
import {
  PortError,
  type Era,
  type JsonObject,
  type NotificationTap,
  type PortRequestOptions,
  type RequestTap,
  type SdkMajor,
  type ServerIdentity,
  type SessionPort,
} from './port.js';

/** The structural transport both SDKs provide. */
export type TransportLike = Pick<McpTransport, 'send' | 'onmessage' | 'onclose' | 'sessionId'>;

/** What a port reads from its SDK client (one implementation per SDK major). */
export interface SdkAccess {
  readonly sdk: SdkMajor;
  transport(): TransportLike | undefined;
  era(): Era;
  protocolVersion(): string | undefined;
  serverCapabilities(): JsonObject | undefined;
  serverIdentity(): ServerIdentity | undefined;
  clientCapabilities(): JsonObject;
  /** The per-request `_meta` envelope of the modern era (with `declare` merged in); `undefined` on legacy. */
  envelope(declare: JsonObject | undefined): JsonObject | undefined;
  /** The HTTP status of a failed transport send, if the error carries one. */
  httpStatus(error: unknown): number | undefined;
  hasOwnHandler(method: string): boolean;
  close(): Promise<void>;
}

interface Pending {
  readonly method: string;
  readonly decode: (result: unknown) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: PortError) => void;
  readonly timers: PortRequestOptions['timers'];
  timer: unknown;
  off: (() => void) | undefined;
  /**
   * Aborts the HTTP request that carries this one, on a transport with a stream per request in the
   * modern era: closing that stream is how such a request is cancelled (not a notification).
   */
  readonly post: AbortController | undefined;
}

type Inner = (message: unknown, extra?: unknown) => void;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Prefix of every request id the library sends; unique per transport, so ids never collide. */
function idPrefix(): string {
  return `mcp-task-client:${randomUUID().slice(0, 8)}:`;
}

/** A {@link SessionPort} over an SDK client's transport. */
export class RawSession implements SessionPort {
  readonly sdk: SdkMajor;
  private readonly transport: TransportLike;
  private readonly prefix = idPrefix();
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly requestTaps = new Map<string, RequestTap[]>();
  private readonly missing = new Map<string, (params: JsonObject) => Error>();
  private readonly notificationTaps = new Map<string, NotificationTap[]>();
  private readonly closeListeners = new Set<() => void>();
  /** Inbound requests this port is answering, by JSON-RPC id: aborted when the server cancels them. */
  private readonly answering = new Map<string | number, AbortController>();
  private isClosed = false;
  /** The SDK's own message handler, behind the wrapper. */
  private readonly inner: Inner | undefined;

  constructor(private readonly access: SdkAccess) {
    this.sdk = access.sdk;
    const transport = access.transport();
    if (transport === undefined) throw new TypeError('The SDK client is not connected');
    this.transport = transport;
    this.inner = transport.onmessage as Inner | undefined;
    transport.onmessage = ((message: unknown, extra?: unknown) => {
      if (!this.intercept(message)) this.inner?.call(transport, message, extra);
    });
    const previousClose = transport.onclose;
    transport.onclose = () => {
      previousClose?.call(transport);
      this.shutDown();
    };
  }

  era(): Era {
    return this.access.era();
  }

  protocolVersion(): string | undefined {
    return this.access.protocolVersion();
  }

  serverCapabilities(): JsonObject | undefined {
    return this.access.serverCapabilities();
  }

  serverIdentity(): ServerIdentity | undefined {
    return this.access.serverIdentity();
  }

  clientCapabilities(): JsonObject {
    return this.access.clientCapabilities();
  }

  sessionId(): string | undefined {
    const id = this.transport.sessionId;
    return typeof id === 'string' && id !== '' ? id : undefined;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  hasOwnHandler(method: string): boolean {
    return this.access.hasOwnHandler(method);
  }

  closeClient(): Promise<void> {
    return this.access.close();
  }

  request<T>(
    method: string,
    params: JsonObject | undefined,
    decode: (result: unknown) => T,
    options: PortRequestOptions,
  ): Promise<T> {
    if (this.isClosed) return Promise.reject(new PortError('closed', 'Connection closed'));
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    const id = `${this.prefix}${this.nextId++}`;
    const envelope = this.access.envelope(options.declare);
    const body = envelope === undefined ? params : { ...params, _meta: { ...envelope, ...(isObject(params?._meta) ? params._meta : {}) } };
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = {
        method,
        decode,
        resolve: resolve as (value: unknown) => void,
        reject,
        timers: options.timers,
        timer: undefined,
        off: undefined,
        post: this.perRequestStream() ? new AbortController() : undefined,
      };
      this.pending.set(id, entry);
      // An infinite timeout (a subscription that lasts until replaced) arms no timer.
      if (Number.isFinite(options.timeoutMs)) {
        entry.timer = options.timers.after(
          options.timeoutMs,
          () => this.giveUp(id, new PortError('timeout', 'Request timed out', { data: { timeout: options.timeoutMs } })),
          options.weak === true,
        );
      }
      if (signal !== undefined) entry.off = onAbort(signal, () => this.giveUp(id, abortedError(signal)));
      const message: JsonObject = body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body };
      this.send(message, entry.post === undefined ? undefined : { requestSignal: entry.post.signal }).catch((error: unknown) => {
        const status = this.access.httpStatus(error);
        const text = error instanceof Error ? error.message : String(error);
        // A Streamable HTTP server that no longer knows the session answers 404 (or 400 naming the
        // session): the connection is lost, not the request.
        const lost = status === 404 || (status === 400 && /session/i.test(text));
        this.fail(id, new PortError(lost ? 'session' : 'send', text, { httpStatus: status, cause: error }));
      });
    });
  }

  notify(method: string, params: JsonObject): void {
    if (this.isClosed) return;
    const envelope = this.access.envelope(undefined);
    const body = envelope === undefined ? params : { ...params, _meta: { ...envelope, ...(isObject(params._meta) ? params._meta : {}) } };
    this.send({ jsonrpc: '2.0', method, params: body }).catch(() => {});
  }

  onRequest(method: string, tap: RequestTap, missing?: (params: JsonObject) => Error): () => void {
    if (missing !== undefined) this.missing.set(method, missing);
    return addTap(this.requestTaps, method, tap);
  }

  onNotification(method: string, tap: NotificationTap): () => void {
    return addTap(this.notificationTaps, method, tap);
  }

  onClose(listener: () => void): () => void {
    if (this.isClosed) {
      queueMicrotask(listener);
      return () => {};
    }
    const once = (): void => listener();
    this.closeListeners.add(once);
    return () => {
      this.closeListeners.delete(once);
    };
  }

  /** Writes one message on the transport. */
  private send(message: JsonObject, options?: { requestSignal: AbortSignal }): Promise<void> {
    return (this.transport.send as (message: JsonObject, options?: unknown) => Promise<void>).call(this.transport, message, options);
  }

  /** Stops waiting for a request and tells the server ([R27]: it is still open). */
  private giveUp(id: string, error: PortError): void {
    const post = this.pending.get(id)?.post;
    if (!this.pending.has(id)) return;
    this.fail(id, error);
    if (post !== undefined) {
      post.abort();
      return;
    }
    const reason = error.kind === 'timeout' ? 'Request timed out' : error.message;
    this.notify('notifications/cancelled', { requestId: id, reason });
  }

  /** True on a modern-era transport that carries each request on a stream of its own (Streamable HTTP). */
  private perRequestStream(): boolean {
    return (this.transport as { hasPerRequestStream?: unknown }).hasPerRequestStream === true && this.access.era() === 'modern';
  }

  private fail(id: string, error: PortError): void {
    const entry = this.take(id);
    entry?.reject(error);
  }

  private take(id: string): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    if (entry.timer !== undefined) entry.timers.cancel(entry.timer);
    entry.off?.();
    return entry;
  }

  /** Handles a message the library owns; returns false to pass it on to the SDK. */
  private intercept(message: unknown): boolean {
    if (!isObject(message)) return false;
    const { id, method } = message;
    if (typeof method !== 'string') {
      if (typeof id !== 'string' || !id.startsWith(this.prefix)) return false;
      this.settle(id, message);
      return true; // an answer to one of ours, even a late one, is never the SDK's
    }
    const params = isObject(message.params) ? message.params : {};
    if (id === undefined || id === null) return this.notification(method, params);
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    return this.inbound(id, method, params);
  }

  private settle(id: string, message: JsonObject): void {
    const entry = this.take(id);
    if (entry === undefined) return;
    if ('result' in message) {
      const result = message.result;
      if (!isObject(result) || (result._meta !== undefined && !isObject(result._meta))) {
        const what = isObject(result) ? 'its _meta is not an object' : 'the result is not an object';
        entry.reject(new PortError('malformed', `Malformed ${entry.method} reply from server: ${what}`));
        return;
      }
      let value: unknown;
      try {
        value = entry.decode(message.result);
      } catch (error) {
        entry.reject(new PortError('malformed', error instanceof Error ? error.message : String(error), { cause: error }));
        return;
      }
      entry.resolve(value);
      return;
    }
    const error = message.error;
    if (isObject(error) && Number.isInteger(error.code) && typeof error.message === 'string') {
      entry.reject(new PortError('server', error.message, { code: error.code as number, data: error.data }));
      return;
    }
    entry.reject(new PortError('malformed', `Malformed ${entry.method} reply from server: neither a result nor a valid error`));
  }

  private notification(method: string, params: JsonObject): boolean {
    if (method === 'notifications/cancelled') {
      const requestId = params.requestId;
      const controller = typeof requestId === 'string' || typeof requestId === 'number' ? this.answering.get(requestId) : undefined;
      if (controller !== undefined) {
        controller.abort(new Error(typeof params.reason === 'string' ? params.reason : 'The server cancelled the request'));
        return true;
      }
    }
    // Every tap sees the notification (several TaskClients may share this port); it reaches the
    // SDK unless one of them consumed it.
    let consumed = false;
    for (const tap of this.notificationTaps.get(method) ?? []) {
      if (tap(params) === true) consumed = true;
    }
    return consumed;
  }

  private inbound(id: string | number, method: string, params: JsonObject): boolean {
    const taps = this.requestTaps.get(method);
    if (taps === undefined || taps.length === 0) return false;
    const controller = new AbortController();
    for (const tap of taps) {
      const answer = tap({ method, params, signal: controller.signal });
      if (answer === undefined) continue;
      this.answering.set(id, controller);
      void this.answer(id, method, params, answer, taps.slice(taps.indexOf(tap) + 1), controller);
      return true;
    }
    const refusal = this.refusal(method, params);
    if (refusal === undefined) return false;
    this.answering.set(id, controller);
    void this.answer(id, method, params, Promise.reject(refusal), [], controller);
    return true;
  }

  /** The error for a request no tap answered and the SDK has no handler for, if one was given. */
  private refusal(method: string, params: JsonObject): Error | undefined {
    const missing = this.missing.get(method);
    return missing === undefined || this.access.hasOwnHandler(method) ? undefined : missing(params);
  }

  /** Sends the answer of a tap (or of a later tap, or of the SDK's own handler when all pass). */
  private async answer(
    id: string | number,
    method: string,
    params: JsonObject,
    first: Promise<JsonObject | undefined>,
    rest: RequestTap[],
    controller: AbortController,
  ): Promise<void> {
    let reply: JsonObject;
    try {
      let result = await first;
      for (const tap of rest) {
        if (result !== undefined) break;
        result = await tap({ method, params, signal: controller.signal });
      }
      if (result === undefined) {
        const refusal = this.refusal(method, params);
        if (refusal !== undefined) throw refusal;
        this.answering.delete(id);
        // Every tap passed: the SDK answers, with the user's handler or its own -32601.
        this.passOn(id, method, params);
        return;
      }
      reply = { jsonrpc: '2.0', id, result };
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
      const code = typeof e?.code === 'number' && Number.isInteger(e.code) ? e.code : -32603;
      const text = typeof e?.message === 'string' ? e.message : String(error);
      reply = { jsonrpc: '2.0', id, error: e?.data === undefined ? { code, message: text } : { code, message: text, data: e.data } };
    }
    this.answering.delete(id);
    // A request the server cancelled gets no answer.
    if (controller.signal.aborted || this.isClosed) return;
    this.send(reply).catch(() => {});
  }

  /** Hands a request straight to the SDK's handler behind the wrapper. */
  private passOn(id: string | number, method: string, params: JsonObject): void {
    this.inner?.call(this.transport, { jsonrpc: '2.0', id, method, params });
  }

  private shutDown(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const id of [...this.pending.keys()]) this.fail(id, new PortError('closed', 'Connection closed'));
    for (const controller of this.answering.values()) controller.abort(new Error('Connection closed'));
    this.answering.clear();
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) listener();
  }
}

function abortedError(signal: AbortSignal): PortError {
  return new PortError('aborted', 'Request aborted', { cause: signal.reason });
}

function addTap<T>(map: Map<string, T[]>, method: string, tap: T): () => void {
  map.set(method, [...(map.get(method) ?? []), tap]);
  return () => {
    const rest = (map.get(method) ?? []).filter((t) => t !== tap);
    if (rest.length > 0) map.set(method, rest);
    else map.delete(method);
  };
}
