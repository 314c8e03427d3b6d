/**
 * Where the CLI connects: the embedded example server (in process, over an in-memory transport
 * pair), a stdio server (`--stdio`) or a Streamable HTTP server (`--url`), and over which task
 * wire (`--wire`). This is the one module that touches the SDK, and only its transports:
 * everything else goes through the library's public API (`../index.js`).
 *
 * Which SDK carries the connection:
 *
 * | `--wire` | embedded, `--stdio` | `--url` | `--url` joining a session (`--session`, a saved reference) |
 * | --- | --- | --- | --- |
 * | `auto` | SDK v2, automatic era negotiation (SDK v1 when v2 is not installed) | SDK v2's Streamable HTTP transport, automatic era negotiation (same fallback) | SDK v1 (a 2025-11-25 session) |
 * | `2025-11-25` | SDK v1 | SDK v1 | SDK v1 |
 * | `io.modelcontextprotocol/tasks` | SDK v2, automatic era negotiation; fails unless the server offers the extension | same | refused: the extension is sessionless |
 *
 * SDK v2 (`@modelcontextprotocol/client`) is loaded lazily, so the CLI runs where only SDK v1
 * (the library's peer dependency) is installed.
 */
// Type-only (erased): SDK v2 itself is imported lazily below.
import type { StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import type { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { TaskClient, type McpClient, type McpTransport, type TaskClientConnectOptions, type WireKind } from '../index.js';
import { EXT_WIRE, UsageError, splitCommandLine, type WireChoice } from './args.js';
import { createExampleServer } from './example-server.js';

/** How to reach the server. */
export interface TargetOptions {
  /** A command line that starts a stdio server. */
  readonly stdio?: string | undefined;
  /** A Streamable HTTP endpoint. */
  readonly url?: string | undefined;
  /** Extra HTTP headers (e.g. authorization) for `url`. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * An existing HTTP session to join instead of initializing a new one (`url` only). The SDK then
   * skips the handshake; the library takes the server to support cancelling and listing tasks
   * unless a resume reference says otherwise.
   */
  readonly sessionId?: string | undefined;
  /** Receives the stdio server's stderr output. */
  readonly onServerStderr?: (text: string) => void;
  /** The task wire to use (`--wire`). @defaultValue `'auto'` */
  readonly wire?: WireChoice | undefined;
  /**
   * Gives up connecting when it aborts (`--timeout`): the transport is closed, a stdio server
   * started for it is killed, and `openTarget` rejects with the signal's reason at once.
   */
  readonly signal?: AbortSignal | undefined;
}

/** `--wire io.modelcontextprotocol/tasks` was asked for, and the server does not offer it (exit 1). */
export class WireUnavailableError extends Error {
  override readonly name = 'WireUnavailableError';
}

/** A connected target. */
export interface Target {
  /** Which kind of target this is. */
  readonly kind: 'embedded' | 'stdio' | 'url';
  /** The connected TaskClient. */
  readonly tasks: TaskClient;
  /** The endpoint, for a `url` target. */
  readonly url: string | undefined;
  /** The task wire of the connection. */
  readonly wire: WireKind;
  /** Closes the TaskClient, the connection and anything the target started. */
  close(): Promise<void>;
  /** Leaves at once: kills a stdio server the target started, without waiting for anything. */
  abandon(): void;
}

/**
 * How long closing the connection waits, at most, for the answer to a call given up before it
 * came (Ctrl-C, `--timeout`): the library then cancels a task the server created anyway.
 */
export const CLOSE_WAIT_MS = 5_000;

/** The options of `TaskClient.connect` the CLI controls. */
export type ConnectOptions = Pick<TaskClientConnectOptions, 'onElicitation' | 'onSampling' | 'timeoutMs' | 'ttlMs'>;

const CLIENT_INFO = { name: 'mcp-task', version: '0.1.0' };

/** SDK v2's client transports, or `undefined` when `@modelcontextprotocol/client` is not installed. */
async function loadSdkV2(): Promise<
  | {
      readonly Stdio: typeof V2StdioTransport;
      readonly Http: typeof V2HttpTransport;
    }
  | undefined
> {
  try {
    const [client, stdio] = await Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]);
    return { Stdio: stdio.StdioClientTransport, Http: client.StreamableHTTPClientTransport };
  } catch {
    return undefined;
  }
}

/** True when the server advertises the tasks extension (any settings object). */
function offersExtension(client: McpClient): boolean {
  const capabilities = client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined;
  const value = capabilities?.extensions?.[EXT_WIRE];
  return typeof value === 'object' && value !== null;
}

/**
 * Why the connection cannot serve `--wire io.modelcontextprotocol/tasks`, or `undefined` when it can.
 */
function extensionMissing(tasks: TaskClient): string | undefined {
  if (tasks.wire !== EXT_WIRE) {
    return `--wire ${EXT_WIRE}: the server does not speak the 2026-07-28 protocol (SDK v2 negotiated the legacy era), so it cannot offer the tasks extension; use --wire auto or --wire 2025-11-25`;
  }
  if (!offersExtension(tasks.client)) {
    return `--wire ${EXT_WIRE}: the server speaks 2026-07-28 but does not advertise the ${EXT_WIRE} extension (capabilities.extensions), so its tools can only run as plain calls; use --wire auto`;
  }
  return undefined;
}

/**
 * Connects to the target the options name (the embedded example server without `stdio`/`url`).
 * @throws UsageError for contradictory or malformed options.
 * @throws WireUnavailableError when `--wire io.modelcontextprotocol/tasks` meets a server without the extension.
 * @throws whatever connecting throws (an unreachable server, a failed initialization, SDK v2 missing).
 */
export async function openTarget(options: TargetOptions, connect: ConnectOptions): Promise<Target> {
  if (options.stdio !== undefined && options.url !== undefined) throw new UsageError('Give either --stdio or --url, not both');
  if (options.sessionId !== undefined && options.url === undefined) throw new UsageError('--session needs --url');
  const wire = options.wire ?? 'auto';
  // Joining an HTTP session is a 2025-11-25 thing (the 2026-07-28 protocol has no sessions), and
  // SDK v1's transport is the one proven to join one without a handshake.
  const joining = options.sessionId !== undefined;
  if (joining && wire === EXT_WIRE) {
    throw new UsageError(`--wire ${EXT_WIRE} is sessionless: an HTTP session (--session, or a reference that names one) belongs to the 2025-11-25 wire`);
  }
  const v2 = wire === '2025-11-25' || joining ? undefined : await loadSdkV2();
  if (wire === EXT_WIRE && v2 === undefined) {
    throw new Error(`--wire ${EXT_WIRE} needs SDK v2: install @modelcontextprotocol/client`);
  }
  const connectOptions: TaskClientConnectOptions = {
    ...connect,
    // The SDK of the transport; SDK v2 negotiates the era itself (a server/discover probe, then
    // initialize for a legacy server).
    sdk: v2 === undefined ? 'v1' : 'v2',
    clientInfo: CLIENT_INFO,
    // Declared even without callbacks so that a task's questions reach the CLI (and get declined).
    capabilities: { elicitation: {}, sampling: {} },
    // close() waits this long at most for the answer to a call given up before it came, so that a
    // task the server creates anyway still gets its tasks/cancel.
    closeTimeoutMs: CLOSE_WAIT_MS,
  };
  const handshake = async (transport: McpTransport): Promise<TaskClient> => {
    const tasks = await TaskClient.connect(transport, connectOptions);
    const missing = wire === EXT_WIRE ? extensionMissing(tasks) : undefined;
    if (missing === undefined) return tasks;
    await tasks.close().catch(() => {});
    throw new WireUnavailableError(missing);
  };
  const signal = options.signal;
  /** Connects over `transport`; `drop` kills what the target started when the signal gives up. */
  const opened = (transport: McpTransport, drop: () => void = () => {}): Promise<TaskClient> => {
    if (signal === undefined) return handshake(transport);
    if (signal.aborted) {
      drop();
      return Promise.reject(signal.reason as Error);
    }
    const connecting = handshake(transport);
    return new Promise<TaskClient>((resolve, reject) => {
      const giveUp = (): void => {
        // Nothing waits for the handshake any more: kill the server, close the transport, and
        // close a client that connects anyway.
        drop();
        void transport.close().catch(() => {});
        connecting.then(
          (tasks) => void tasks.close().catch(() => {}),
          () => {},
        );
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', giveUp, { once: true });
      connecting.then(
        (tasks) => {
          signal.removeEventListener('abort', giveUp);
          resolve(tasks);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', giveUp);
          reject(error);
        },
      );
    });
  };

  if (options.url !== undefined) {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new UsageError(`--url: not a URL: ${options.url}`);
    }
    const requestInit = { headers: { ...options.headers } };
    const transport =
      v2 === undefined
        ? new StreamableHTTPClientTransport(url, { requestInit, sessionId: options.sessionId })
        : new v2.Http(url, { requestInit });
    const tasks = await opened(transport);
    return { kind: 'url', tasks, url: url.href, wire: tasks.wire, close: () => tasks.close(), abandon: () => {} };
  }

  if (options.stdio !== undefined) {
    const [command, ...args] = splitCommandLine(options.stdio);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const parameters = { command: command as string, args, env, stderr: 'pipe' as const };
    const transport = v2 === undefined ? new StdioClientTransport(parameters) : new v2.Stdio(parameters);
    const stderr = options.onServerStderr;
    transport.stderr?.on('data', (chunk: Buffer) => (stderr ?? ((text: string) => process.stderr.write(text)))(chunk.toString('utf8')));
    const abandon = (): void => {
      const pid = transport.pid;
      if (pid !== null) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };
    let tasks: TaskClient;
    try {
      tasks = await opened(transport, abandon);
    } catch (error) {
      abandon();
      throw error;
    }
    return { kind: 'stdio', tasks, url: undefined, wire: tasks.wire, close: () => tasks.close(), abandon };
  }

  const { server, store } = createExampleServer({ stepMs: 700 });
  // SDK v1's in-memory pair: its client side carries an SDK v2 client as well (same members).
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  let tasks: TaskClient;
  try {
    tasks = await opened(clientSide);
  } catch (error) {
    await server.close();
    store.cleanup();
    throw error;
  }
  return {
    kind: 'embedded',
    tasks,
    url: undefined,
    wire: tasks.wire,
    close: async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    },
    abandon: () => {},
  };
}
