/**
 * Special handler return values of the scripted extension server (same contract as the legacy
 * `ScriptedServer`): {@link NO_REPLY} withholds the answer, {@link raw} sends a message verbatim.
 */

/** A handler's return value meaning "send nothing now" (answer later with `ctx.reply`/`ctx.fail`, or never). */
export const NO_REPLY: unique symbol = Symbol('no-reply');

const RAW = Symbol('raw');
/** A verbatim message wrapper produced by {@link raw}. */
export interface RawReply {
  readonly [RAW]: unknown;
}
/** A handler's return value meaning "send this message verbatim" (any JSON, even a broken one). */
export function raw(message: unknown): RawReply {
  return { [RAW]: message };
}
/** The message inside a {@link raw} wrapper, or `undefined` for any other value. */
export function rawMessage(value: unknown): { message: unknown } | undefined {
  return typeof value === 'object' && value !== null && RAW in value
    ? { message: (value as RawReply)[RAW] }
    : undefined;
}
