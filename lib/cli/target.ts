/**
 * Where the CLI connects: the embedded example server (in process, over an in-memory transport
 * pair), a stdio server (`--stdio`) or a Streamable HTTP server (`--url`). This is the one module
 * that touches the SDK, and only its transports: everything else goes through the library's
 * public API (`../index.js`), so switching SDKs later changes only this file.
 */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { TaskClient, type TaskClientConnectOptions } from '../index.js';
import { UsageError, splitCommandLine } from './args.js';
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
}

/** A connected target. */
export interface Target {
  /** Which kind of target this is. */
  readonly kind: 'embedded' | 'stdio' | 'url';
  /** The connected TaskClient. */
  readonly tasks: TaskClient;
  /** The endpoint, for a `url` target. */
  readonly url: string | undefined;
  /** Closes the TaskClient, the connection and anything the target started. */
  close(): Promise<void>;
  /** Leaves at once: kills a stdio server the target started, without waiting for anything. */
  abandon(): void;
}

/** The options of `TaskClient.connect` the CLI controls. */
export type ConnectOptions = Pick<TaskClientConnectOptions, 'onElicitation' | 'onSampling' | 'timeoutMs' | 'ttlMs'>;

const CLIENT_INFO = { name: 'mcp-task', version: '0.1.0' };

/**
 * Connects to the target the options name (the embedded example server without `stdio`/`url`).
 * @throws UsageError for contradictory or malformed options.
 * @throws whatever connecting throws (an unreachable server, a failed initialization).
 */
export async function openTarget(options: TargetOptions, connect: ConnectOptions): Promise<Target> {
  if (options.stdio !== undefined && options.url !== undefined) throw new UsageError('Give either --stdio or --url, not both');
  if (options.sessionId !== undefined && options.url === undefined) throw new UsageError('--session needs --url');
  const connectOptions: TaskClientConnectOptions = {
    ...connect,
    // The transports below are SDK v1's, so the client must be too.
    sdk: 'v1',
    clientInfo: CLIENT_INFO,
    // Declared even without callbacks so that a task's questions reach the CLI (and get declined).
    capabilities: { elicitation: {}, sampling: {} },
  };

  if (options.url !== undefined) {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new UsageError(`--url: not a URL: ${options.url}`);
    }
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { ...options.headers } },
      sessionId: options.sessionId,
    });
    const tasks = await TaskClient.connect(transport, connectOptions);
    return { kind: 'url', tasks, url: url.href, close: () => tasks.close(), abandon: () => {} };
  }

  if (options.stdio !== undefined) {
    const [command, ...args] = splitCommandLine(options.stdio);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const transport = new StdioClientTransport({ command: command as string, args, env, stderr: 'pipe' });
    const stderr = options.onServerStderr;
    transport.stderr?.on('data', (chunk: Buffer) => (stderr ?? ((text: string) => process.stderr.write(text)))(chunk.toString('utf8')));
    const tasks = await TaskClient.connect(transport, connectOptions);
    return {
      kind: 'stdio',
      tasks,
      url: undefined,
      close: () => tasks.close(),
      abandon: () => {
        const pid = transport.pid;
        if (pid !== null) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
      },
    };
  }

  const { server, store } = createExampleServer({ stepMs: 700 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  let tasks: TaskClient;
  try {
    tasks = await TaskClient.connect(clientSide, connectOptions);
  } catch (error) {
    await server.close();
    store.cleanup();
    throw error;
  }
  return {
    kind: 'embedded',
    tasks,
    url: undefined,
    close: async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    },
    abandon: () => {},
  };
}
