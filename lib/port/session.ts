/**
 * The raw dispatch under both ports: the library's requests go straight onto the SDK client's
 * transport with ids of their own, and their answers are taken off the transport before the SDK
 * sees them. Inbound requests and notifications pass through taps first, then on to the SDK (and
 * so to the user's own handlers), unless a tap answers or consumes them.
 *
 * This uses the transport's public surface only (`send`, `onmessage`, `onclose`), which is the
 * same in both SDK majors. A transport carries one wrapper however many TaskClients share it.
 */
import { onAbort } from '../util/abort.js';
import {
  PortError,
  type Era,
  type JsonObject,
  type NotificationTap,
  type ErrorMapper,
  type PortRequestOptions,
  type ResultDecoder,
  type RequestTap,
  type SdkMajor,
  type ServerIdentity,
  type SessionPort,
  type TransportInfo,
} from './port.js';
import { Pending, TimeoutLanes } from './pending.js';
import { capture, captured } from '../util/capture.js';
import { abortedError, refused, sendError, settleReply } from './reply.js';
import { deliver, type Sink } from '../util/deliver.js';
import { noop } from '../util/noop.js';
import { idPrefix, issued, withEnvelope, withMeta } from './outgoing.js';
import { InboundRouter, type InboundHost } from './inbound.js';
import { HostRequests, watchHostRequests } from './host-requests.js';
import type { SdkAccess, TransportLike } from './sdk-access.js';
import { transportInfoOf } from './transport-info.js';
import { abandon } from './abandon.js';
import { instrumentedConnection } from './connection-info.js';
import type { NotificationInstrument } from '../api/index.js';
import { isObject } from '../util/json.js';
import { messageOf } from '../util/text.js';

type Inner = (message: unknown, extra?: unknown) => void;

/** What a request's `send` tells a transport with a stream per request (SDK v2's Streamable HTTP). */
interface SendOptions {
  readonly requestSignal: AbortSignal;
  readonly onRequestStreamEnd?: () => void;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** A {@link SessionPort} over an SDK client's transport. */
export class RawSession implements SessionPort, InboundHost {
  readonly sdk: SdkMajor;
  private readonly transport: TransportLike;
  private readonly prefix = idPrefix();
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();
  /** Shared request timeouts. */
  private readonly lanes = new TimeoutLanes();
  /** Whether the transport carries each request on a stream of its own (read once, on first use). */
  private streams: boolean | undefined = undefined;
  /** The taps on inbound requests and notifications, and the inbound requests being answered. */
  private readonly router = new InboundRouter(this);
  private readonly closeListeners = new Set<() => void>();
  private isClosed = false;
  /** The SDK's own message handler, behind the wrapper. */
  private readonly inner: Inner | undefined;
  /** The host's own requests through the SDK client that are still open (see host-requests.ts). */
  private readonly host = new HostRequests();

  constructor(private readonly access: SdkAccess) {
    this.sdk = access.sdk;
    const transport = access.transport();
    if (transport === undefined) throw new TypeError('The SDK client is not connected');
    this.transport = transport;
    this.inner = transport.onmessage as Inner | undefined;
    transport.onmessage = (message: unknown, extra?: unknown) => {
      if (!this.intercept(message)) this.inner?.call(transport, message, extra);
    };
    const previousClose = transport.onclose;
    transport.onclose = () => {
      // A throwing handler of the SDK's (or the user's `client.onclose`) must not keep this port
      // open with its requests pending for good.
      try {
        previousClose?.call(transport);
      } finally {
        this.shutDown();
      }
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

  hostRequests(): number {
    return this.host.size;
  }

  /** Notes the requests the host sends through `client` (this port's SDK client) from now on. */
  watchHost(client: object): void {
    watchHostRequests(client, this.host);
  }

  sessionId(): string | undefined {
    const id = this.transport.sessionId;
    return typeof id === 'string' && id !== '' ? id : undefined;
  }

  sendsHeaders(): boolean {
    return this.perRequestStream();
  }

  transportInfo(): TransportInfo {
    return transportInfoOf(this.transport);
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
    decode: ResultDecoder<T>,
    options: PortRequestOptions,
    mapError?: ErrorMapper,
    context?: string,
    declare?: JsonObject,
    fresh = false,
  ): Promise<T> {
    const refusal = this.refusal(options);
    if (refusal !== undefined) return Promise.reject(refused(refusal, method, mapError, context));
    const promise = new Promise<T>(capture);
    const resolve = captured.resolve!;
    const reject = captured.reject!;
    captured.resolve = captured.reject = undefined;
    this.open(
      method,
      params,
      decode,
      options,
      mapError,
      context,
      declare,
      fresh,
      resolve,
      reject,
      undefined,
      undefined,
    );
    return promise;
  }

  requestInto<T, Token>(
    sink: Sink<T, Token>,
    token: Token,
    method: string,
    params: JsonObject | undefined,
    decode: ResultDecoder<T>,
    options: PortRequestOptions,
    mapError?: ErrorMapper,
    context?: string,
    declare?: JsonObject,
    fresh = false,
  ): void {
    const refusal = this.refusal(options);
    if (refusal !== undefined) deliver(sink, token, refused(refusal, method, mapError, context), true);
    else this.open(method, params, decode, options, mapError, context, declare, fresh, noop, noop, sink, token);
  }

  /** Why a request cannot be sent (the port closed, its signal aborted, its group stopped), if it cannot. */
  private refusal(options: PortRequestOptions): PortError | undefined {
    if (this.isClosed) return new PortError('closed', 'Connection closed');
    // A request with a group never reads `signal` (a task's options make its signal on first read).
    const group = options.group;
    if (group === undefined) return options.signal?.aborted === true ? abortedError(options.signal) : undefined;
    return group.stopped ? new PortError('aborted', 'Request aborted', { cause: group.stopReason }) : undefined;
  }

  /**
   * Sends a request no refusal stopped, its outcome going to `resolve` and `reject`, or to `sink`
   * with `token` (see {@link RawSession.requestInto}).
   */
  private open<T>(
    method: string,
    params: JsonObject | undefined,
    decode: ResultDecoder<T>,
    options: PortRequestOptions,
    mapError: ErrorMapper | undefined,
    context: string | undefined,
    declare: JsonObject | undefined,
    fresh: boolean,
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
    sink: Sink<T, unknown> | undefined,
    token: unknown,
  ): void {
    const group = options.group;
    const signal = group === undefined ? options.signal : undefined;
    const id = `${this.prefix}${this.nextId++}`;
    // Instrumentation: one read when unused. Its `_meta` entries go under the request's own.
    // Told of the connection it goes over: after a reconnection, another session than its call's.
    const watcher =
      options.instrument === undefined
        ? undefined
        : options.instrument.request?.({ method, id, connection: instrumentedConnection(this) });
    if (watcher?.meta !== undefined) {
      params = withMeta(params, watcher.meta);
      fresh = true; // a copy of its own now
    }
    const envelope = this.access.envelope(declare ?? options.declare);
    const body = envelope === undefined ? params : withEnvelope(params, envelope, fresh);
    const entry = new Pending(this, id, method, decode, resolve, reject, options.timers, group, mapError, context);
    if (sink !== undefined) {
      entry.sink = sink;
      entry.token = token;
    }
    if (watcher !== undefined) entry.watcher = watcher;
    if (options.quietTimeout === true) entry.quietTimeout = true;
    try {
      this.pending.set(id, entry);
      // An infinite timeout (a subscription that lasts until replaced, a blocking `tasks/result`
      // that waits for a human) arms no timer.
      const timeoutMs = options.timeoutMs;
      if (Number.isFinite(timeoutMs)) {
        const lane = this.lanes.get(options.timers, timeoutMs, options.weak === true);
        if (lane !== undefined) lane.add(entry);
        else entry.timer = options.timers.after(timeoutMs, () => entry.expire(timeoutMs), options.weak === true);
      }
      if (signal !== undefined) entry.off = onAbort(signal, () => this.giveUp(id, abortedError(signal)));
      group?.join(entry);
      const message: JsonObject =
        body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body };
      if (this.perRequestStream()) entry.post = new AbortController();
      // A transport that throws instead of rejecting fails the request the same way (typed, its
      // entry and timer released, and no notifications/cancelled for a request never sent).
      // A request stream (Streamable HTTP) that ends without the answer (a proxy cutting it, the
      // server dropping it) fails the request at once, rather than at its timeout (or never).
      // Headers of the request's own ([E32]) go only on such a transport, which takes them per send.
      const streamOptions: SendOptions | undefined =
        entry.post === undefined
          ? undefined
          : {
              requestSignal: entry.post.signal,
              onRequestStreamEnd: () => this.streamEnded(id),
              headers: options.headers,
            };
      let sent: Promise<void>;
      try {
        sent = this.send(message, streamOptions);
      } catch (error) {
        // Thrown, not rejected: failed at once, before anything else (an abort in the same
        // tick) could take it for a request the server got and send notifications/cancelled.
        this.sendFailed(id, error);
        return;
      }
      sent.then(undefined, (error: unknown) => this.sendFailed(id, error));
    } catch (error) {
      // Whatever threw while the request was set up fails the request, as a throw in a promise
      // executor would (its entry and timer released). Its watcher learns it could not be sent,
      // so that what it started (a span) ends.
      this.take(id);
      entry.watcher?.end(new PortError('send', messageOf(error), { cause: error }));
      entry.failRaw(error);
    }
  }

  cancelledByServer(requestId: unknown, reason: string): boolean {
    // Ids of ours carry this port's prefix; a late cancellation of one already answered is ours
    // too (the SDK never sent it), and changes nothing.
    if (typeof requestId !== 'string' || !requestId.startsWith(this.prefix)) return false;
    const entry = this.take(requestId);
    if (entry === undefined) return true;
    entry.reject(new PortError('closed', `The server cancelled the request: ${reason}`));
    // Its stream (Streamable HTTP) is closed on our side too; no notifications/cancelled is sent.
    entry.post?.abort();
    return true;
  }

  /** The stream that carries a request's answer ended; the answer, if it came, was taken before. */
  private streamEnded(id: string): void {
    if (this.pending.has(id)) this.fail(id, new PortError('closed', 'The request stream ended without an answer'));
  }

  /** A request could not be written on the transport. */
  private sendFailed(id: string, error: unknown): void {
    this.fail(id, sendError(error, this.access.httpStatus(error), this.sessionId() !== undefined));
  }

  sentRequest(id: unknown): boolean {
    return issued(id, this.prefix, this.nextId);
  }

  nextRequestId(): string {
    return `${this.prefix}${this.nextId}`;
  }

  /**
   * Also, for a notification an instrumentation watches (`notice`): its `_meta` entries go under the
   * notification's own, and it learns whether the notification was written.
   */
  notify(method: string, params: JsonObject, notice?: NotificationInstrument): void {
    if (this.isClosed) return;
    if (notice?.meta !== undefined) params = withMeta(params, notice.meta);
    const envelope = this.access.envelope(undefined);
    const body = envelope === undefined ? params : withEnvelope(params, envelope, false);
    this.trySend({ jsonrpc: '2.0', method, params: body }).then(
      () => notice?.end(undefined),
      (error: unknown) => notice?.end(sendError(error, undefined, false)),
    );
  }

  onRequest(method: string, tap: RequestTap, missing?: (params: JsonObject) => Error): () => void {
    return this.router.onRequest(method, tap, missing);
  }

  onNotification(method: string, tap: NotificationTap): () => void {
    return this.router.onNotification(method, tap);
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
  private send(message: JsonObject, options?: SendOptions): Promise<void> {
    return (this.transport.send as (message: JsonObject, options?: unknown) => Promise<void>).call(
      this.transport,
      message,
      options,
    );
  }

  /** Stops waiting for a request and tells the server ([R27]: it is still open; see abandon.ts). */
  giveUp(id: string, error: PortError): void {
    const entry = this.take(id);
    if (entry !== undefined) abandon(this, entry, error);
  }

  /** True on a modern-era transport that carries each request on a stream of its own (Streamable HTTP). */
  private perRequestStream(): boolean {
    return (this.streams ??=
      (this.transport as { hasPerRequestStream?: unknown }).hasPerRequestStream === true &&
      this.access.era() === 'modern');
  }

  private fail(id: string, error: PortError): void {
    const entry = this.take(id);
    entry?.reject(error);
  }

  private take(id: string): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    entry.ended = true;
    if (entry.lane !== undefined) entry.lane.ended(entry);
    else if (entry.timer !== undefined) entry.timers.cancel(entry.timer);
    entry.off?.();
    entry.group?.leave(entry);
    return entry;
  }

  /** Handles a message the library owns; returns false to pass it on to the SDK. */
  private intercept(message: unknown): boolean {
    if (!isObject(message)) return false;
    const { id, method } = message;
    if (typeof method !== 'string') {
      if (typeof id !== 'string' || !id.startsWith(this.prefix)) return false;
      const entry = this.take(id);
      if (entry !== undefined) settleReply(entry, message);
      return true; // an answer to one of ours, even a late one, is never the SDK's
    }
    const params = isObject(message.params) ? message.params : {};
    if (id === undefined || id === null) return this.router.notification(method, params);
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    return this.router.inbound(id, method, params);
  }

  /** {@link RawSession.send}, with a synchronous throw of the transport as a rejection. */
  trySend(message: JsonObject, options?: SendOptions): Promise<void> {
    try {
      return this.send(message, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Hands a request straight to the SDK's handler behind the wrapper. */
  passOn(id: string | number, method: string, params: JsonObject): void {
    this.inner?.call(this.transport, { jsonrpc: '2.0', id, method, params });
  }

  private shutDown(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.host.clear();
    for (const id of [...this.pending.keys()]) this.fail(id, new PortError('closed', 'Connection closed'));
    this.router.shutDown();
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) listener();
  }
}
