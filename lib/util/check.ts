/**
 * Checks of the values a caller passes as options: each returns the value (`undefined` when it was
 * not given, so a default applies) or throws a {@link TaskOptionError} naming the option.
 */
import { TaskOptionError } from '../errors.js';

/** What a bad value is, for a message: its type, or `null` / `an array`. */
function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** Throws the {@link TaskOptionError} of a bad `option`: `Option "name" must be …, got …`. */
function bad(option: string, must: string, value: unknown): never {
  const got = typeof value === 'number' ? String(value) : kindOf(value);
  throw new TaskOptionError(`Option "${option}" must be ${must}, got ${got}`, { option });
}

/** A finite number >= `min`. */
export function checkDuration(option: string, value: unknown, min = 0): number | undefined {
  if (value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= min)) return value;
  return bad(option, `a finite number >= ${min}`, value);
}

/** A safe integer >= `min`. */
export function checkInteger(option: string, value: unknown, min: number): number | undefined {
  if (value === undefined || (Number.isSafeInteger(value) && (value as number) >= min)) return value as number;
  return bad(option, `an integer >= ${min}`, value);
}

export function checkBoolean(option: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  return bad(option, 'a boolean', value);
}

export function checkFunction<F>(option: string, value: F | undefined): F | undefined {
  if (value === undefined || typeof value === 'function') return value;
  return bad(option, 'a function', value);
}

/** One of `choices`. */
export function checkChoice<const T extends string>(
  option: string,
  value: unknown,
  choices: readonly T[],
): T | undefined {
  if (value === undefined || choices.includes(value as T)) return value as T | undefined;
  return bad(option, `one of ${choices.join(', ')}`, value);
}

/** An object, not `null` or an array (the options object a method received, for one). */
export function checkOptionsObject(option: string, value: unknown): void {
  if (value !== undefined && kindOf(value) !== 'object') bad(option, 'an object', value);
}

/**
 * An `AbortSignal`. Checked before anything is subscribed to it, so a bad value leaves nothing
 * behind; `taskId` names the task whose method was given it.
 */
export function checkSignal(option: string, value: unknown, taskId?: string): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw new TaskOptionError(`Option "${option}" must be an AbortSignal, got ${kindOf(value)}`, { option, taskId });
}
