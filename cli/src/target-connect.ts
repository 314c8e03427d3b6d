/**
 * Connecting the CLI's TaskClient over a transport (target.ts makes the transport): the options
 * of `TaskClient.connect` the CLI sets, the check of `--wire io.modelcontextprotocol/tasks`
 * against what the server offers, and giving connecting up on `--timeout` or the connect timeout,
 * with a {@link ConnectError} that says what was tried.
 */
import {
  TaskClient,
  TaskConnectError,
  type McpClient,
  type McpTransport,
  type TaskClientConnectOptions,
} from 'mcp-task-client';
import { EXT_WIRE, UsageError } from './args.js';
import { ConnectError, describeConnectFailure } from './connect-errors.js';
import type { ResolvedTarget, TargetOptions } from './target-options.js';

/** `--wire io.modelcontextprotocol/tasks` was asked for, and the server does not offer it (exit 1). */
export class WireUnavailableError extends Error {
  override readonly name = 'WireUnavailableError';
}

/**
 * How long closing the connection waits, at most, for the answer to a call given up before it
 * came (Ctrl-C, `--timeout`): the library then cancels a task the server created anyway.
 */
export const CLOSE_WAIT_MS = 5_000;

/**
 * How much longer the library's own wait at close (`closeTimeoutMs`) is than {@link CLOSE_WAIT_MS}:
 * the CLI's wait then always ends first when the answer does not come. With the same bound, the
 * library's `close()` could resolve first on a loaded machine (its timer ran out, no answer came),
 * and the CLI took that for the answer and said the task would be cancelled.
 */
const LIBRARY_CLOSE_MARGIN_MS = 1_000;

/** How long connecting may take by default (`--connect-timeout`), and how long an HTTP server may stay unreachable. */
export const CONNECT_TIMEOUT_MS = 30_000;

/**
 * How long a cancel (Ctrl-C, SIGTERM, a closed stdout, `--timeout`) waits for the server's answer
 * to `tasks/cancel` before the CLI leaves without it: the library's `cancelGraceMs`.
 */
export const CANCEL_GRACE_MS = 2_000;

/**
 * The options of `TaskClient.connect` the CLI controls (`cancelGraceMs`: {@link CANCEL_GRACE_MS}
 * unless given, less under a short `--timeout`).
 */
export type ConnectOptions = Pick<
  TaskClientConnectOptions,
  'onElicitation' | 'onSampling' | 'timeoutMs' | 'ttlMs' | 'cancelGraceMs'
>;

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
 * How to connect to the target `target` names over a transport, with the SDK `sdk`: the returned
 * function connects over `transport` (a TaskClient through the handshake, checked against
 * `--wire`), and gives up when `options.signal` aborts or after `connectTimeoutMs` (0: never);
 * `drop` stops what the target started when connecting is given up.
 */
export function connector(
  options: TargetOptions,
  connect: ConnectOptions,
  target: ResolvedTarget,
  sdk: { major: 'v1' | 'v2'; legacy: boolean },
  connectTimeoutMs: number,
): (transport: McpTransport, drop?: () => Promise<unknown>) => Promise<TaskClient> {
  const { wire, joining, url, where, command } = target;
  /**
   * What to change when the server refused the protocol version offered (a server of 2026-07-28
   * only, met with the 2025-11-25 handshake): the wire asked for, or the SDK missing.
   */
  const versionHint = (error: unknown): string => {
    if (!(error instanceof TaskConnectError) || error.reason !== 'version' || joining) return '';
    if (wire === '2025-11-25') return ' (--wire 2025-11-25 was asked for: this server needs --wire auto)';
    return sdk.major === 'v1' ? ' (SDK v2 is needed for it: npm install @modelcontextprotocol/client)' : '';
  };
  const failure = (error: unknown): Error =>
    error instanceof ConnectError || error instanceof WireUnavailableError || error instanceof UsageError
      ? error
      : new ConnectError(describeConnectFailure(error, { where, url: url?.href, command }) + versionHint(error), {
          cause: error,
        });

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
    // Both elicitation modes: an `elicitation: {}` that names neither declares form mode only, and
    // a url-mode request would then be refused (-32602) before the CLI could show it.
    capabilities: { elicitation: { form: {}, url: {} }, sampling: {} },
    // close() waits this long at most for the answer to a call given up before it came, so that a
    // task the server creates anyway still gets its tasks/cancel.
    closeTimeoutMs: CLOSE_WAIT_MS + LIBRARY_CLOSE_MARGIN_MS,
    // A deadline or Ctrl-C waits this long for the answer to tasks/cancel.
    cancelGraceMs: connect.cancelGraceMs ?? CANCEL_GRACE_MS,
  };
  const handshake = async (transport: McpTransport): Promise<TaskClient> => {
    const tasks = await TaskClient.connect(transport, connectOptions);
    const missing = wire === EXT_WIRE ? extensionMissing(tasks) : undefined;
    if (missing === undefined) return tasks;
    await tasks.close().catch(() => {});
    throw new WireUnavailableError(missing);
  };
  /**
   * Connects over `transport`; `drop` stops what the target started when connecting is given up,
   * and the rejection waits for it.
   */
  const opened = (
    transport: McpTransport,
    drop: () => Promise<unknown> = () => Promise.resolve(),
  ): Promise<TaskClient> => {
    const signal = options.signal;
    if (signal?.aborted === true) return drop().then(() => Promise.reject(signal.reason as Error));
    const connecting = handshake(transport);
    return new Promise<TaskClient>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let givenUp = false;
      const giveUp = (reason: Error): void => {
        // Nothing waits for the handshake any more: stop the server, close the transport, and
        // close a client that connects anyway. The rejection is the reason, once the server is
        // stopped (the handshake failing meanwhile is no news).
        givenUp = true;
        cleanup();
        const dropped = drop();
        void transport.close().catch(() => {});
        connecting.then(
          (tasks) => void tasks.close().catch(() => {}),
          () => {},
        );
        void dropped.then(() => reject(reason));
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
          if (!givenUp) resolve(tasks);
        },
        (error: unknown) => {
          cleanup();
          if (!givenUp) reject(failure(error));
        },
      );
    });
  };
  return opened;
}
