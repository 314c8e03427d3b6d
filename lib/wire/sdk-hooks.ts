/**
 * Chaining onto an SDK v1 `Client` without breaking the user's handlers.
 *
 * The SDK keeps one handler per method in two maps (`_notificationHandlers`,
 * `_requestHandlers`) and `setNotificationHandler`/`setRequestHandler` replace whatever is there.
 * To share a method with the user, this module swaps each map for a {@link TappedMap}: a `Map`
 * that stores the user's handlers exactly as before (so `set`, `delete` and `has` behave as the
 * SDK expects, whenever the user calls them) but whose `get` returns a dispatcher that runs our
 * taps first and then the user's handler, or the client's fallback handler when there is none.
 * Several TaskClients on one SDK client each add their own taps. Removing the last tap leaves the
 * user's handlers as they are.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  JSONRPCResultResponseSchema,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';

/** What the SDK passes as the second argument of a request handler. */
export type RequestExtra = Record<string, unknown> & { readonly signal: AbortSignal };
type NotificationHandler = (notification: JSONRPCNotification) => Promise<void>;
type RequestHandler = (request: JSONRPCRequest, extra: RequestExtra) => Promise<Result>;

/** A notification tap; return `true` to consume the notification (no one else sees it). */
export type NotificationTap = (notification: JSONRPCNotification) => boolean | void;
/** A request tap; return a promise to answer the request, or `undefined` (returned or resolved) to pass it on. */
export type RequestTap = (request: JSONRPCRequest, extra: RequestExtra) => Promise<Result | undefined> | undefined;

interface Hookable {
  _notificationHandlers: Map<string, NotificationHandler>;
  _requestHandlers: Map<string, RequestHandler>;
  fallbackNotificationHandler?: (notification: JSONRPCNotification) => Promise<void>;
  fallbackRequestHandler?: (request: JSONRPCRequest, extra: RequestExtra) => Promise<Result>;
}

class TappedMap<H, T> extends Map<string, H> {
  readonly taps = new Map<string, T[]>();
  /** Per method: the error to answer when no tap, no user handler and no fallback answers. */
  readonly missing = new Map<string, (request: JSONRPCRequest) => Error>();
  private readonly dispatchers = new Map<string, H>();

  constructor(
    entries: Map<string, H>,
    private readonly makeDispatcher: (method: string, map: TappedMap<H, T>) => H,
  ) {
    super(entries);
  }

  /** The handler the user (or the SDK) installed, bypassing the taps. */
  own(method: string): H | undefined {
    return super.get(method);
  }

  override get(method: string): H | undefined {
    if (!this.taps.has(method)) return super.get(method);
    let dispatcher = this.dispatchers.get(method);
    if (dispatcher === undefined) {
      dispatcher = this.makeDispatcher(method, this);
      this.dispatchers.set(method, dispatcher);
    }
    return dispatcher;
  }

  add(method: string, tap: T): () => void {
    const list = this.taps.get(method) ?? [];
    this.taps.set(method, [...list, tap]);
    return () => {
      const rest = (this.taps.get(method) ?? []).filter((t) => t !== tap);
      if (rest.length > 0) this.taps.set(method, rest);
      else this.taps.delete(method);
    };
  }
}

function hookable(client: Client): Hookable {
  const target = client as unknown as Hookable;
  if (!(target._notificationHandlers instanceof Map) || !(target._requestHandlers instanceof Map)) {
    throw new TypeError('mcp-task-client: this SDK Client does not expose its handler maps (SDK v1 expected)');
  }
  return target;
}

function notificationMap(client: Client): TappedMap<NotificationHandler, NotificationTap> {
  const target = hookable(client);
  const current = target._notificationHandlers;
  if (current instanceof TappedMap) return current as TappedMap<NotificationHandler, NotificationTap>;
  const map = new TappedMap<NotificationHandler, NotificationTap>(current, (method, self) => async (notification) => {
    for (const tap of self.taps.get(method) ?? []) {
      if (tap(notification) === true) return;
    }
    const next = self.own(method) ?? target.fallbackNotificationHandler;
    if (next !== undefined) await next(notification);
  });
  target._notificationHandlers = map;
  return map;
}

function requestMap(client: Client): TappedMap<RequestHandler, RequestTap> {
  const target = hookable(client);
  const current = target._requestHandlers;
  if (current instanceof TappedMap) return current as TappedMap<RequestHandler, RequestTap>;
  const map = new TappedMap<RequestHandler, RequestTap>(current, (method, self) => async (request, extra) => {
    for (const tap of self.taps.get(method) ?? []) {
      const answer = tap(request, extra);
      if (answer === undefined) continue;
      const result = await answer;
      if (result !== undefined) return result;
    }
    const next = self.own(method) ?? target.fallbackRequestHandler;
    if (next !== undefined) return next(request, extra);
    throw self.missing.get(method)?.(request) ?? Object.assign(new Error('Method not found'), { code: -32601 });
  });
  target._requestHandlers = map;
  return map;
}

/**
 * Adds a notification tap for `method`; the user's handler (set before or after) still runs
 * unless the tap consumes the notification. Returns a function that removes the tap.
 */
export function tapNotification(client: Client, method: string, tap: NotificationTap): () => void {
  return notificationMap(client).add(method, tap);
}

/**
 * Adds a request tap for `method`; requests no tap answers go to the user's handler (set before or
 * after), then to the client's `fallbackRequestHandler`, and otherwise get the error `missing`
 * makes. Returns a function that removes the tap.
 */
export function tapRequest(
  client: Client,
  method: string,
  tap: RequestTap,
  missing?: (request: JSONRPCRequest) => Error,
): () => void {
  const map = requestMap(client);
  if (missing !== undefined) map.missing.set(method, missing);
  return map.add(method, tap);
}


/**
 * Calls `listener` once when the client's current transport closes, keeping the transport's
 * existing `onclose`. Returns a function that stops listening.
 */
export function onTransportClose(client: Client, listener: () => void): () => void {
  const transport = client.transport;
  if (transport === undefined) {
    queueMicrotask(listener);
    return () => {};
  }
  let active = true;
  const previous = transport.onclose;
  transport.onclose = () => {
    previous?.();
    if (active) {
      active = false;
      listener();
    }
  };
  return () => {
    active = false;
  };
}

/** Marks, in an error's `data`, a reply the SDK could not have parsed (see {@link guardResponses}). */
export const MALFORMED_REPLY = 'mcp-task-client/malformed-reply';

const guarded = new WeakSet<object>();

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The SDK drops a response whose `result` or `error` breaks its schema (a string result, a bad
 * `_meta`), reports it only on `onerror`, and lets the request die on its timeout. This turns such
 * a response into an error response (-32603, `data` marked {@link MALFORMED_REPLY}) before the SDK
 * sees it, so the request fails at once with a protocol error. Installed once per transport.
 */
export function guardResponses(client: Client): void {
  const transport = client.transport;
  if (transport === undefined || guarded.has(transport)) return;
  guarded.add(transport);
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  transport.onmessage = (message, extra) => {
    deliver.call(transport, repair(message), extra);
  };
}

function repair(message: JSONRPCMessage): JSONRPCMessage {
  const raw = message as Record<string, unknown>;
  if (!('id' in raw) || 'method' in raw) return message;
  const id = raw.id as string | number;
  if ('result' in raw) {
    const result = raw.result;
    // Fast path: a plain object whose _meta (if any) has the two keys the SDK checks in the right
    // shape always passes its schema; anything else gets the SDK's own full check.
    if (isPlainObject(result) && plainMeta(result._meta)) return message;
    if (JSONRPCResultResponseSchema.safeParse(message).success) return message;
    return broken(id, 'the result is not a valid result object');
  }
  if ('error' in raw) {
    const error = raw.error;
    if (isPlainObject(error) && typeof error.code === 'number' && Number.isInteger(error.code) && typeof error.message === 'string') {
      return message;
    }
    return broken(id, 'the error is not a valid JSON-RPC error object');
  }
  return message;
}

function plainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== 'string' && !(typeof token === 'number' && Number.isInteger(token))) return false;
  const related = meta['io.modelcontextprotocol/related-task'];
  return related === undefined || (isPlainObject(related) && typeof related.taskId === 'string');
}

function broken(id: string | number, why: string): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: `Malformed reply from server: ${why}`, data: { [MALFORMED_REPLY]: true } },
  };
}
