/**
 * The options of a receiver (`taskReceiver(options)`): checked when the receiver is made, and
 * completed with the serving client's own callbacks when a TaskClient serves it.
 */
import type { InputCallbacks, ServeOptions } from '../api/index.js';
import { TaskOptionError } from '../errors.js';
import { checkFunction, checkInteger } from '../util/check.js';
import type { ReceiverConfig } from './types.js';

/** The settings of a receiver with its defaults applied; its callbacks as given (none: the client's). */
export type CheckedServeOptions = Omit<ReceiverConfig, 'elicitation' | 'sampling'> &
  Pick<ServeOptions, 'elicitation' | 'sampling'>;

/** Default retention of a receiver task when the server asks for none: one hour. */
const DEFAULT_TTL_MS = 3_600_000;
/** Default cap on a receiver task's retention: 24 hours. */
const DEFAULT_MAX_TTL_MS = 86_400_000;
/** Shortest retention granted, whatever the server asks (unless `maxTtlMs` is lower): one second. */
export const MIN_TTL_MS = 1_000;

/**
 * The retention granted for the `ttl` a server requested ([V10]: the receiver may override it):
 * whole milliseconds, at least {@link MIN_TTL_MS} and two poll intervals, so that a task is not
 * deleted before the server's first poll while its callback has barely started (a requested 0 or
 * 0.5 included); at most `maxTtlMs`, the host's own cap, which wins over that floor. The granted
 * value is what every snapshot reports.
 */
export function grantedTtl(requested: number, config: Pick<ReceiverConfig, 'maxTtlMs' | 'pollIntervalMs'>): number {
  const floor = Math.max(MIN_TTL_MS, 2 * config.pollIntervalMs);
  return Math.min(Math.max(Math.floor(requested), floor), config.maxTtlMs);
}

/**
 * Validates `options` and applies the defaults of every setting.
 * @throws TaskOptionError naming the option (`serve`, `serve.maxTtlMs`, …) for an invalid value.
 */
export function checkServeOptions(options: ServeOptions): CheckedServeOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TaskOptionError('Option "serve" must be an object', { option: 'serve' });
  }
  const integer = (name: keyof ServeOptions, min: number, fallback: number): number =>
    checkInteger(`serve.${name}`, options[name], min) ?? fallback;
  const elicitation = checkFunction('serve.elicitation', options.elicitation);
  const sampling = checkFunction('serve.sampling', options.sampling);
  const maxTtlMs = integer('maxTtlMs', 1, DEFAULT_MAX_TTL_MS);
  return {
    elicitation,
    sampling,
    ttlMs: Math.min(integer('ttlMs', 1, DEFAULT_TTL_MS), maxTtlMs),
    maxTtlMs,
    pollIntervalMs: integer('pollIntervalMs', 1, 1_000),
    maxTasks: integer('maxTasks', 1, 1_000),
    maxResultWaiters: integer('maxResultWaiters', 1, 16),
    pageSize: integer('pageSize', 1, 50),
  };
}

/**
 * The configuration of a receiver on a client whose own callbacks are `defaults`: without either
 * callback of its own it serves with the client's `onElicitation` and `onSampling`; with one, only
 * that kind.
 * @throws TaskOptionError when no callback would serve anything.
 */
export function withClientCallbacks(options: CheckedServeOptions, defaults: InputCallbacks): ReceiverConfig {
  const none = options.elicitation === undefined && options.sampling === undefined;
  const elicitation = none ? defaults.onElicitation : options.elicitation;
  const sampling = none ? defaults.onSampling : options.sampling;
  if (elicitation === undefined && sampling === undefined) {
    throw new TaskOptionError(
      "serve needs an elicitation or a sampling callback (or the client's onElicitation / onSampling)",
      { option: 'serve' },
    );
  }
  return { ...options, elicitation, sampling };
}
