/**
 * Options of {@link TaskClient} and {@link TaskClient.callToolAsTask}, their defaults, and their
 * validation (a bad value fails fast with a {@link TaskOptionError} naming the option).
 */
import type {
  CallInstrument,
  CallToolAsTaskOptions,
  CloseOptions,
  InputCallbacks,
  ProgressCallback,
  RetryPolicy,
  TaskClientOptions,
  TaskInstrumentation,
  TaskLogger,
} from '../api/index.js';
import { TaskOptionError } from '../errors.js';
import {
  checkBoolean,
  checkChoice,
  checkDuration,
  checkFunction,
  checkInteger,
  checkOptionsObject,
  checkSignal,
} from '../util/check.js';
import type { EngineConfig } from '../engine/engine.js';
import { systemClock } from '../util/scheduler.js';
import type { McpClient } from '../types.js';
import { ENVELOPE_KEYS } from '../port/sdk-v2.js';
import type { InputAnswers } from '../wire/wire.js';

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
 * Default ceiling of every poll delay ([R16], [E14]): a server's stated pace is followed for any
 * realistic job (a server may rate-limit polls that come sooner), and only an absurd interval
 * (`1e12`, `Number.MAX_VALUE`) is cut to it.
 */
const DEFAULT_MAX_POLL_INTERVAL_MS = 3_600_000;

/**
 * Validates the options of `TaskClient.close` before it does anything.
 * @returns whether running tasks are to be cancelled.
 * @throws TaskOptionError for a non-object `options` or a non-boolean `cancelRunning`.
 */
export function resolveCloseOptions(options: CloseOptions | undefined): boolean {
  checkOptionsObject('options', options);
  return checkBoolean('cancelRunning', options?.cancelRunning) ?? false;
}

function checkLimit(value: unknown): number {
  return value === Infinity ? Infinity : (checkInteger('maxConcurrentTasks', value, 1) ?? Infinity);
}

function checkLogger(value: unknown): TaskLogger | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && typeof (value as TaskLogger).log === 'function') {
    return value as TaskLogger;
  }
  throw new TaskOptionError('Option "logger" must have a log(entry) method', { option: 'logger' });
}

function checkInstrumentation(value: unknown): TaskInstrumentation | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && typeof (value as TaskInstrumentation).attach === 'function') {
    return value as TaskInstrumentation;
  }
  throw new TaskOptionError('Option "instrumentation" must have an attach(client) method', {
    option: 'instrumentation',
  });
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
  readonly instrumentation: TaskInstrumentation | undefined;
}

/**
 * Applies defaults and validates.
 * @throws TaskOptionError for any invalid value.
 */
export function resolveClientOptions(options: TaskClientOptions = {}): ResolvedClientOptions {
  checkOptionsObject('options', options);
  checkOptionsObject('retry', options.retry);
  const retryIn = options.retry ?? {};
  const retry: RetryPolicy = {
    retries: checkInteger('retry.retries', retryIn.retries, 0) ?? DEFAULT_RETRY.retries,
    minDelayMs: checkDuration('retry.minDelayMs', retryIn.minDelayMs) ?? DEFAULT_RETRY.minDelayMs,
    maxDelayMs: checkDuration('retry.maxDelayMs', retryIn.maxDelayMs) ?? DEFAULT_RETRY.maxDelayMs,
    factor: checkDuration('retry.factor', retryIn.factor, 1) ?? DEFAULT_RETRY.factor,
    jitter: Math.min(checkDuration('retry.jitter', retryIn.jitter) ?? DEFAULT_RETRY.jitter, 1),
    maxElapsedMs: checkDuration('retry.maxElapsedMs', retryIn.maxElapsedMs) ?? DEFAULT_RETRY.maxElapsedMs,
  };
  const minPollIntervalMs = checkDuration('minPollIntervalMs', options.minPollIntervalMs, 1) ?? 100;
  const maxPollIntervalMs =
    checkDuration('maxPollIntervalMs', options.maxPollIntervalMs, 1) ?? DEFAULT_MAX_POLL_INTERVAL_MS;
  if (maxPollIntervalMs < minPollIntervalMs) {
    // Name the option the caller set (the other is its default).
    const option = options.maxPollIntervalMs === undefined ? 'minPollIntervalMs' : 'maxPollIntervalMs';
    throw new TaskOptionError(
      `Option "${option}": maxPollIntervalMs (${maxPollIntervalMs}) must be >= minPollIntervalMs (${minPollIntervalMs})`,
      { option },
    );
  }
  const random = options.random ?? Math.random;
  if (typeof random !== 'function')
    throw new TaskOptionError('Option "random" must be a function', { option: 'random' });
  const clock = options.clock ?? systemClock;
  const parts = clock as Partial<Record<'now' | 'setTimeout' | 'clearTimeout', unknown>> | null;
  if (
    typeof parts !== 'object' ||
    parts === null ||
    typeof parts.now !== 'function' ||
    typeof parts.setTimeout !== 'function' ||
    typeof parts.clearTimeout !== 'function'
  ) {
    throw new TaskOptionError('Option "clock" must have now(), setTimeout() and clearTimeout() functions', {
      option: 'clock',
    });
  }
  return {
    clock,
    random,
    minPollIntervalMs,
    maxPollIntervalMs,
    initialPollIntervalMs: checkDuration('initialPollIntervalMs', options.initialPollIntervalMs, 1) ?? 500,
    hintlessMaxPollIntervalMs:
      checkDuration('hintlessMaxPollIntervalMs', options.hintlessMaxPollIntervalMs, 1) ?? 5_000,
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
    instrumentation: checkInstrumentation(options.instrumentation),
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
  /** Set by the client when its instrumentation watches the call. */
  readonly instrument?: CallInstrument | undefined;
  /**
   * Set by the client when the call has callbacks of its own: the input they (or the client's)
   * answer, which the call's requests declare ([E35]).
   */
  readonly input?: InputAnswers | undefined;
}

/**
 * Checks the tool name and arguments given to `callToolAsTask`.
 * @throws TaskOptionError naming `name` or `args` when one is invalid.
 */
export function checkToolCall(name: unknown, args: unknown): void {
  if (typeof name !== 'string' || name === '') {
    throw new TaskOptionError('Tool name must be a non-empty string', { option: 'name' });
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new TaskOptionError('Tool arguments must be a plain object', { option: 'args' });
  }
}

/**
 * Refuses `_meta` keys the library writes itself: the 2026-07-28 envelope (protocol version,
 * client info, client capabilities, [E1]). The library's own values are sent whatever a caller
 * gives; a caller that sets them has a mistake to hear about, not a value silently dropped.
 */
function checkOwnMeta(meta: Readonly<Record<string, unknown>>): void {
  for (const key of Object.values(ENVELOPE_KEYS)) {
    if (Object.hasOwn(meta, key))
      throw new TaskOptionError(`Option "meta" must not set "${key}": the library sets it on every request`, {
        option: 'meta',
      });
  }
}

/**
 * Merges a call's options over the client's and validates them.
 * @throws TaskOptionError for any invalid value.
 */
export function resolveCallOptions(
  client: ResolvedClientOptions,
  options: CallToolAsTaskOptions = {},
): ResolvedCallOptions {
  checkOptionsObject('options', options);
  const signal = checkSignal('signal', options.signal);
  const meta = options.meta;
  if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
    throw new TaskOptionError('Option "meta" must be a plain object', { option: 'meta' });
  }
  if (meta !== undefined) checkOwnMeta(meta);
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
        : {
            onElicitation: checkFunction('onElicitation', options.onElicitation),
            onSampling: checkFunction('onSampling', options.onSampling),
          },
    onProgress: checkFunction('onProgress', options.onProgress),
  };
}
