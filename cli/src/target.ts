/**
 * Where the CLI connects: the embedded example server (in process, over an in-memory transport
 * pair), a stdio server (`--stdio`) or a Streamable HTTP server (`--url`), and over which task
 * wire (`--wire`). With sdk.ts, which loads the SDKs, and doctor-target.ts (the doctor's fresh
 * transports), this is where the CLI touches the SDKs, and only their transports (and, for the
 * embedded target, the example server): everything else goes through the library's public entry
 * point (`mcp-task-client`).
 *
 * Which SDK carries the connection:
 *
 * | `--wire` | embedded, `--stdio` | `--url` | `--url` joining a session (`--session`, a saved reference) |
 * | --- | --- | --- | --- |
 * | `auto` | SDK v2, automatic era negotiation (SDK v1 when v2 is not installed) | SDK v2's Streamable HTTP transport, automatic era negotiation (same fallback) | SDK v1 (a 2025-11-25 session); SDK v2 pinned to the legacy era when v1 is not installed |
 * | `2025-11-25` | SDK v1; SDK v2 pinned to the legacy era when v1 is not installed | same | same |
 * | `io.modelcontextprotocol/tasks` | SDK v2, automatic era negotiation; fails unless the server offers the extension | same | refused: the extension is sessionless |
 *
 * Both SDKs are loaded lazily (sdk.ts), so the CLI runs where only one is installed, like the
 * library. The embedded example server is built on SDK v1's `McpServer`: without SDK v1, a target
 * must be given.
 */
import {
  TaskClient,
  type McpClient,
  type McpTransport,
  type TaskClientConnectOptions,
  type WireKind,
} from 'mcp-task-client';
import { EXT_WIRE, UsageError, splitCommandLine, type WireChoice } from './args.js';
import { ConnectError, describeConnectFailure, topMessage } from './connect-errors.js';
import { Reachability } from './reachability.js';
import { TRANSPORTS, chooseSdk, loadExampleServer, type HttpOptions } from './sdk.js';
import { terminalSafe } from './sanitize.js';

export { ConnectError } from './connect-errors.js';

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
  /**
   * Gives up connecting after this long (`--connect-timeout`), like `signal` but with a
   * {@link ConnectError} that says what was tried; once connected, an HTTP server that no request
   * reaches for this long counts as lost ({@link Target.watchLoss}). 0: no limit.
   * @defaultValue {@link CONNECT_TIMEOUT_MS}
   */
  readonly connectTimeoutMs?: number | undefined;
}

/** `--wire io.modelcontextprotocol/tasks` was asked for, and the server does not offer it (exit 1). */
export class WireUnavailableError extends Error {
  override readonly name = 'WireUnavailableError';
}

/** A connected target. */
export interface Target {
  /** Which kind of target this is. */
  readonly kind: 'embedded' | 'stdio' | 'url';
  /** The target in words: `http://…`, "the stdio server `…`", "the bundled example server". */
  readonly where: string;
  /** The connected TaskClient. */
  readonly tasks: TaskClient;
  /** The endpoint, for a `url` target. */
  readonly url: string | undefined;
  /** The task wire of the connection. */
  readonly wire: WireKind;
  /**
   * Calls `onLost` once, with why, when the server is gone: its connection closed (a stdio server
   * that exited, an HTTP session the server forgot), or no request has reached an HTTP server for
   * the connect timeout. The library would otherwise wait for a reconnection that cannot come.
   */
  watchLoss(onLost: (why: string) => void): void;
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

/** How long connecting may take by default (`--connect-timeout`), and how long an HTTP server may stay unreachable. */
export const CONNECT_TIMEOUT_MS = 30_000;

/**
 * How long a cancel (Ctrl-C, SIGTERM, a closed stdout, `--timeout`) waits for the server's answer
 * to `tasks/cancel` before the CLI leaves without it: the library's `cancelGraceMs`.
 */
export const CANCEL_GRACE_MS = 2_000;

/** The options of `TaskClient.connect` the CLI controls. */
export type ConnectOptions = Pick<TaskClientConnectOptions, 'onElicitation' | 'onSampling' | 'timeoutMs' | 'ttlMs'>;

const CLIENT_INFO = { name: 'mcp-task', version: '0.1.0' };

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
 * Loads what {@link openTarget} will need for `options` (the SDK's transports, the example
 * server), so that module loading does not count against `--timeout` or the connect timeout.
 * Never throws: a module that cannot be loaded fails {@link openTarget} with its own message.
 */
export async function preloadTarget(
  options: Pick<TargetOptions, 'stdio' | 'url' | 'sessionId' | 'wire'>,
): Promise<void> {
  try {
    const sdk = await chooseSdk(options.wire ?? 'auto', options.sessionId !== undefined && options.wire !== EXT_WIRE);
    if (options.url !== undefined) {
      await (sdk.major === 'v1'
        ? import('@modelcontextprotocol/sdk/client/streamableHttp.js')
        : import('@modelcontextprotocol/client'));
    } else if (options.stdio !== undefined) {
      await (sdk.major === 'v1'
        ? import('@modelcontextprotocol/sdk/client/stdio.js')
        : import('@modelcontextprotocol/client/stdio'));
    } else {
      await Promise.all([import('../../examples/server.js'), import('@modelcontextprotocol/sdk/inMemory.js')]);
    }
  } catch {
    // Reported by openTarget.
  }
}

/**
 * Connects to the target the options name (the embedded example server without `stdio`/`url`).
 * @throws UsageError for contradictory or malformed options.
 * @throws WireUnavailableError when `--wire io.modelcontextprotocol/tasks` meets a server without the extension.
 * @throws ConnectError when the server cannot be reached, answers nothing within the connect
 *   timeout, or no fitting SDK is installed; the signal's reason when `signal` aborts first.
 */
export async function openTarget(options: TargetOptions, connect: ConnectOptions): Promise<Target> {
  if (options.stdio !== undefined && options.url !== undefined)
    throw new UsageError('Give either --stdio or --url, not both');
  if (options.sessionId !== undefined && options.url === undefined) throw new UsageError('--session needs --url');
  const wire = options.wire ?? 'auto';
  // Joining an HTTP session is a 2025-11-25 thing (the 2026-07-28 protocol has no sessions).
  const joining = options.sessionId !== undefined;
  if (joining && wire === EXT_WIRE) {
    throw new UsageError(
      `--wire ${EXT_WIRE} is sessionless: an HTTP session (--session, or a reference that names one) belongs to the 2025-11-25 wire`,
    );
  }
  let url: URL | undefined;
  if (options.url !== undefined) {
    try {
      url = new URL(options.url);
    } catch {
      throw new UsageError(`--url: not a URL: ${options.url}`);
    }
  }
  const where =
    url !== undefined
      ? url.href
      : options.stdio !== undefined
        ? `the stdio server \`${terminalSafe(options.stdio)}\``
        : 'the bundled example server';
  const command = options.stdio === undefined ? undefined : (splitCommandLine(options.stdio)[0] as string);
  const failure = (error: unknown): Error =>
    error instanceof ConnectError || error instanceof WireUnavailableError || error instanceof UsageError
      ? error
      : new ConnectError(describeConnectFailure(error, { where, url: url?.href, command }), { cause: error });

  let sdk: { major: 'v1' | 'v2'; legacy: boolean };
  try {
    sdk = await chooseSdk(wire, joining);
  } catch (error) {
    throw new ConnectError(topMessage(error), { cause: error });
  }
  const transports = TRANSPORTS[sdk.major];
  const tried = joining
    ? `joining HTTP session ${options.sessionId ?? ''} (no handshake)`
    : sdk.major === 'v2' && !sdk.legacy
      ? 'SDK v2 protocol negotiation: server/discover, then initialize'
      : `the MCP handshake (initialize) with SDK ${sdk.major}`;
  const connectOptions: TaskClientConnectOptions = {
    ...connect,
    // The SDK of the transport; SDK v2 negotiates the era itself (a server/discover probe, then
    // initialize for a legacy server), unless pinned to the legacy era.
    sdk: sdk.major,
    ...(sdk.major === 'v2' && sdk.legacy ? { clientOptions: { versionNegotiation: { mode: 'legacy' } } } : {}),
    clientInfo: CLIENT_INFO,
    // Declared even without callbacks so that a task's questions reach the CLI (and get declined).
    capabilities: { elicitation: {}, sampling: {} },
    // close() waits this long at most for the answer to a call given up before it came, so that a
    // task the server creates anyway still gets its tasks/cancel.
    closeTimeoutMs: CLOSE_WAIT_MS,
    // A deadline or Ctrl-C waits this long for the answer to tasks/cancel.
    cancelGraceMs: CANCEL_GRACE_MS,
  };
  const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const handshake = async (transport: McpTransport): Promise<TaskClient> => {
    const tasks = await TaskClient.connect(transport, connectOptions);
    const missing = wire === EXT_WIRE ? extensionMissing(tasks) : undefined;
    if (missing === undefined) return tasks;
    await tasks.close().catch(() => {});
    throw new WireUnavailableError(missing);
  };
  /** Connects over `transport`; `drop` kills what the target started when connecting is given up. */
  const opened = (transport: McpTransport, drop: () => void = () => {}): Promise<TaskClient> => {
    const signal = options.signal;
    if (signal?.aborted === true) {
      drop();
      return Promise.reject(signal.reason as Error);
    }
    const connecting = handshake(transport);
    return new Promise<TaskClient>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const giveUp = (reason: Error): void => {
        // Nothing waits for the handshake any more: kill the server, close the transport, and
        // close a client that connects anyway.
        cleanup();
        drop();
        void transport.close().catch(() => {});
        connecting.then(
          (tasks) => void tasks.close().catch(() => {}),
          () => {},
        );
        reject(reason);
      };
      const onAbort = (): void => giveUp(signal?.reason as Error);
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (connectTimeoutMs > 0) {
        timer = setTimeout(() => {
          const running =
            command === undefined
              ? ''
              : '; the command runs but nothing it wrote on its stdout was an answer: is it an MCP server on stdio?';
          giveUp(
            new ConnectError(
              `cannot connect to ${where}: no answer within ${connectTimeoutMs / 1000} s (tried: ${tried})${running} (--connect-timeout sets the wait)`,
            ),
          );
        }, connectTimeoutMs);
      }
      connecting.then(
        (tasks) => {
          cleanup();
          resolve(tasks);
        },
        (error: unknown) => {
          cleanup();
          reject(failure(error));
        },
      );
    });
  };

  if (url !== undefined) {
    const href = url.href;
    const reachability = new Reachability(connectTimeoutMs);
    const requestInit = { headers: { ...options.headers } };
    const httpOptions: HttpOptions = {
      requestInit,
      sessionId: options.sessionId,
      fetch: reachability.fetch,
      // SDK v2 joining a session sends the header the handshake would have settled.
      ...(sdk.major === 'v2' && joining ? { protocolVersion: '2025-11-25' } : {}),
    };
    const transport = await transports.http(url, httpOptions);
    const tasks = await opened(transport);
    return {
      kind: 'url',
      where,
      tasks,
      url: href,
      wire: tasks.wire,
      watchLoss: (onLost) =>
        watchLoss(tasks, onLost, reachability, (why) =>
          why === undefined
            ? `the connection to ${href} was lost (the server no longer knows the HTTP session: did it restart?)`
            : `the server at ${href} stopped answering: ${why}`,
        ),
      close: () => tasks.close(),
      abandon: () => reachability.stop(),
    };
  }

  if (options.stdio !== undefined) {
    const [program, ...args] = splitCommandLine(options.stdio);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const transport = await transports.stdio({ command: program as string, args, env, stderr: 'pipe' });
    const stderr =
      options.onServerStderr ?? ((text: string) => process.stderr.write(terminalSafe(text, { multiline: true })));
    transport.stderr?.on('data', (chunk: Buffer) => stderr(chunk.toString('utf8')));
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
    return {
      kind: 'stdio',
      where,
      tasks,
      url: undefined,
      wire: tasks.wire,
      watchLoss: (onLost) => watchLoss(tasks, onLost, undefined, () => `${where} exited (its connection closed)`),
      close: () => tasks.close(),
      abandon,
    };
  }

  const { createExampleServer } = await loadExampleServer();
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
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
    where,
    tasks,
    url: undefined,
    wire: tasks.wire,
    watchLoss: (onLost) => watchLoss(tasks, onLost, undefined, () => `${where} closed its connection`),
    close: async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    },
    abandon: () => {},
  };
}

/** Calls `onLost` once: on the library's `connectionLost`, or when `reachability` gives the server up. */
function watchLoss(
  tasks: TaskClient,
  onLost: (why: string) => void,
  reachability: Reachability | undefined,
  describe: (unreachable: string | undefined) => string,
): void {
  let lost = false;
  const once = (why: string): void => {
    if (lost) return;
    lost = true;
    reachability?.stop();
    onLost(why);
  };
  tasks.on('connectionLost', () => once(describe(undefined)));
  reachability?.watch((why) => once(describe(why)));
}
