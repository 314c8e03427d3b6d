/**
 * The bound on the error text a task tool hands to the model. The AI SDK gives the model a tool's
 * error as `error.toString()` (its name and message), past the tool's `toModelOutput`, so a host
 * has no hook of the AI SDK's to bound it there; and a message may carry a server's text of any
 * length (a JSON-RPC error message, a status message). A longer message is cut here, in a copy of
 * the error: same class, same fields, so the full text stays in them (`rpcError`,
 * `statusMessage`, `cause`).
 */

/** The default of `maxErrorLength`: about a thousand tokens. */
export const DEFAULT_MAX_ERROR_LENGTH = 4_000;

/** `text` cut to at most `max` characters, ending in an ellipsis when cut; never half a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Whether `value` is a valid `maxErrorLength`: a whole number of characters, 1 or more, or `Infinity`. */
export function isErrorLength(value: unknown): boolean {
  return value === undefined || value === Infinity || (Number.isInteger(value) && (value as number) >= 1);
}

/** `error`, or a copy of it (same prototype and fields) whose message is cut to `max` characters. */
export function bounded(error: unknown, max: number): unknown {
  if (!(error instanceof Error) || error.message.length <= max) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object, Object.getOwnPropertyDescriptors(error)) as Error;
  Object.defineProperty(copy, 'message', { value: cut(error.message, max), writable: true, configurable: true });
  return copy;
}

/** The values of `run`; what it throws is bounded to `max` characters of message. */
export async function* withBoundedErrors<T>(
  run: AsyncGenerator<T, void, undefined>,
  max: number,
): AsyncGenerator<T, void, undefined> {
  try {
    yield* run;
  } catch (error) {
    throw bounded(error, max);
  }
}
