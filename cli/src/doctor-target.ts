/**
 * What `mcp-task doctor` examines: a function that returns a fresh transport to the server, the
 * target form of `runDoctor` that opens one session per protocol era, so that every task wire the
 * server offers is probed. Each call starts what a transport needs: a new process for `--stdio`,
 * a new Streamable HTTP transport for `--url` (with the `--header` headers), a new example server
 * in process when no target is given. The transports are SDK v2's when it is installed (SDK v1's
 * otherwise), like the other commands' with `--wire auto`.
 */
import { setMaxListeners } from 'node:events';
import type { McpTransport } from 'mcp-task-client';
import type { ToolChoice, TransportFactory } from 'mcp-task-client/doctor';
import { UsageError, splitCommandLine, urlOption } from './args.js';
import { ConnectError, topMessage } from './connect-errors.js';
import { TRANSPORTS, chooseSdk, loadExampleServer } from './sdk.js';
import { terminalSafe } from './sanitize.js';
import { ServerProcess } from './server-process.js';

/** Where the doctor connects. */
export interface DoctorTargetOptions {
  /** A command line that starts a stdio server. */
  readonly stdio?: string | undefined;
  /** A Streamable HTTP endpoint. */
  readonly url?: string | undefined;
  /** Extra HTTP headers (e.g. authorization) for `url`. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Receives what a stdio server writes on its stderr. */
  readonly onServerStderr?: ((text: string) => void) | undefined;
}

/** The tools the doctor runs on the bundled example server unless told otherwise. */
export interface ToolDefaults {
  readonly tool: ToolChoice;
  readonly failTool: ToolChoice;
  readonly inputTool: ToolChoice;
}

/** A target the doctor can open sessions to. */
export interface DoctorTarget {
  /** Which kind of target this is. */
  readonly kind: 'embedded' | 'stdio' | 'url';
  /** The target in words: `http://…`, "the stdio server `…`", "the bundled example server". */
  readonly where: string;
  /** The endpoint, for a `url` target. */
  readonly url: string | undefined;
  /** The program, for a `stdio` target. */
  readonly command: string | undefined;
  /** Returns a fresh transport to the server, for `runDoctor`. */
  readonly factory: TransportFactory;
  /** The tools to probe when the user names none (the bundled example server's). */
  readonly defaults: ToolDefaults | undefined;
  /**
   * Stops every stdio server started for the doctor (SIGTERM, then SIGKILL: server-process.ts),
   * waiting for nothing else; `true` once they are all gone.
   */
  abandon(): Promise<boolean>;
  /** Closes what the target started that the doctor does not close itself (the example servers). */
  close(): Promise<void>;
}

/**
 * The example server's tools that exercise the whole battery: a short `analyze`, `flaky` (a task
 * that fails with an `isError` result) and `confirm_delete` (a task that asks through elicitation).
 */
const EXAMPLE_DEFAULTS: ToolDefaults = {
  tool: { name: 'analyze', arguments: { id: 7, steps: 2 } },
  failTool: { name: 'flaky', arguments: { afterMs: 300 } },
  inputTool: { name: 'confirm_delete' },
};

/** The example server's timing for the doctor: short steps, a 200 ms `pollInterval`. */
const EXAMPLE_TIMING = { stepMs: 300, pollInterval: 200 } as const;

/**
 * Prepares the target the options name (the bundled example server without `stdio`/`url`).
 * Nothing is started yet: each call of `factory` starts its own connection.
 * @throws UsageError for contradictory or malformed options.
 * @throws ConnectError when no MCP SDK is installed, or the example server's SDK v1 is not.
 */
export async function doctorTarget(options: DoctorTargetOptions): Promise<DoctorTarget> {
  if (options.stdio !== undefined && options.url !== undefined)
    throw new UsageError('Give either --stdio or --url, not both');
  const url = urlOption(options.url);
  const words = options.stdio === undefined ? undefined : splitCommandLine(options.stdio);
  let major: 'v1' | 'v2';
  try {
    major = (await chooseSdk('auto', false)).major;
  } catch (error) {
    throw new ConnectError(topMessage(error), { cause: error });
  }
  const transports = TRANSPORTS[major];

  if (url !== undefined) {
    const endpoint = url;
    const headers = { ...options.headers };
    return {
      kind: 'url',
      where: endpoint.href,
      url: endpoint.href,
      command: undefined,
      factory: () =>
        transports.http(endpoint, { requestInit: { headers }, fetch: (input, init) => fetch(input, init) }),
      defaults: undefined,
      abandon: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
  }

  if (words !== undefined) {
    const [program, ...args] = words as [string, ...string[]];
    const started: ServerProcess[] = [];
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const stderr =
      options.onServerStderr ?? ((text: string) => process.stderr.write(terminalSafe(text, { multiline: true })));
    return {
      kind: 'stdio',
      where: `the stdio server \`${terminalSafe(options.stdio ?? '')}\``,
      url: undefined,
      command: program,
      factory: async (): Promise<McpTransport> => {
        const transport = await transports.stdio({ command: program, args, env, stderr: 'pipe' });
        transport.stderr?.on('data', (chunk: Buffer) => stderr(chunk.toString('utf8')));
        started.push(new ServerProcess(transport));
        return transport;
      },
      defaults: undefined,
      abandon: async () => (await Promise.all(started.map((server) => server.stop()))).every(Boolean),
      close: () => Promise.resolve(),
    };
  }

  const { createExampleServer } = await loadExampleServer();
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  // The example server runs in this process, on SDK v1 (1.32), whose blocking tasks/result adds an
  // abort listener to the request's signal at every poll interval until the task ends: the
  // doctor's early tasks/result stays open for seconds, and Node would warn of a leak (on stderr)
  // that ends with the request.
  setMaxListeners(100);
  const servers: Array<ReturnType<typeof createExampleServer>> = [];
  return {
    kind: 'embedded',
    where: 'the bundled example server',
    url: undefined,
    command: undefined,
    // SDK v1's in-memory pair: its client side carries an SDK v2 client as well (same members).
    factory: async (): Promise<McpTransport> => {
      const example = createExampleServer(EXAMPLE_TIMING);
      servers.push(example);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await example.server.connect(serverSide);
      return clientSide;
    },
    defaults: EXAMPLE_DEFAULTS,
    abandon: () => Promise.resolve(true),
    close: async () => {
      for (const { server, store } of servers.splice(0)) {
        await server.close().catch(() => {});
        store.cleanup();
      }
    },
  };
}
