/**
 * The SDK client that `TaskClient.connect` builds: the capabilities it declares for the given
 * callbacks and `serve` option, and its default client info, and the mark that makes the library
 * its owner (the one to close it); and `TaskClient.connect` itself, which wraps that client.
 */
import type { InputCallbacks, TaskClientConnectOptions } from '../../api/index.js';
import { TaskOptionError } from '../../errors.js';
import { configureReceiver } from '../input/receiver-seam.js';
import { resolveClientOptions } from '../options.js';
import { boundConnect } from '../../util/bounded-connect.js';
import { checkDuration, checkSignal } from '../../util/check.js';
import { versionRefused } from '../../util/version-refused.js';
import { connectClient } from '../../port/connect.js';
import type { JsonObject } from '../../port/port.js';
import type { McpClient, McpTransport } from '../../types.js';

/**
 * SDK clients {@link connectFor} made that no connection has claimed yet. Ownership goes with the
 * client, not with the TaskClient: a client handed in later (`reconnect`) stays its owner's.
 */
const unclaimed = new WeakSet<object>();

/**
 * True, once, when {@link connectFor} made `client`: the caller (the connection of the TaskClient
 * that `TaskClient.connect` builds on it) then owns it and closes it. False for any other client,
 * and for the same client asked again (a second TaskClient on it owns nothing).
 */
export function claimMade(client: McpClient): boolean {
  return unclaimed.delete(client);
}

/**
 * The capabilities to declare: `options.capabilities`, plus `elicitation` / `sampling` for the
 * matching callback, plus what serving receiver tasks needs when `serve` is given (the receiver
 * adds it: mcp-task-client/receiver).
 * @param callbacks - the client's resolved `onElicitation` / `onSampling`.
 * @throws TaskOptionError for a `serve` option that is not a receiver, or serves nothing.
 */
export function connectCapabilities(options: TaskClientConnectOptions, callbacks: InputCallbacks): JsonObject {
  const capabilities: JsonObject = { ...options.capabilities };
  if (options.onElicitation !== undefined) capabilities.elicitation ??= {};
  if (options.onSampling !== undefined) capabilities.sampling ??= {};
  return options.serve === undefined ? capabilities : configureReceiver(options.serve, callbacks).declare(capabilities);
}

/**
 * Builds an SDK `Client` declaring {@link connectCapabilities} and connects it over `transport`.
 * @throws whatever `client.connect` throws, or an `Error` when no SDK is installed.
 */
export async function connectFor(
  transport: McpTransport,
  options: TaskClientConnectOptions,
  callbacks: InputCallbacks,
): Promise<McpClient> {
  const capabilities = connectCapabilities(options, callbacks);
  const start = (signal: AbortSignal) =>
    connectClient({
      sdk: options.sdk,
      transport,
      clientInfo: options.clientInfo ?? { name: 'mcp-task-client', version: '0.1.0' },
      capabilities,
      clientOptions: options.clientOptions,
      signal,
    });
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const { client } = await boundConnect(start, transport, { timeoutMs, signal: options.signal }).catch(
    (error: unknown) => {
      // [E12]: a server that refuses the version offered is told apart from one that fails.
      throw versionRefused(error) ?? error;
    },
  );
  unclaimed.add(client);
  return client;
}

/** How long `TaskClient.connect` waits for the connection and the handshake by default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;

/** The methods every MCP transport has (both SDK majors' `Transport`). */
const TRANSPORT_METHODS = ['start', 'send', 'close'] as const;

/**
 * Why `transport` cannot be an MCP transport, or `undefined` when it has the methods one has. An
 * SDK `Client` handed over instead (a common slip) is named as such, with the way to wrap it.
 */
export function unusableTransport(transport: unknown): string | undefined {
  const needs =
    'TaskClient.connect needs an MCP transport (a StdioClientTransport, a StreamableHTTPClientTransport, …)';
  if (typeof transport !== 'object' || transport === null) {
    return `${needs}, got ${transport === null ? 'null' : typeof transport}`;
  }
  const shape = transport as Record<string, unknown>;
  if (typeof shape.getServerCapabilities === 'function') {
    return 'TaskClient.connect needs a transport, not an SDK Client: wrap a connected Client with new TaskClient(client)';
  }
  const missing = TRANSPORT_METHODS.filter((method) => typeof shape[method] !== 'function');
  if (missing.length === 0) return undefined;
  return `${needs}: this object has no ${missing.map((method) => `${method}()`).join(', ')}`;
}

/**
 * `TaskClient.connect`: checks `transport` and `options`, connects an SDK client made by
 * {@link connectFor} and wraps it with `wrap`, closing it again when the wrapping fails.
 * @throws TaskOptionError for something that is not a transport, or invalid options (before a
 *   connection is opened); TaskConnectError when `connectTimeoutMs` ran out, TaskAbortError when
 *   `signal` aborted (the transport closed either way); whatever `client.connect` or `wrap`
 *   throws, or an `Error` when no SDK is installed.
 */
export async function connectWrapped<T>(
  transport: McpTransport,
  options: TaskClientConnectOptions,
  wrap: (client: McpClient) => T,
): Promise<T> {
  const notTransport = unusableTransport(transport);
  if (notTransport !== undefined) throw new TaskOptionError(notTransport, { option: 'transport' });
  const resolved = resolveClientOptions(options); // fail on bad options before opening a connection
  checkDuration('connectTimeoutMs', options.connectTimeoutMs);
  checkSignal('signal', options.signal);
  const sdk: unknown = options.sdk;
  if (sdk !== undefined && sdk !== 'v1' && sdk !== 'v2') {
    throw new TaskOptionError(
      `Option "sdk" must be 'v1' or 'v2', got ${typeof sdk === 'string' ? JSON.stringify(sdk) : typeof sdk}`,
      { option: 'sdk' },
    );
  }
  const client = await connectFor(transport, options, resolved.callbacks);
  try {
    // The connection owns the client connectFor made (it closes it, and the clients that replace it).
    return wrap(client);
  } catch (error) {
    // The error that stopped the client is the one to report, even if closing fails too.
    await client.close().catch(() => {});
    throw error;
  }
}
