/**
 * Public options of the TaskClient's own methods (construction, `connect`, `callToolAsTask`,
 * `resume`, `close`) and the entries of its tool listing.
 */
import type { Clock, JsonObject, McpClient } from '../types.js';
import type { InputCallbacks, ProgressCallback } from './input.js';
import type { TaskInstrumentation } from './instrumentation.js';
import type { TaskLogger } from './logging.js';
import type { TaskReceiver } from './receiver.js';
import type { RetryOptions } from './retry.js';

/**
 * Options of a {@link TaskClient}.
 * @typeParam C - the SDK `Client` type of the TaskClient (what `reconnect` must return).
 */
export interface TaskClientOptions<C extends McpClient = McpClient> extends InputCallbacks {
  /**
   * Floor of every poll delay: a server asking for `pollInterval: 0` gets no request storm.
   * @defaultValue 100
   */
  readonly minPollIntervalMs?: number | undefined;
  /**
   * Ceiling of every poll delay. The server's stated `pollInterval` (`pollIntervalMs` on the tasks
   * extension) is followed up to it, and only an absurd one (`1e12`) is cut to it; the default, one
   * hour, honours the pace of any realistic job.
   *
   * Set it lower to get fresher status from a server that asks for slow polling, accepting the
   * risk: servers may rate-limit polls that come sooner than their interval, and a refused poll
   * counts as a failed poll (five in a row fail the task).
   * @defaultValue 3600000 (1 hour)
   */
  readonly maxPollIntervalMs?: number | undefined;
  /**
   * First poll delay when the server sends no `pollInterval` (some servers never do); it grows by
   * 1.5x per poll.
   * @defaultValue 500
   */
  readonly initialPollIntervalMs?: number | undefined;
  /**
   * Ceiling of that growth.
   * @defaultValue 5000
   */
  readonly hintlessMaxPollIntervalMs?: number | undefined;
  /**
   * Timeout of each short request (`tasks/get`, `tasks/cancel`, `tasks/list`, `tools/list`, and
   * `tasks/result` once the task is terminal). Separate from the task deadline; a poll that times
   * out is simply retried at the next tick. The task-creating `tools/call` gets the time left
   * before the deadline (or 60 s without one) plus this, as a backstop for a server that never
   * answers.
   * @defaultValue 10000
   */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Default deadline for each task, from the call until the result is in hand. Per-call
   * `timeoutMs` overrides it.
   * @defaultValue undefined (no deadline)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Default `ttl` requested for each task, in ms (a fraction is rounded up to a whole ms, as the
   * protocol's ttl is an integer); the server may override it. Ignored on the tasks extension,
   * where the server decides the ttl.
   * @defaultValue undefined (the server's default)
   */
  readonly ttlMs?: number | undefined;
  /**
   * When the deadline passes, cancel the remote task with `tasks/cancel` (if the server supports it).
   * @defaultValue true
   */
  readonly cancelOnTimeout?: boolean | undefined;
  /**
   * How long a deadline, an abort or `dispose()` waits for the remote cancel (the read before it
   * included, which gets at most half of this; and for the payload of a task found to have
   * finished) before settling anyway: a handle always settles within
   * `timeoutMs + cancelGraceMs`. An unanswered cancel is reported as `remoteCancel: 'unknown'`;
   * it is not withdrawn, and may still be retried in the background while the client is open.
   * @defaultValue 2000
   */
  readonly cancelGraceMs?: number | undefined;
  /**
   * Upper bound of `close({ cancelRunning: true })`: every running task is read once (at most
   * half of this), every cancel is sent once, and `close()` resolves when all are answered (and
   * the payloads of tasks found ended have arrived) or this time has passed. Also bounds how long
   * `close()` of a client made by `TaskClient.connect` waits for the answer to a call given up
   * before it came, so that a task created anyway gets its `tasks/cancel` before the connection
   * closes.
   * @defaultValue requestTimeoutMs
   */
  readonly closeTimeoutMs?: number | undefined;
  /**
   * When a call's `signal` aborts, cancel the remote task with `tasks/cancel`; `false` only detaches.
   * @defaultValue true
   */
  readonly cancelOnAbort?: boolean | undefined;
  /**
   * Throw {@link TaskNotSupportedError} instead of falling back to a plain `tools/call` when the
   * server or the tool does not support tasks.
   * @defaultValue false
   */
  readonly requireTask?: boolean | undefined;
  /**
   * Emit `expiring` this long before a still-running task's ttl runs out (the server may drop it
   * then).
   * @defaultValue 10% of the task's ttl, between 1 s and 60 s
   */
  readonly ttlWarningMs?: number | undefined;
  /** Retries of transient request failures (timeouts, lost connections, HTTP 5xx, 429 and 408). */
  readonly retry?: RetryOptions | undefined;
  /**
   * Most tasks this client runs at once (a slot is held from the call until the task settles).
   * @defaultValue Infinity
   */
  readonly maxConcurrentTasks?: number | undefined;
  /**
   * What a call does when `maxConcurrentTasks` is reached: wait its turn in a FIFO queue
   * (abortable by its signal, counted against its deadline), or reject with `TaskQueueFullError`.
   * @defaultValue 'queue'
   */
  readonly whenFull?: 'queue' | 'reject' | undefined;
  /**
   * Receives structured lifecycle logs; `consoleLogger()` is provided.
   * @defaultValue undefined (silent)
   */
  readonly logger?: TaskLogger | undefined;
  /**
   * Makes a new connected SDK `Client` when the connection closes; the TaskClient then resumes
   * every unsettled task over it (see `TaskClient.reconnect`). Retried with the `retry` backoff
   * while tasks are tracked. The clients it returns are the library's: each is closed when a later
   * one replaces it after a loss, or by `close()`.
   * @defaultValue undefined (wait for a manual `reconnect(client)`)
   */
  readonly reconnect?: (() => Promise<C>) | undefined;
  /**
   * Log task ids in full. Off by default: task ids are secrets, so logs carry a fingerprint.
   * @defaultValue false
   */
  readonly logTaskIds?: boolean | undefined;
  /**
   * Clock used for every delay and deadline; inject one for deterministic tests.
   * @defaultValue the wall clock, never going back (after a step back of the machine's clock it
   *   goes on from its last reading), and the runtime's timers
   */
  readonly clock?: Clock | undefined;
  /**
   * Source of randomness for jitter, returning values in [0, 1).
   * @defaultValue Math.random
   */
  readonly random?: (() => number) | undefined;
  /**
   * A receiver to serve from the start, made by `taskReceiver()` of `mcp-task-client/receiver`:
   * the server's task-augmented `elicitation/create` and `sampling/createMessage` requests (the
   * receiver role of 2025-11-25 tasks) are then run as tasks, as {@link TaskClient.serve} would.
   * `TaskClient.connect` also declares the capabilities this needs; a client made elsewhere must
   * have declared them. See docs/receiver.md.
   * @defaultValue undefined (not served)
   */
  readonly serve?: TaskReceiver | undefined;
  /**
   * Watches every call, the requests it sends and the input its tasks ask for, and may add entries
   * (trace context) to those requests' `_meta`: `otelInstrumentation()` of `mcp-task-client/otel`
   * traces and meters them with OpenTelemetry. See docs/observability.md.
   * @defaultValue undefined (nothing watched, nothing added)
   */
  readonly instrumentation?: TaskInstrumentation | undefined;
}

/** Options of one {@link TaskClient.callToolAsTask} call. */
export interface CallToolAsTaskOptions extends InputCallbacks {
  /**
   * Requested `ttl` in ms (wire `task.ttl`, a whole number: a fraction is rounded up).
   * @defaultValue the client's `ttlMs`
   */
  readonly ttlMs?: number | undefined;
  /** Deadline for the whole task, in ms. @defaultValue the client's `timeoutMs` */
  readonly timeoutMs?: number | undefined;
  /** Aborts the call; by default the remote task is cancelled too (`cancelOnAbort`). */
  readonly signal?: AbortSignal | undefined;
  /** Cancel the remote task when this call's deadline passes. @defaultValue the client's `cancelOnTimeout` */
  readonly cancelOnTimeout?: boolean | undefined;
  /** Cancel the remote task when this call's `signal` aborts. @defaultValue the client's `cancelOnAbort` */
  readonly cancelOnAbort?: boolean | undefined;
  /** Fail instead of running the tool as a plain call when no task can be had. @defaultValue the client's `requireTask` */
  readonly requireTask?: boolean | undefined;
  /** Timeout of each short request for this task. @defaultValue the client's `requestTimeoutMs` */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Extra `_meta` entries for the `tools/call` request. The library's own entries of the
   * 2026-07-28 per-request envelope (`io.modelcontextprotocol/protocolVersion`, `/clientInfo` and
   * `/clientCapabilities`) cannot be set here: `TaskOptionError`.
   */
  readonly meta?: Record<string, unknown> | undefined;
  /**
   * Receives the server's progress notifications for this call, for the task's whole life (not
   * only until the task is created). A `progressToken` is sent only when this is set. The tasks
   * extension has no progress for tasks.
   */
  readonly onProgress?: ProgressCallback | undefined;
}

/** Options of `TaskClient.close`. */
export interface CloseOptions {
  /**
   * Cancel every still-running remote task with `tasks/cancel` before closing.
   * @defaultValue false
   */
  readonly cancelRunning?: boolean | undefined;
}

/**
 * Options of `TaskClient.connect`: the SDK client's identity and options, plus the TaskClient's.
 * @typeParam C - the SDK `Client` type named to `TaskClient.connect` (what `reconnect` must return).
 */
export interface TaskClientConnectOptions<C extends McpClient = McpClient> extends TaskClientOptions<C> {
  /**
   * The SDK to build the client with: `v1` (`@modelcontextprotocol/sdk`) or `v2`
   * (`@modelcontextprotocol/client`, which negotiates the protocol era automatically and so also
   * reaches servers that offer tasks only through the 2026 extension). The two SDKs' transports
   * look alike, so this cannot be told from `transport`, with one exception: SDK v1's Streamable
   * HTTP transport gets SDK v1 (an SDK v2 client cannot negotiate over it).
   * @defaultValue the installed SDK; when both are installed, `v1` for SDK v1's Streamable HTTP
   * transport and `v2` for any other
   */
  readonly sdk?: 'v1' | 'v2' | undefined;
  /**
   * The client's name and version, sent to the server.
   * @defaultValue `{ name: 'mcp-task-client', version: '0.1.0' }`
   */
  readonly clientInfo?:
    | {
        /** The client's name. */
        readonly name: string;
        /** The client's version. */
        readonly version: string;
        readonly [key: string]: unknown;
      }
    | undefined;
  /**
   * Capabilities to declare, merged with what the callbacks need: `elicitation` when
   * `onElicitation` is given, `sampling` when `onSampling` is. On 2025-11-25, declare them here too
   * if only per-call callbacks will answer (on the tasks extension each call's requests declare
   * what its callbacks answer).
   */
  readonly capabilities?: JsonObject | undefined;
  /** Other options for the SDK `Client` constructor (e.g. `versionNegotiation` for SDK v2). */
  readonly clientOptions?: JsonObject | undefined;
  /**
   * Longest wait, in ms, for the transport to start and the server to finish the MCP handshake.
   * When it runs out, `TaskClient.connect` closes the transport and rejects with
   * `TaskConnectError` (`reason: 'no-answer'`), after at most 2 s more for the attempt to let go
   * of what it started.
   * @defaultValue 60000
   */
  readonly connectTimeoutMs?: number | undefined;
  /**
   * Stops connecting: `TaskClient.connect` closes the transport and rejects with `TaskAbortError`
   * (its `reason` the signal's). It only bounds the connection: once connected, aborting it does
   * nothing (give `signal` to each call, or call `close()`, to stop later work).
   */
  readonly signal?: AbortSignal | undefined;
}

/** Options of `TaskClient.resume`: the stop and input options of a call. */
export interface ResumeOptions extends Pick<
  CallToolAsTaskOptions,
  'timeoutMs' | 'signal' | 'cancelOnTimeout' | 'cancelOnAbort' | 'requestTimeoutMs' | 'onElicitation' | 'onSampling'
> {
  /** Tool name to report when resuming by bare task id. @defaultValue 'unknown' */
  readonly toolName?: string | undefined;
}

/** A tool the server lists, with whether it can run as a task. */
export interface ToolTaskSupport {
  /** The tool's name. */
  readonly name: string;
  /**
   * Whether a call of it can run as a task on this connection. Its declared
   * `execution.taskSupport` on 2025-11-25 (`forbidden` when absent); on the tasks
   * extension the server decides per call: `server-decides`. On a 2026-07-28 server that does not
   * offer the extension no call can become a task: `forbidden`.
   *
   * `unavailable`: the tool could run as a task, but no call becomes one on this connection, and
   * {@link ToolTaskSupport.unavailableReason} says why and what would fix it. That is every tool
   * of a server that offers tasks only through the `io.modelcontextprotocol/tasks` extension when
   * the connection is on the 2025-11-25 protocol (SDK v1, or SDK v2 without automatic
   * negotiation: connect with SDK v2 in automatic negotiation), and a tool that declares
   * `optional` or `required` on a 2025-11-25 server without the tasks capability. A call of such a
   * tool is sent plain; one the server runs only as a task fails with `TaskNotSupportedError`.
   */
  readonly taskSupport: 'forbidden' | 'optional' | 'required' | 'server-decides' | 'unavailable';
  /**
   * With `taskSupport: 'unavailable'`: the `execution.taskSupport` the tool declares (`forbidden`
   * when it declares none); otherwise absent.
   */
  readonly declaredTaskSupport?: 'forbidden' | 'optional' | 'required' | undefined;
  /** With `taskSupport: 'unavailable'`: why no call of it becomes a task here, and what would fix it; otherwise absent. */
  readonly unavailableReason?: string | undefined;
  /** Its title, if the server gave one. */
  readonly title?: string | undefined;
  /** Its description, if the server gave one. */
  readonly description?: string | undefined;
  /** Its input JSON Schema as the server listed it (absent when the server gave none that is an object). */
  readonly inputSchema?: JsonObject | undefined;
  /** Its output JSON Schema, when it declares one. */
  readonly outputSchema?: JsonObject | undefined;
  /** Its annotations (`readOnlyHint`, `destructiveHint`, `title`, …), when it has any. */
  readonly annotations?: JsonObject | undefined;
}
