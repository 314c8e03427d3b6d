/**
 * Turning the doctor's target into sessions on the library's port: a connected client as it is,
 * a transport connected once, or a transport factory connected once per era (2026-07-28 through
 * SDK v2's automatic negotiation, then 2025-11-25), so that every wire the server offers is
 * probed. Every connection is bounded in time and stopped at once by the run's signal (what it
 * opened is closed), and a target that cannot be reached or does not speak MCP gives a
 * {@link TaskConnectError} saying which.
 */
import { TaskConnectError, TaskOptionError, type ConnectFailure } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { boundConnect } from '../util/bounded-connect.js';
import { connectClient } from '../port/connect.js';
import { openPort, unusable } from '../port/open.js';
import type { Era, SdkMajor, SessionPort } from '../port/port.js';
import type { McpClient, McpTransport } from '../types.js';
import { ProbeStopped } from './reply.js';
import type { DoctorTarget, TransportFactory } from './types.js';
import { noop } from '../util/noop.js';
import { versionRefused } from '../util/version-refused.js';

/** One session to probe. */
export interface Opened {
  readonly port: SessionPort;
  readonly sdk: SdkMajor;
  readonly era: Era;
  /** Closes the session when the doctor opened it (a caller's client is left open). */
  close(): Promise<void>;
}

/** The sessions, and why an era has none. */
export interface Opening {
  readonly sessions: Opened[];
  readonly notes: Partial<Record<Era, string>>;
}

/** What connecting needs. */
export interface ConnectSettings {
  readonly sdk: SdkMajor | undefined;
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly connectTimeoutMs: number;
  /** The run's stop: a connection under way is given up at once, and what it opened is closed. */
  readonly signal: AbortSignal;
}

/** What the run's signal throws when it stops the opening of the sessions (the probes' own stop). */
const stopped = (): ProbeStopped => new ProbeStopped('stopped while connecting');

/** The capabilities the doctor's own clients declare: it answers questions (declining them). */
const CAPABILITIES = { elicitation: {}, sampling: {} };

const ONE_TARGET = 'pass a transport factory (a function that returns a fresh transport) to probe both eras';

/** Opens the sessions of `target`. */
export async function openSessions(target: DoctorTarget, settings: ConnectSettings): Promise<Opening> {
  if (typeof target === 'function') return openBoth(target, settings);
  const shape = target as unknown as Record<string, unknown> | null;
  if (typeof shape === 'object' && shape !== null && typeof shape.getServerCapabilities === 'function') {
    const why = unusable(target);
    if (why !== undefined) throw new TaskOptionError(why, { option: 'target' });
    const port = openPort(target as McpClient);
    const era = port.era();
    return {
      sessions: [{ port, sdk: port.sdk, era, close: () => Promise.resolve() }],
      notes: { [other(era)]: `the doctor was given one connected client (${era} era); ${ONE_TARGET}` },
    };
  }
  if (
    typeof shape === 'object' &&
    shape !== null &&
    typeof shape.send === 'function' &&
    typeof shape.start === 'function'
  ) {
    const opened = await connectPreferred(target as McpTransport, settings);
    return {
      sessions: [opened],
      notes: { [other(opened.era)]: `the doctor was given one transport (${opened.era} era); ${ONE_TARGET}` },
    };
  }
  throw new TaskOptionError(
    'The doctor needs a connected SDK Client, an MCP transport, or a function that returns one',
    { option: 'target' },
  );
}

function other(era: Era): Era {
  return era === 'legacy' ? 'modern' : 'legacy';
}

/** One transport: SDK v2 with automatic negotiation unless SDK v1 is asked for (or v2 is missing). */
async function connectPreferred(transport: McpTransport, settings: ConnectSettings): Promise<Opened> {
  if (settings.sdk === 'v1') return connectOne(transport, 'v1', undefined, settings);
  try {
    return await connectOne(transport, 'v2', 'auto', settings);
  } catch (error) {
    if (settings.sdk === undefined && notInstalled(error)) return connectOne(transport, 'v1', undefined, settings);
    throw error;
  }
}

/** A factory: a 2026-07-28 attempt (SDK v2, automatic), then a 2025-11-25 session when the first was modern. */
async function openBoth(factory: TransportFactory, settings: ConnectSettings): Promise<Opening> {
  const notes: Partial<Record<Era, string>> = {};
  const make = async (): Promise<McpTransport> => {
    if (settings.signal.aborted) throw stopped();
    const made = (async (): Promise<McpTransport> => {
      try {
        return await factory();
      } catch (error) {
        throw new TaskConnectError(`The transport factory failed: ${messageOf(error)}`, {
          reason: 'unreachable',
          cause: error,
        });
      }
    })();
    try {
      return await raceAbort(made, settings.signal, stopped);
    } catch (error) {
      // Stopped while the factory works: the transport it gives later is closed, never started.
      if (error instanceof ProbeStopped) void made.then((transport) => transport.close().catch(noop), noop);
      throw error;
    }
  };
  let first: Opened;
  try {
    first = await connectPreferred(await make(), settings);
  } catch (error) {
    if (error instanceof ProbeStopped) throw error;
    throw asConnectError(error);
  }
  if (first.era === 'legacy') {
    notes.modern =
      first.sdk === 'v1'
        ? 'SDK v2 (@modelcontextprotocol/client) is needed for a 2026-07-28 session'
        : 'the server has no 2026-07-28 handshake (server/discover): it speaks 2025-11-25 and earlier';
    return { sessions: [first], notes };
  }
  try {
    const legacy = await connectOne(await make(), 'v2', 'legacy', settings);
    return { sessions: [first, legacy], notes };
  } catch (error) {
    if (error instanceof ProbeStopped || settings.signal.aborted) {
      await first.close();
      throw stopped();
    }
    const code = rpcCode(error);
    notes.legacy =
      code === -32022
        ? 'the server refuses the 2025-11-25 handshake (initialize answered -32022): it speaks 2026-07-28 only'
        : `a 2025-11-25 session could not be opened: ${messageOf(error)}`;
    return { sessions: [first], notes };
  }
}

/**
 * Watches what arrives during the handshake, for a target that is not an MCP server: one that
 * sends the client's own handshake request back (an echo, like `cat`), or output that is not
 * JSON-RPC. `settle` undoes the watch (the transport's handlers become plain properties again).
 */
function watchHandshake(transport: McpTransport): { bad: Promise<never>; settle(): void } {
  const target = transport as unknown as Record<string, unknown>;
  let fail: (error: TaskConnectError) => void = () => {};
  const bad = new Promise<never>((_, reject) => (fail = reject));
  bad.catch(() => {});
  const handlers: Record<string, unknown> = { onmessage: target.onmessage, onerror: target.onerror };
  const watched = {
    onmessage: (message: unknown, extra?: unknown): void => {
      const m = message as { method?: unknown; id?: unknown } | null;
      // A server never sends the client's handshake requests: this peer echoes what it gets.
      if (
        typeof m === 'object' &&
        m !== null &&
        (m.method === 'initialize' || m.method === 'server/discover') &&
        m.id !== undefined
      ) {
        fail(
          new TaskConnectError(
            `The target does not speak MCP: it sent the client's own ${m.method} request back (an echo, like cat)`,
            { reason: 'not-mcp' },
          ),
        );
        return;
      }
      (handlers.onmessage as ((message: unknown, extra?: unknown) => void) | undefined)?.(message, extra);
    },
    onerror: (error: Error): void => {
      // An HTTP status is no verdict: SDK v2's era probe (server/discover) meets HTTP 400 from a
      // 2025-11-25 server (its message quotes the server's JSON-RPC error body) and falls back to
      // initialize; a handshake that does fail says why, and asConnectError reads its status.
      if (httpStatus(error) === undefined && (error instanceof SyntaxError || /JSON|parse/i.test(error.message))) {
        fail(
          new TaskConnectError(`The target does not speak MCP: its output is not JSON-RPC (${error.message})`, {
            reason: 'not-mcp',
            cause: error,
          }),
        );
      }
      (handlers.onerror as ((error: Error) => void) | undefined)?.(error);
    },
  };
  for (const key of ['onmessage', 'onerror'] as const) {
    Object.defineProperty(target, key, {
      configurable: true,
      enumerable: true,
      get: () => (handlers[key] === undefined ? undefined : watched[key]),
      set: (value: unknown) => {
        handlers[key] = value;
      },
    });
  }
  return {
    bad,
    settle: () => {
      for (const key of ['onmessage', 'onerror'] as const) {
        Object.defineProperty(target, key, {
          configurable: true,
          enumerable: true,
          writable: true,
          value: handlers[key],
        });
      }
    },
  };
}

/**
 * Connects `transport` with a client of `sdk`, bounded by `connectTimeoutMs` and stopped at once by
 * the run's signal. Given up (the bound, the signal, a target that is not MCP), the transport is
 * closed and the SDK's attempt is given a short while to let go of what it started (see
 * util/bounded-connect.ts).
 */
async function connectOne(
  transport: McpTransport,
  sdk: SdkMajor,
  mode: 'auto' | 'legacy' | undefined,
  settings: ConnectSettings,
): Promise<Opened> {
  const { signal } = settings;
  if (signal.aborted) {
    await transport.close().catch(noop);
    throw stopped();
  }
  const watch = watchHandshake(transport);
  const start = (stop: AbortSignal) =>
    connectClient({
      sdk,
      transport,
      clientInfo: settings.clientInfo,
      capabilities: CAPABILITIES,
      // The era probe gets part of the bound (SDK v2 waits 60 s by default): a stdio target that
      // says nothing (cat answers its own probe with nothing) then falls back to initialize in time.
      clientOptions:
        mode === undefined
          ? undefined
          : {
              versionNegotiation:
                mode === 'auto'
                  ? { mode, probe: { timeoutMs: Math.round(settings.connectTimeoutMs * 0.6) } }
                  : { mode },
            },
      signal: stop,
    });
  try {
    const { client } = await boundConnect(start, transport, {
      timeoutMs: settings.connectTimeoutMs,
      signal,
      failed: watch.bad,
    });
    watch.settle();
    const port = openPort(client);
    return { port, sdk, era: port.era(), close: () => client.close().catch(noop) };
  } catch (error) {
    watch.settle();
    if (signal.aborted) throw stopped();
    if (notInstalled(error) || error instanceof TaskConnectError) throw error;
    throw asConnectError(error);
  }
}

/** True for connectClient's "SDK not installed" error. */
function notInstalled(error: unknown): boolean {
  return error instanceof Error && !(error instanceof TaskConnectError) && /is not installed$/.test(error.message);
}

/** `error` and its causes. */
function chain(error: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let current: unknown = error;
  while (
    typeof current === 'object' &&
    current !== null &&
    out.length < 8 &&
    !out.includes(current as Record<string, unknown>)
  ) {
    out.push(current as Record<string, unknown>);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The JSON-RPC code of a handshake the server refused, if any. */
function rpcCode(error: unknown): number | undefined {
  for (const e of chain(error)) if (typeof e.code === 'number' && Number.isInteger(e.code) && e.code < 0) return e.code;
  return undefined;
}

/** The HTTP error status in `error`'s chain (SDK v2's `status`, SDK v1's numeric `code`), if any. */
function httpStatus(error: unknown): number | undefined {
  return chain(error)
    .map((e) => e.status ?? e.code)
    .find((value): value is number => typeof value === 'number' && value >= 400 && value < 600);
}

const NETWORK = /^(E[A-Z]+|UND_ERR_[A-Z_]+|ERR_SSL_[A-Z_]+|ERR_TLS_[A-Z_]+)$/;

/** Why a connection failed, as a {@link TaskConnectError}. */
function asConnectError(error: unknown): TaskConnectError {
  if (error instanceof TaskConnectError) return error;
  // [E12]: MCP, but not the protocol version offered (a 2026-07-28 server met by SDK v1).
  const refused = versionRefused(error);
  if (refused !== undefined) return refused;
  const message = messageOf(error);
  let reason: ConnectFailure = 'unreachable';
  let why = message;
  const code = rpcCode(error);
  // SDK v1 times a request out with -32001, SDK v2 with the code REQUEST_TIMEOUT (its era probe too).
  const timedOut = code === -32001 || chain(error).some((e) => e.code === 'REQUEST_TIMEOUT');
  const system = chain(error).find((e) => typeof e.code === 'string' && NETWORK.test(e.code));
  const status = httpStatus(error);
  if (system !== undefined) {
    why = `${String(system.code)}${typeof system.syscall === 'string' ? ` (${system.syscall})` : ''}: ${message}`;
  } else if (chain(error).some((e) => e.message === 'bad port')) {
    why = `fetch refuses to connect to that port (a "bad port"): ${message}`;
  } else if (code === -32000 || timedOut) {
    // The SDKs' local codes: the connection closed, or the request timed out.
    reason = timedOut ? 'no-answer' : 'unreachable';
    why = `${timedOut ? 'no answer to the handshake' : 'the server closed the connection (or exited) before it answered'}: ${message}`;
  } else if (code !== undefined) {
    reason = 'not-mcp';
    why = `it answered the MCP handshake with the JSON-RPC error ${code}: ${message}`;
  } else if (status !== undefined) {
    reason = status >= 500 ? 'unreachable' : 'not-mcp';
    why = `HTTP ${status}: ${message}`;
  } else if (/connection closed|closed before|exited/i.test(message)) {
    why = `the server closed the connection (or exited) before it answered: ${message}`;
  } else if (/json|parse|invalid|schema|expected/i.test(message)) {
    reason = 'not-mcp';
  }
  const lead = reason === 'not-mcp' ? 'The target does not speak MCP' : 'The server cannot be reached';
  return new TaskConnectError(`${lead}: ${why}`, { reason, cause: error });
}
