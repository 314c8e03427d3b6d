/**
 * A minimal raw JSON-RPC client (no SDK decoding) over any SDK-shaped `Transport`, for driving the
 * scripted extension server byte-for-byte in tests, plus the in-memory connection helper.
 */
import { InMemoryTransport, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import type { ExtServer } from './server.js';
import type { Link } from './subscriptions.js';
import { envelope, isObject, type EnvelopeOptions, type Json, type RequestId, type RpcFailure } from './wire.js';

/** A JSON-RPC answer: exactly one of `result` / `error`. */
export type RpcReply =
  { readonly result: Json; readonly error?: undefined } | { readonly result?: undefined; readonly error: RpcFailure };

/** Thrown by {@link RawClient.call} for an error answer. */
export class RawRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RawRpcError';
  }
}

/** Options of a {@link RawClient}. */
export interface RawClientOptions {
  /** Adds this modern `_meta` envelope to requests whose params have no `_meta`; `false` sends params as given. @default {} (declares the extension) */
  readonly framing?: EnvelopeOptions | false;
}

/** Sends requests and records every notification it receives. */
export class RawClient {
  /** Every notification received, in order. */
  readonly notifications: Json[] = [];
  /** Called with each received notification. */
  onNotification: ((notification: Json) => void) | undefined;
  private readonly pending = new Map<RequestId, (reply: RpcReply) => void>();
  private nextId = 0;

  constructor(
    readonly transport: Transport,
    private readonly options: RawClientOptions = {},
  ) {
    transport.onmessage = (message: JSONRPCMessage) => this.receive(message);
  }

  start(): Promise<void> {
    return this.transport.start();
  }
  close(): Promise<void> {
    return this.transport.close();
  }
  /** The params as sent: framed with the client's envelope unless they carry `_meta` (or framing is off). */
  frame(params: Json = {}): Json {
    if (this.options.framing === false || '_meta' in params) return params;
    return { ...params, _meta: envelope(this.options.framing ?? {}) };
  }
  /** Sends a request (fresh id unless given) and resolves with its answer. */
  request(method: string, params: Json = {}, id: RequestId = `raw-${++this.nextId}`): Promise<RpcReply> {
    return new Promise((resolve, reject) => {
      this.pending.set(id, resolve);
      this.transport.send({ jsonrpc: '2.0', id, method, params: this.frame(params) }).catch(reject);
    });
  }
  /** Like {@link request}, but resolves with the result and rejects with {@link RawRpcError}. */
  async call(method: string, params: Json = {}): Promise<Json> {
    const reply = await this.request(method, params);
    if (reply.error !== undefined) throw new RawRpcError(reply.error.code, reply.error.message, reply.error.data);
    return reply.result;
  }
  /** Sends a notification (no envelope). */
  notify(method: string, params: Json = {}): Promise<void> {
    return this.transport.send({ jsonrpc: '2.0', method, params });
  }
  /** Sends a request without waiting for its answer; returns its id (e.g. a long-lived `subscriptions/listen`). */
  fire(
    method: string,
    params: Json = {},
    id: RequestId = `raw-${++this.nextId}`,
  ): { id: RequestId; reply: Promise<RpcReply> } {
    return { id, reply: this.request(method, params, id) };
  }
  /** Notifications received so far with `method`. */
  received(method: string): Json[] {
    return this.notifications.filter((n) => n.method === method);
  }

  private receive(message: Json): void {
    if (typeof message.method === 'string') {
      this.notifications.push(message);
      this.onNotification?.(message);
      return;
    }
    const id = message.id as RequestId;
    const resolve = this.pending.get(id);
    if (resolve === undefined) return;
    this.pending.delete(id);
    resolve(
      isObject(message.error)
        ? { error: message.error as unknown as RpcFailure }
        : { result: (message.result ?? {}) as Json },
    );
  }
}

/** One in-memory connection to an {@link ExtServer}: the client end is an SDK `Transport`. */
export interface MemoryConnection {
  readonly clientTransport: Transport;
  readonly link: Link;
  close(): Promise<void>;
}

/** Connects a fresh linked pair to `server` (one link); give `clientTransport` to an SDK Client or a {@link RawClient}. */
export async function connectInMemory(server: ExtServer): Promise<MemoryConnection> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const link = server.attach('memory', (message) => {
    serverTransport.send(message as unknown as JSONRPCMessage).catch(() => {});
  });
  serverTransport.onmessage = (message) => void server.receive(message, link);
  serverTransport.onclose = () => server.detach(link);
  await serverTransport.start();
  return { clientTransport, link, close: () => serverTransport.close() };
}

/** A started {@link RawClient} on a fresh in-memory connection to `server`. */
export async function rawInMemory(server: ExtServer, options: RawClientOptions = {}): Promise<RawClient> {
  const { clientTransport } = await connectInMemory(server);
  const client = new RawClient(clientTransport, options);
  await client.start();
  return client;
}
