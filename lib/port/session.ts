/**
 * The raw dispatch under both ports: the library's requests go straight onto the SDK client's
 * transport with ids of their own, and their answers are taken off the transport before the SDK
 * sees them. Inbound requests and notifications pass through taps first, then on to the SDK (and
 * so to the user's own handlers), unless a tap answers or consumes them.
 *
 * This uses the transport's public surface only (`send`, `onmessage`, `onclose`), which is the
 * same in both SDK majors. A transport carries one wrapper however many TaskClients share it.
 */
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
import { TimeoutLanes, type Pending } from './pending.js';
import { openRequest, type RequestHost } from './open-request.js';
import { capture, captured } from '../util/capture.js';
import { sendError, settleReply } from './reply.js';
import type { Sink } from '../util/deliver.js';
import { noop } from '../util/noop.js';
import { idPrefix, issued, withEnvelope, withMeta } from './outgoing.js';
import { InboundRouter, type InboundHost } from './inbound.js';
import { HostRequests, watchHostRequests } from './host-requests.js';
import type { MessageHandler, SdkAccess, SendOptions, TransportLike } from './sdk-access.js';
import { transportInfoOf } from './transport-info.js';
import { abandon } from './abandon.js';
import { endOf, STREAM_ENDED, streamEndOptions, watchStreamEnds } from './stream-ends.js';
import { ResumeWatch } from './stream-resume.js';
import type { NotificationInstrument } from '../api/index.js';
import { isObject } from '../util/json.js';

/** A {@link SessionPort} over an SDK client's transport. */
export class RawSession implements SessionPort, InboundHost, RequestHost {
  readonly sdk: SdkMajor;
  private readonly transport: TransportLike;
  private readonly prefix = idPrefix();
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();
  /** Shared request timeouts. */
  private readonly lanes = new TimeoutLanes();
  /** Whether the transport carries each request on a stream of its own (read once, on first use). */
  private streams: boolean | undefined = undefined;
  /** {@link RawSession.tellsStreamEnds}, once known. */
  private streamEnds: boolean | undefined = undefined;
  /** On SDK v1's Streamable HTTP transport, whose request streams the port watches (stream-ends.ts): what becomes of their ends. */
  private readonly resumes: ResumeWatch | undefined;
  /** The taps on inbound requests and notifications, and the inbound requests being answered. */
  private readonly router = new InboundRouter(this);
  private readonly closeListeners = new Set<() => void>();
  private isClosed = false;
  /** The SDK's own message handler, behind the wrapper. */
  private readonly inner: MessageHandler | undefined;
  /** The host's own requests through the SDK client that are still open (see host-requests.ts). */
  private readonly host = new HostRequests();

  constructor(private readonly access: SdkAccess) {
    this.sdk = access.sdk;
    const transport = access.transport();
    if (transport === undefined) throw new TypeError('The SDK client is not connected');
    this.transport = transport;
    this.resumes = watchStreamEnds(transport) ? new ResumeWatch(this) : undefined;
    this.inner = transport.onmessage as MessageHandler | undefined;
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
    const promise = new Promise<T>(capture);
    const resolve = captured.resolve!;
    const reject = captured.reject!;
    captured.resolve = captured.reject = undefined;
    openRequest(
      this,
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
    openRequest(this, method, params, decode, options, mapError, context, declare, fresh, noop, noop, sink, token);
  }

  issueId(): string {
    return `${this.prefix}${this.nextId++}`;
  }

  register(entry: Pending, options: PortRequestOptions): void {
    this.pending.set(entry.id, entry);
    this.lanes.arm(entry, options.timeoutMs, options.weak === true);
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

  /**
   * The stream that carries a request's answer ended; the answer, if it came, was taken before.
   * The request fails at once, and the server is told with `notifications/cancelled`: to it the
   * request may still be running ([R27]). An SDK server's blocking `tasks/result` goes on after its
   * stream is cut, and would take the task's next question and write it on the dead stream, never
   * to be asked, rather than leave it to the `tasks/result` sent again; told, it stops its wait
   * ([A6]). Not for a request of the modern era (its stream's end is its cancel), nor for one that
   * may have created a task ([R24]).
   */
  streamEnded(id: string, reason?: string): void {
    const entry = this.take(id);
    if (entry === undefined) return;
    const message = 'The request stream ended without an answer';
    const error = new PortError('closed', reason === undefined ? message : `${message} (${reason})`);
    if (entry.post !== undefined || entry.quietTimeout) entry.reject(error);
    else abandon(this, entry, error);
  }

  /** A request could not be written on the transport. */
  sendFailed(id: string, error: unknown): void {
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
    this.trySend({ jsonrpc: '2.0', method, params: this.outgoing(params, notice?.meta, undefined, false) }).then(
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

  /**
   * `params` as they go out: the `_meta` entries of an instrumentation (`meta`) under the
   * message's own, and the modern era's envelope (with `declare`); fresh objects, unless `fresh`
   * says `params` is the caller's own new object, which the envelope may then go onto.
   */
  outgoing<P extends JsonObject | undefined>(
    params: P,
    meta: Readonly<JsonObject> | undefined,
    declare: JsonObject | undefined,
    fresh: boolean,
  ): P | JsonObject {
    let body: P | JsonObject = params;
    if (meta !== undefined) {
      body = withMeta(params, meta);
      fresh = true; // a copy of its own now
    }
    const envelope = this.access.envelope(declare);
    return envelope === undefined ? body : withEnvelope(body, envelope, fresh);
  }

  /** Writes one message on the transport (a transport may throw rather than reject). */
  write(message: JsonObject, options?: SendOptions): Promise<void> {
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

  endOptions(id: string): SendOptions | undefined {
    if (this.tellsStreamEnds())
      return { ...streamEndOptions(id, this), onRequestStreamEnd: () => this.streamEnded(id) };
    return this.resumes === undefined ? undefined : streamEndOptions(id, this, this.resumes);
  }

  isOpen(id: string): boolean {
    return this.pending.has(id);
  }

  /** True on a transport that carries each request on a stream of its own and tells when it ends (SDK v2's Streamable HTTP), in either era. */
  tellsStreamEnds(): boolean {
    return (this.streamEnds ??= (this.transport as { hasPerRequestStream?: unknown }).hasPerRequestStream === true);
  }

  /** True on a modern-era transport that carries each request on a stream of its own (Streamable HTTP). */
  private perRequestStream(): boolean {
    return (this.streams ??= this.tellsStreamEnds() && this.access.era() === 'modern');
  }

  private fail(id: string, error: PortError): void {
    const entry = this.take(id);
    entry?.reject(error);
  }

  take(id: string): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    // Its stream's end no longer matters (an answer, a timeout): nor whether SDK v1 resumes it.
    this.resumes?.forget(id);
    entry.finish();
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
    if (id === undefined || id === null) {
      // The port's own mark of a watched stream's end: never the SDK's, nor a tap's.
      if (method === STREAM_ENDED && this.resumes !== undefined) {
        const end = endOf(params);
        if (end !== undefined) this.resumes.ended(end);
        return true;
      }
      return this.router.notification(method, params);
    }
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    return this.router.inbound(id, method, params);
  }

  /** {@link RawSession.write}, with a synchronous throw of the transport as a rejection. */
  trySend(message: JsonObject, options?: SendOptions): Promise<void> {
    try {
      return this.write(message, options);
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
