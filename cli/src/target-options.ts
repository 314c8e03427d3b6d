/**
 * The target the CLI's options name (`--stdio`, `--url`, `--session`, `--wire`), checked before
 * anything is loaded or started: contradictory or malformed options are a usage error, and the
 * rest is what connecting (target.ts, target-connect.ts) needs to know of the target.
 */
import { EXT_WIRE, UsageError, splitCommandLine, urlOption, type WireChoice } from './args.js';
import { terminalSafe } from './sanitize.js';

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
  /**
   * Told when connecting failed after a stdio server was started for it: whether the server was
   * stopped (it exited after SIGTERM, or SIGKILL), before `openTarget` rejects.
   */
  readonly onServerStopped?: ((exited: boolean) => void) | undefined;
}

/** The target {@link TargetOptions} name, checked ({@link resolveTarget}). */
export interface ResolvedTarget {
  /** The task wire asked for. */
  readonly wire: WireChoice;
  /** Whether an existing HTTP session is joined (`--session`). */
  readonly joining: boolean;
  /** The endpoint, for a `url` target. */
  readonly url: URL | undefined;
  /** The target in words, for messages. */
  readonly where: string;
  /** The program the stdio server's command line starts. */
  readonly command: string | undefined;
}

/**
 * Checks the target `options` name.
 * @throws UsageError for contradictory or malformed options.
 */
export function resolveTarget(options: TargetOptions): ResolvedTarget {
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
  const url = urlOption(options.url);
  const where =
    url !== undefined
      ? url.href
      : options.stdio !== undefined
        ? `the stdio server \`${terminalSafe(options.stdio)}\``
        : 'the bundled example server';
  const command = options.stdio === undefined ? undefined : (splitCommandLine(options.stdio)[0] as string);
  return { wire, joining, url, where, command };
}
