/**
 * A `ConnectedMcpSessionPort` for `@modelcontextprotocol/ext-tasks` over the SDK v1 `Client`, in
 * 2025-11-25 ("v1") mode. ext-tasks ships an adapter for the SDK v2 `Client` only; this port
 * mirrors that adapter (`dist/client/sdk-client-adapter.js`) over the v1 client's public
 * surface, as docs on driving ext-tasks describe:
 *
 * - `taskCapabilities`: `{ generation: 'v1', capabilities: serverCapabilities.tasks }`;
 * - `dispatch` through `client.request(request, permissiveSchema)` plus a JSON-value check (as
 *   the v2 adapter does), mapping JSON-RPC errors from the server to `{ kind: 'error' }` and local
 *   failures (timeouts, closed connection, aborts) to a thrown `DispatchError`;
 * - notifications and input requests chained onto the v1 client's fallback handlers;
 * - `onInvalidated` from the transport closing (`client.onclose`, chained).
 *
 * A request's AbortSignal reaches the v1 client only while that request is pending: the v1 client
 * never removes its abort listener, and ext-tasks aborts every observation signal after use,
 * which would otherwise send spurious `notifications/cancelled` for finished requests.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { isJsonValue, toJsonValue, type JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import {
  DispatchError,
  type ConnectedMcpSessionPort,
  type DispatchOptions,
  type IncomingServerRequest,
  type JsonRpcResponse,
  type SessionTaskCapabilities,
} from '@modelcontextprotocol/ext-tasks/client';
import { z } from 'zod';

/** Accepts any result; `dispatch` then checks it is JSON, like the v2 adapter's `jsonValueSchema`. */
const permissiveSchema = z.unknown();

const INPUT_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);
/** Codes the v1 client uses for local failures, not server answers. */
const LOCAL_CODES = new Set<number>([ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed]);
const MCP_PREFIX = /^MCP error -?\d+: /;

type FallbackRequest = NonNullable<Client['fallbackRequestHandler']>;
type FallbackNotification = NonNullable<Client['fallbackNotificationHandler']>;

/**
 * The message as JSON, or undefined when it cannot be. InMemoryTransport hands objects over as
 * they are (keys set to `undefined` included); a real wire would have serialized them, so what is
 * not already plain JSON is normalized the way serialization would.
 */
function asJson(value: unknown): JsonValue | undefined {
  if (isJsonValue(value)) return value;
  try {
    return toJsonValue(value);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The port; dispose it with `[Symbol.dispose]()` after closing the ext-tasks session. */
export class V1ClientSessionPort implements ConnectedMcpSessionPort, Disposable {
  readonly taskCapabilities: SessionTaskCapabilities;
  private readonly serverRequestListeners = new Set<
    (incoming: IncomingServerRequest) => Promise<JsonRpcResponse | undefined>
  >();
  private readonly notificationListeners = new Set<(notification: JsonValue) => void>();
  private readonly invalidationListeners = new Set<(reason: unknown) => void>();
  private readonly previousRequest: FallbackRequest | undefined;
  private readonly previousNotification: FallbackNotification | undefined;
  private readonly previousOnclose: (() => void) | undefined;
  private isInvalidated = false;
  private disposed = false;

  private readonly fallbackRequest: FallbackRequest = async (request: JSONRPCRequest, extra) => {
    const listener = this.serverRequestListeners.values().next().value;
    const json = asJson(request);
    if (!INPUT_METHODS.has(request.method) || listener === undefined || json === undefined) {
      if (this.previousRequest !== undefined) return this.previousRequest(request, extra);
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
    const response = await listener({ request: json, requestContext: extra });
    if (response === undefined) {
      if (this.previousRequest !== undefined) return this.previousRequest(request, extra);
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
    if (response.kind === 'error') throw new McpError(response.error.code, response.error.message, response.error.data);
    if (!isRecord(response.result))
      throw new McpError(ErrorCode.InternalError, 'Inbound handler returned a non-object result');
    return response.result;
  };

  private readonly fallbackNotification: FallbackNotification = async (notification) => {
    await this.previousNotification?.(notification);
    const json = asJson(notification);
    if (json === undefined) return;
    for (const listener of [...this.notificationListeners]) listener(json);
  };

  private readonly closeHook = (): void => {
    try {
      this.previousOnclose?.();
    } finally {
      this.invalidate(new Error('MCP client connection closed'));
    }
  };

  constructor(
    private readonly client: Client,
    readonly endpointId: string,
  ) {
    const tasks = client.getServerCapabilities()?.tasks;
    this.taskCapabilities =
      tasks === undefined
        ? { generation: 'none' }
        : {
            generation: 'v1',
            capabilities: structuredClone(tasks) as Extract<
              SessionTaskCapabilities,
              { generation: 'v1' }
            >['capabilities'],
          };
    this.previousRequest = client.fallbackRequestHandler;
    this.previousNotification = client.fallbackNotificationHandler;
    this.previousOnclose = client.onclose;
    client.fallbackRequestHandler = this.fallbackRequest;
    client.fallbackNotificationHandler = this.fallbackNotification;
    client.onclose = this.closeHook;
  }

  get invalidated(): boolean {
    return this.isInvalidated;
  }

  async dispatch(request: JsonValue, options: DispatchOptions = {}): Promise<JsonRpcResponse> {
    if (!isRecord(request) || typeof request.method !== 'string')
      throw new DispatchError('MCP request must be a JSON object with a method');
    const params = request.params;
    if (params !== undefined && !isRecord(params)) throw new DispatchError('MCP request params must be a JSON object');
    const outer = options.signal;
    outer?.throwIfAborted();
    // A fresh signal per request, linked to the caller's only while the request is pending.
    let signal: AbortSignal | undefined;
    let unlink = (): void => {};
    if (outer !== undefined) {
      const local = new AbortController();
      const onAbort = (): void => local.abort(outer.reason);
      outer.addEventListener('abort', onAbort, { once: true });
      unlink = () => outer.removeEventListener('abort', onAbort);
      signal = local.signal;
    }
    try {
      const result = await this.client.request(
        params === undefined ? { method: request.method } : { method: request.method, params: params },
        permissiveSchema,
        {
          ...(signal === undefined ? {} : { signal }),
          ...(options.context?.requestTimeoutMs === undefined ? {} : { timeout: options.context.requestTimeoutMs }),
          ...(options.context?.resetTimeoutOnProgress === undefined
            ? {}
            : { resetTimeoutOnProgress: options.context.resetTimeoutOnProgress }),
        },
      );
      const json = asJson(result);
      if (json === undefined) throw new DispatchError('MCP result is not JSON');
      return { kind: 'result', result: json };
    } catch (error) {
      if (error instanceof McpError && !LOCAL_CODES.has(error.code)) {
        const data: unknown = error.data;
        return {
          kind: 'error',
          error: {
            code: error.code,
            message: error.message.replace(MCP_PREFIX, ''),
            ...(data === undefined || !isJsonValue(data) ? {} : { data }),
          },
        };
      }
      if (error instanceof DispatchError) throw error;
      throw new DispatchError('MCP client request failed', false, { cause: error });
    } finally {
      unlink();
    }
  }

  onServerRequest(handler: (incoming: IncomingServerRequest) => Promise<JsonRpcResponse | undefined>): () => void {
    this.serverRequestListeners.add(handler);
    return () => this.serverRequestListeners.delete(handler);
  }

  onNotification(listener: (notification: JsonValue) => void): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  onInvalidated(listener: (reason: unknown) => void): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  [Symbol.dispose](): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.client.fallbackRequestHandler === this.fallbackRequest)
      this.client.fallbackRequestHandler = this.previousRequest;
    if (this.client.fallbackNotificationHandler === this.fallbackNotification)
      this.client.fallbackNotificationHandler = this.previousNotification;
    if (this.client.onclose === this.closeHook) this.client.onclose = this.previousOnclose;
    this.serverRequestListeners.clear();
    this.notificationListeners.clear();
    this.invalidationListeners.clear();
  }

  private invalidate(reason: unknown): void {
    if (this.isInvalidated) return;
    this.isInvalidated = true;
    for (const listener of [...this.invalidationListeners]) listener(reason);
  }
}
