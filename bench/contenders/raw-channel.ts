/**
 * Raw JSON-RPC requests on a connected SDK client's transport, for the contenders of the
 * extension wire that bypass the SDK's request path (ext-tasks in its native 2026 mode needs a
 * raw dispatch; the floor uses nothing else). Requests go out with ids of their own; their
 * answers are taken off the transport before the SDK sees them. Every other message goes on to
 * the SDK client, unless `onNotification` consumes it.
 */
import type { BenchConnection } from '../transports.js';

type Json = Record<string, unknown>;
type Inner = (message: unknown, extra?: unknown) => void;

interface TransportLike {
  send(message: Json): Promise<void>;
  onmessage?: Inner | undefined;
}

/** A JSON-RPC answer. */
export type RawReply =
  | { readonly result: Json; readonly error?: undefined }
  | { readonly result?: undefined; readonly error: { code: number; message: string; data?: unknown } };

/** The per-request `_meta` envelope of the 2026-07-28 era, declaring the tasks extension. */
export const MODERN_ENVELOPE: Json = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
});

let channels = 0;

/** Raw requests on one connection's transport. */
export class RawChannel {
  private readonly transport: TransportLike;
  private readonly inner: Inner | undefined;
  private readonly prefix = `bench-raw-${(channels += 1)}:`;
  private nextId = 0;
  private readonly pending = new Map<string, (reply: RawReply) => void>();
  /** Sees each inbound notification first; returns true to consume it. */
  onNotification: ((method: string, params: Json) => boolean) | undefined;

  constructor(connection: BenchConnection) {
    const transport = (connection.client as { transport?: TransportLike }).transport;
    if (transport === undefined) throw new Error('the client is not connected');
    this.transport = transport;
    this.inner = transport.onmessage;
    transport.onmessage = (message: unknown, extra?: unknown) => {
      const m = message as Json;
      const id = m.id;
      if (typeof id === 'string' && m.method === undefined && id.startsWith(this.prefix)) {
        const resolve = this.pending.get(id);
        if (resolve === undefined) return;
        this.pending.delete(id);
        resolve(
          m.error !== undefined
            ? { error: m.error as { code: number; message: string } }
            : { result: (m.result ?? {}) as Json },
        );
        return;
      }
      if (
        typeof m.method === 'string' &&
        id === undefined &&
        this.onNotification?.(m.method, (m.params ?? {}) as Json) === true
      )
        return;
      this.inner?.call(transport, message, extra);
    };
  }

  /** Sends a request; resolves with its answer. Returns the id too (to cancel a subscription). */
  request(method: string, params: Json): { id: string; reply: Promise<RawReply> } {
    const id = `${this.prefix}${this.nextId++}`;
    const reply = new Promise<RawReply>((resolve, reject) => {
      this.pending.set(id, resolve);
      this.transport.send({ jsonrpc: '2.0', id, method, params }).catch((error: unknown) => {
        this.pending.delete(id);
        reject(error);
      });
    });
    return { id, reply };
  }

  /** Sends a notification. */
  notify(method: string, params: Json): void {
    this.transport.send({ jsonrpc: '2.0', method, params }).catch(() => {});
  }

  /** Puts the SDK client's handler back. */
  close(): void {
    this.transport.onmessage = this.inner;
    this.pending.clear();
  }
}

/**
 * What a host of the extension wire has to do to receive `notifications/tasks`: one
 * `subscriptions/listen` per connection naming the tasks it waits for, replaced (at most once
 * every {@link RELISTEN_MS}) as tasks start, the replaced one cancelled; given up for good when
 * the server has no subscriptions (-32601). The same rule as mcp-task-client's own.
 */
export class HostSubscription {
  private readonly open = new Set<string>();
  private current: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = Number.NEGATIVE_INFINITY;
  private unsupported = false;

  constructor(private readonly channel: RawChannel) {}

  /** Starts waiting for `taskId`. */
  add(taskId: string): void {
    this.open.add(taskId);
    if (this.unsupported || this.timer !== undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.listen();
      },
      Math.max(0, this.last + RELISTEN_MS - Date.now()),
    );
    this.timer.unref();
  }

  /** Stops waiting for `taskId`. */
  remove(taskId: string): void {
    this.open.delete(taskId);
    if (this.open.size === 0) this.end();
  }

  private listen(): void {
    if (this.open.size === 0) return;
    const previous = this.current;
    this.last = Date.now();
    const { id, reply } = this.channel.request('subscriptions/listen', {
      notifications: { taskIds: [...this.open] },
      _meta: MODERN_ENVELOPE,
    });
    this.current = id;
    reply.then(
      (answer) => {
        if (answer.error?.code === -32601) this.unsupported = true;
        if (this.current === id) this.current = undefined;
      },
      () => {},
    );
    if (previous !== undefined) this.channel.notify('notifications/cancelled', { requestId: previous });
  }

  /** Ends the subscription (no task left). */
  end(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.current !== undefined) this.channel.notify('notifications/cancelled', { requestId: this.current });
    this.current = undefined;
  }
}

/** Shortest time between two replacements of the subscription (mcp-task-client's RELISTEN_MS). */
export const RELISTEN_MS = 50;
