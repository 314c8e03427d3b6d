/**
 * Where the CLI connects: the embedded example server (in process, over an in-memory transport
 * pair), a stdio server (`--stdio`) or a Streamable HTTP server (`--url`), and over which task
 * wire (`--wire`). With sdk.ts, which loads the SDKs, and doctor-target.ts (the doctor's fresh
 * transports), this is where the CLI touches the SDKs, and only their transports (and, for the
 * embedded target, the example server): everything else goes through the library's public entry
 * point (`mcp-task-client`). The options are checked in target-options.ts, and the TaskClient is
 * connected over the transport made here in target-connect.ts.
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
import type { TaskClient, WireKind } from 'mcp-task-client';
import { EXT_WIRE, splitCommandLine } from './args.js';
import { ConnectError, topMessage } from './connect-errors.js';
import { Reachability } from './reachability.js';
import { TRANSPORTS, chooseSdk, loadExampleServer, type HttpOptions } from './sdk.js';
import { terminalSafe } from './sanitize.js';
import { ServerProcess } from './server-process.js';
import { StdoutWatch } from './stdout-watch.js';
import { CONNECT_TIMEOUT_MS, connector, type ConnectOptions } from './target-connect.js';
import { resolveTarget, type TargetOptions } from './target-options.js';

export { ConnectError } from './connect-errors.js';
export {
  CANCEL_GRACE_MS,
  CLOSE_WAIT_MS,
  CONNECT_TIMEOUT_MS,
  WireUnavailableError,
  type ConnectOptions,
} from './target-connect.js';
export type { TargetOptions } from './target-options.js';

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
   * that exited, or that closed its stdout and was stopped; an HTTP session the server forgot), or
   * no request has reached an HTTP server for the connect timeout. The library would otherwise wait for a reconnection that cannot come.
   * `sessionGone`: the server forgot the HTTP session, and the tasks it held went with it.
   */
  watchLoss(onLost: (why: string, sessionGone: boolean) => void): void;
  /** Closes the TaskClient, the connection and anything the target started. */
  close(): Promise<void>;
  /**
   * Leaves at once, waiting for nothing but a stdio server the target started to stop (SIGTERM,
   * then SIGKILL: server-process.ts). Resolves `true` once nothing it started runs any more.
   */
  abandon(): Promise<boolean>;
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
  const resolved = resolveTarget(options);
  const { wire, joining, url, where } = resolved;

  let sdk: { major: 'v1' | 'v2'; legacy: boolean };
  try {
    sdk = await chooseSdk(wire, joining);
  } catch (error) {
    throw new ConnectError(topMessage(error), { cause: error });
  }
  const transports = TRANSPORTS[sdk.major];
  const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const opened = connector(options, connect, resolved, sdk, connectTimeoutMs);

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
        watchLoss(tasks, onLost, reachability, true, (why) =>
          why === undefined
            ? `the connection to ${href} was lost (the server no longer knows the HTTP session: did it restart?)`
            : `the server at ${href} stopped answering: ${why}`,
        ),
      close: () => tasks.close(),
      abandon: () => {
        reachability.stop();
        return Promise.resolve(true);
      },
    };
  }

  if (options.stdio !== undefined) {
    const [program, ...args] = splitCommandLine(options.stdio);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const transport = await transports.stdio({ command: program as string, args, env, stderr: 'pipe' });
    // A server that closes its stdout and keeps running is stopped, and counts as gone.
    const stdout = new StdoutWatch(where);
    stdout.attach(transport);
    const stderr =
      options.onServerStderr ?? ((text: string) => process.stderr.write(terminalSafe(text, { multiline: true })));
    transport.stderr?.on('data', (chunk: Buffer) => stderr(chunk.toString('utf8')));
    const server = new ServerProcess(transport);
    let tasks: TaskClient;
    try {
      tasks = await opened(transport, () => server.stop());
    } catch (error) {
      const stopped = await server.stop();
      options.onServerStopped?.(stopped);
      // Its stdout closed before it answered: say so rather than how the connection then failed
      // (unless connecting was given up first: --timeout, Ctrl-C).
      if (stdout.reason !== undefined && error !== options.signal?.reason)
        throw new ConnectError(
          `cannot connect to ${where}: it closed its stdout before answering but kept running (${stopped ? 'it was stopped' : 'it was killed but had not exited yet'})`,
          { cause: error },
        );
      throw error;
    }
    return {
      kind: 'stdio',
      where,
      tasks,
      url: undefined,
      wire: tasks.wire,
      watchLoss: (onLost) =>
        watchLoss(tasks, onLost, stdout, false, (why) => why ?? `${where} exited (its connection closed)`),
      close: () => {
        stdout.stop();
        return tasks.close();
      },
      abandon: () => server.stop(),
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
    watchLoss: (onLost) => watchLoss(tasks, onLost, undefined, false, () => `${where} closed its connection`),
    close: async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    },
    abandon: () => Promise.resolve(true),
  };
}

/** A watch of its own that tells when a server is gone (an HTTP server's reachability, a stdio server's stdout). */
interface LossWatch {
  watch(onLost: (why: string) => void): void;
  stop(): void;
  /** Set once the watch has seen the server go and will report it (a close it causes is not news). */
  readonly reason?: string | undefined;
}

/**
 * Calls `onLost` once: on the library's `connectionLost` (with `closedIsSession`, an HTTP session
 * the server forgot), or when `watcher` gives the server up.
 */
function watchLoss(
  tasks: TaskClient,
  onLost: (why: string, sessionGone: boolean) => void,
  watcher: LossWatch | undefined,
  closedIsSession: boolean,
  describe: (why: string | undefined) => string,
): void {
  let lost = false;
  const once = (why: string, sessionGone: boolean): void => {
    if (lost) return;
    lost = true;
    watcher?.stop();
    onLost(why, sessionGone);
  };
  tasks.on('connectionLost', () => {
    // The watch stops the server it saw go: it reports that, once the server is gone.
    if (watcher?.reason === undefined) once(describe(undefined), closedIsSession);
  });
  watcher?.watch((why) => once(describe(why), false));
}
