/**
 * Options of {@link TaskClient} and {@link TaskClient.callToolAsTask}, their defaults, and their
 * validation (a bad value fails fast with a {@link TaskOptionError} naming the option).
 */
import { TaskOptionError } from '../errors.js';
import type { EngineConfig } from '../engine/engine.js';
import { systemClock } from '../engine/scheduler.js';
import type { RetryPolicy } from '../engine/timing.js';
import type { TaskProgress } from './events.js';
import type { InputCallbacks, InputContext } from './input.js';
import type { TaskLogger } from './logger.js';
import type { Clock, JsonObject, McpClient } from '../types.js';

/** Receives a call's progress notifications for the task's whole life ([R35]). */
export type ProgressCallback = (progress: TaskProgress, context: ProgressContext) => void;

/** What a progress callback learns: the task (once created), its handle and the tool. */
export type ProgressContext = Pick<InputContext, 'taskId' | 'handle' | 'toolName'>;

/** Retries of transient failures, field by field; an absent or `undefined` field keeps its default. */
export type RetryOptions = { readonly [K in keyof RetryPolicy]?: RetryPolicy[K] | undefined };

/** Options of a {@link TaskClient}. */
export interface TaskClientOptions extends InputCallbacks {
  /**
   * Floor of every poll delay: a server asking for `pollInterval: 0` gets no request storm.
   * @default 100
   */
  readonly minPollIntervalMs?: number | undefined;
  /**
   * Ceiling of every poll delay (an enormous `pollInterval` is clamped to it).
   * @default 60000
   */
  readonly maxPollIntervalMs?: number | undefined;
  /**
   * First poll delay when the server sends no `pollInterval` (D2); it grows by 1.5x per poll.
   * @default 500
   */
  readonly initialPollIntervalMs?: number | undefined;
  /**
   * Ceiling of that growth.
   * @default 5000
   */
  readonly hintlessMaxPollIntervalMs?: number | undefined;
  /**
   * Timeout of each short request (`tasks/get`, `tasks/cancel`, `tasks/list`, `tools/list`, and
   * `tasks/result` once the task is terminal). Separate from the task deadline; a poll that times
   * out is simply retried at the next tick. The task-creating `tools/call` gets the time left
   * before the deadline (or 60 s without one) plus this, as a backstop for a server that never
   * answers.
   * @default 10000
   */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Default deadline for each task, from the call until the result is in hand. Per-call
   * `timeoutMs` overrides it.
   * @default undefined (no deadline)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Default `ttl` requested for each task, in ms ([R11]); the server may override it.
   * @default undefined (the server's default)
   */
  readonly ttlMs?: number | undefined;
  /**
   * When the deadline passes, cancel the remote task with `tasks/cancel` (if the server supports it).
   * @default true
   */
  readonly cancelOnTimeout?: boolean | undefined;
  /**
   * How long a deadline, an abort or `dispose()` waits for the remote cancel (and for the payload
   * of a task found to have finished) before settling anyway: a handle always settles within
   * `timeoutMs + cancelGraceMs`. An unanswered cancel is reported as `remoteCancel: 'unknown'`;
   * it is not withdrawn, and may still be retried in the background while the client is open.
   * @default 2000
   */
  readonly cancelGraceMs?: number | undefined;
  /**
   * Upper bound of `close({ cancelRunning: true })`: every cancel is sent at once, once, and
   * `close()` resolves when all are answered or this time has passed.
   * @default requestTimeoutMs
   */
  readonly closeTimeoutMs?: number | undefined;
  /**
   * When a call's `signal` aborts, cancel the remote task with `tasks/cancel`; `false` only detaches.
   * @default true
   */
  readonly cancelOnAbort?: boolean | undefined;
  /**
   * Throw {@link TaskNotSupportedError} instead of falling back to a plain `tools/call` when the
   * server or the tool does not support tasks.
   * @default false
   */
  readonly requireTask?: boolean | undefined;
  /**
   * Emit `expiring` this long before a still-running task's ttl runs out (the server may drop it
   * then, [V11]).
   * @default 10% of the task's ttl, between 1 s and 60 s
   */
  readonly ttlWarningMs?: number | undefined;
  /** Retries of transient request failures (timeouts, lost connections, HTTP 5xx/429). */
  readonly retry?: RetryOptions | undefined;
  /**
   * Most tasks this client runs at once (a slot is held from the call until the task settles).
   * @default Infinity
   */
  readonly maxConcurrentTasks?: number | undefined;
  /**
   * What a call does when `maxConcurrentTasks` is reached: wait its turn in a FIFO queue
   * (abortable by its signal, counted against its deadline), or reject with `TaskQueueFullError`.
   * @default 'queue'
   */
  readonly whenFull?: 'queue' | 'reject' | undefined;
  /**
   * Receives structured lifecycle logs ([R36]); `consoleLogger()` is provided.
   * @default undefined (silent)
   */
  readonly logger?: TaskLogger | undefined;
  /**
   * Makes a new connected SDK `Client` when the connection closes; the TaskClient then resumes
   * every unsettled task over it (see `TaskClient.reconnect`). Retried with the `retry` backoff
   * while tasks are tracked.
   * @default undefined (wait for a manual `reconnect(client)`)
   */
  readonly reconnect?: (() => Promise<McpClient>) | undefined;
  /**
   * Log task ids in full. Off by default: task ids are secrets, so logs carry a fingerprint.
   * @default false
   */
  readonly logTaskIds?: boolean | undefined;
  /**
   * Clock used for every delay and deadline; inject one for deterministic tests.
   * @default wall clock and Node timers
   */
  readonly clock?: Clock | undefined;
  /**
   * Source of randomness for jitter, returning values in [0, 1).
   * @default Math.random
   */
  readonly random?: (() => number) | undefined;
}

/** Options of one {@link TaskClient.callToolAsTask} call. */
export interface CallToolAsTaskOptions extends InputCallbacks {
  /** Requested `ttl` in ms (wire `task.ttl`). @default the client's `ttlMs` */
  readonly ttlMs?: number | undefined;
  /** Deadline for the whole task, in ms. @default the client's `timeoutMs` */
  readonly timeoutMs?: number | undefined;
  /** Aborts the call; by default the remote task is cancelled too (`cancelOnAbort`). */
  readonly signal?: AbortSignal | undefined;
  /** @default the client's `cancelOnTimeout` */
  readonly cancelOnTimeout?: boolean | undefined;
  /** @default the client's `cancelOnAbort` */
  readonly cancelOnAbort?: boolean | undefined;
  /** @default the client's `requireTask` */
  readonly requireTask?: boolean | undefined;
  /** Timeout of each short request for this task. @default the client's `requestTimeoutMs` */
  readonly requestTimeoutMs?: number | undefined;
  /** Extra `_meta` entries for the `tools/call` request. */
  readonly meta?: Record<string, unknown> | undefined;
  /**
   * Receives the server's progress notifications for this call, for the task's whole life
   * ([R35], [V27]). A `progressToken` is sent only when this is set.
   */
  readonly onProgress?: ProgressCallback | undefined;
}

/** Options of `TaskClient.close`. */
export interface CloseOptions {
  /**
   * Cancel every still-running remote task with `tasks/cancel` before closing.
   * @default false
   */
  readonly cancelRunning?: boolean | undefined;
}

/** Options of `TaskClient.connect`: the SDK client's identity and options, plus the TaskClient's. */
export interface TaskClientConnectOptions extends TaskClientOptions {
  /**
   * The SDK to build the client with: `v1` (`@modelcontextprotocol/sdk`) or `v2`
   * (`@modelcontextprotocol/client`, which negotiates the protocol era automatically and so also
   * reaches servers that offer tasks only through the 2026 extension). The two SDKs' transports
   * look alike, so this cannot be told from `transport`.
   * @default the installed SDK; `v2` when both are installed
   */
  readonly sdk?: 'v1' | 'v2' | undefined;
  /**
   * The client's name and version, sent to the server.
   * @default { name: 'mcp-task-client', version: '0.1.0' }
   */
  readonly clientInfo?: { readonly name: string; readonly version: string; readonly [key: string]: unknown } | undefined;
  /**
   * Capabilities to declare, merged with what the callbacks need: `elicitation` when
   * `onElicitation` is given, `sampling` when `onSampling` is. Declare them here too if only
   * per-call callbacks will answer.
   */
  readonly capabilities?: JsonObject | undefined;
  /** Other options for the SDK `Client` constructor (e.g. `versionNegotiation` for SDK v2). */
  readonly clientOptions?: JsonObject | undefined;
}

/** Default retry policy. */
export const DEFAULT_RETRY: RetryPolicy = {
  retries: 5,
  minDelayMs: 250,
  maxDelayMs: 10_000,
  factor: 2,
  jitter: 0.5,
  maxElapsedMs: 120_000,
};

/** Timeout of a plain (non-task) `tools/call` without a deadline: the SDK's own default. */
export const DEFAULT_PLAIN_CALL_TIMEOUT_MS = 60_000;

/**
 * Checks that `value` is a finite number >= `min` (or undefined).
 * @throws TaskOptionError naming `option` otherwise.
 */
export function checkDuration(option: string, value: unknown, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TaskOptionError(`Option "${option}" must be a finite number >= ${min}, got ${typeof value === 'number' ? value : typeof value}`, {
      option,
    });
  }
  return value;
}

/**
 * Checks that `value` is an integer >= 0 (or undefined).
 * @throws TaskOptionError naming `option` otherwise.
 */
function checkCount(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new TaskOptionError(`Option "${option}" must be an integer >= 0, got ${typeof value === 'number' ? value : typeof value}`, {
      option,
    });
  }
  return value;
}

function checkBoolean(option: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  throw new TaskOptionError(`Option "${option}" must be a boolean, got ${typeof value}`, { option });
}

function checkFunction<F>(option: string, value: F | undefined): F | undefined {
  if (value === undefined || typeof value === 'function') return value;
  throw new TaskOptionError(`Option "${option}" must be a function`, { option });
}

function checkLimit(value: unknown): number {
  if (value === undefined || value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TaskOptionError('Option "maxConcurrentTasks" must be an integer >= 1', { option: 'maxConcurrentTasks' });
  }
  return value;
}

function checkChoice<const T extends string>(option: string, value: unknown, choices: readonly T[]): T | undefined {
  if (value === undefined || choices.includes(value as T)) return value as T | undefined;
  throw new TaskOptionError(`Option "${option}" must be one of ${choices.join(', ')}`, { option });
}

function checkLogger(value: unknown): TaskLogger | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && typeof (value as TaskLogger).log === 'function') {
    return value as TaskLogger;
  }
  throw new TaskOptionError('Option "logger" must have a log(entry) method', { option: 'logger' });
}

/** Client settings after defaults and validation. */
export interface ResolvedClientOptions extends EngineConfig {
  readonly timeoutMs: number | undefined;
  readonly ttlMs: number | undefined;
  readonly cancelGraceMs: number;
  readonly closeTimeoutMs: number | undefined;
  readonly cancelOnTimeout: boolean;
  readonly cancelOnAbort: boolean;
  readonly requireTask: boolean;
  readonly callbacks: InputCallbacks;
  readonly maxConcurrentTasks: number;
  readonly whenFull: 'queue' | 'reject';
  readonly logger: TaskLogger | undefined;
  readonly logTaskIds: boolean;
  readonly reconnect: (() => Promise<McpClient>) | undefined;
}

/**
 * Applies defaults and validates.
 * @throws TaskOptionError for any invalid value.
 */
export function resolveClientOptions(options: TaskClientOptions = {}): ResolvedClientOptions {
  const retryIn = options.retry ?? {};
  const retry: RetryPolicy = {
    retries: checkCount('retry.retries', retryIn.retries) ?? DEFAULT_RETRY.retries,
    minDelayMs: checkDuration('retry.minDelayMs', retryIn.minDelayMs) ?? DEFAULT_RETRY.minDelayMs,
    maxDelayMs: checkDuration('retry.maxDelayMs', retryIn.maxDelayMs) ?? DEFAULT_RETRY.maxDelayMs,
    factor: checkDuration('retry.factor', retryIn.factor, 1) ?? DEFAULT_RETRY.factor,
    jitter: Math.min(checkDuration('retry.jitter', retryIn.jitter) ?? DEFAULT_RETRY.jitter, 1),
    maxElapsedMs: checkDuration('retry.maxElapsedMs', retryIn.maxElapsedMs) ?? DEFAULT_RETRY.maxElapsedMs,
  };
  const minPollIntervalMs = checkDuration('minPollIntervalMs', options.minPollIntervalMs, 1) ?? 100;
  const maxPollIntervalMs = checkDuration('maxPollIntervalMs', options.maxPollIntervalMs, 1) ?? 60_000;
  if (maxPollIntervalMs < minPollIntervalMs) {
    throw new TaskOptionError('Option "maxPollIntervalMs" must be >= minPollIntervalMs', { option: 'maxPollIntervalMs' });
  }
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new TaskOptionError('Option "random" must be a function', { option: 'random' });
  return {
    clock: options.clock ?? systemClock,
    random,
    minPollIntervalMs,
    maxPollIntervalMs,
    initialPollIntervalMs: checkDuration('initialPollIntervalMs', options.initialPollIntervalMs, 1) ?? 500,
    hintlessMaxPollIntervalMs: checkDuration('hintlessMaxPollIntervalMs', options.hintlessMaxPollIntervalMs, 1) ?? 5_000,
    requestTimeoutMs: checkDuration('requestTimeoutMs', options.requestTimeoutMs, 1) ?? 10_000,
    retry,
    maxPollFailures: 5,
    maxEarlyNotifications: 1_000,
    ttlWarningMs: checkDuration('ttlWarningMs', options.ttlWarningMs),
    timeoutMs: checkDuration('timeoutMs', options.timeoutMs),
    ttlMs: checkDuration('ttlMs', options.ttlMs),
    cancelGraceMs: checkDuration('cancelGraceMs', options.cancelGraceMs) ?? 2_000,
    closeTimeoutMs: checkDuration('closeTimeoutMs', options.closeTimeoutMs),
    cancelOnTimeout: checkBoolean('cancelOnTimeout', options.cancelOnTimeout) ?? true,
    cancelOnAbort: checkBoolean('cancelOnAbort', options.cancelOnAbort) ?? true,
    requireTask: checkBoolean('requireTask', options.requireTask) ?? false,
    callbacks: {
      onElicitation: checkFunction('onElicitation', options.onElicitation),
      onSampling: checkFunction('onSampling', options.onSampling),
    },
    maxConcurrentTasks: checkLimit(options.maxConcurrentTasks),
    whenFull: checkChoice('whenFull', options.whenFull, ['queue', 'reject'] as const) ?? 'queue',
    logger: checkLogger(options.logger),
    logTaskIds: checkBoolean('logTaskIds', options.logTaskIds) ?? false,
    reconnect: checkFunction('reconnect', options.reconnect),
  };
}

/** One call's settings after merging with the client's. */
export interface ResolvedCallOptions {
  readonly ttlMs: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly cancelOnTimeout: boolean;
  readonly cancelOnAbort: boolean;
  readonly requireTask: boolean;
  readonly requestTimeoutMs: number;
  readonly meta: Record<string, unknown> | undefined;
  readonly callbacks: InputCallbacks | undefined;
  readonly onProgress: ProgressCallback | undefined;
  /** Set by the client when `onProgress` is given. */
  readonly progressToken?: string | undefined;
}

/**
 * Merges a call's options over the client's and validates them.
 * @throws TaskOptionError for any invalid value.
 */
export function resolveCallOptions(
  client: ResolvedClientOptions,
  options: CallToolAsTaskOptions = {},
): ResolvedCallOptions {
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TaskOptionError('Option "signal" must be an AbortSignal', { option: 'signal' });
  }
  const meta = options.meta;
  if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
    throw new TaskOptionError('Option "meta" must be a plain object', { option: 'meta' });
  }
  return {
    ttlMs: checkDuration('ttlMs', options.ttlMs) ?? client.ttlMs,
    timeoutMs: checkDuration('timeoutMs', options.timeoutMs) ?? client.timeoutMs,
    signal,
    cancelOnTimeout: checkBoolean('cancelOnTimeout', options.cancelOnTimeout) ?? client.cancelOnTimeout,
    cancelOnAbort: checkBoolean('cancelOnAbort', options.cancelOnAbort) ?? client.cancelOnAbort,
    requireTask: checkBoolean('requireTask', options.requireTask) ?? client.requireTask,
    requestTimeoutMs: checkDuration('requestTimeoutMs', options.requestTimeoutMs, 1) ?? client.requestTimeoutMs,
    meta,
    callbacks:
      options.onElicitation === undefined && options.onSampling === undefined
        ? undefined
        : { onElicitation: checkFunction('onElicitation', options.onElicitation), onSampling: checkFunction('onSampling', options.onSampling) },
    onProgress: checkFunction('onProgress', options.onProgress),
  };
}
