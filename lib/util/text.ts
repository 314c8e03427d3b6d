/** Text of values that may be anything (thrown by user code): never throws. */

/**
 * `value` as text for a message, whatever it is: `String()` throws for a null-prototype object
 * (and may for a proxy or a throwing `toString`); then its tag, then a fixed phrase.
 */
export function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return 'an unprintable value';
    }
  }
}

/** The message of a thrown value: its string `message` if it has one, else the value as text. Never throws. */
export function messageOf(thrown: unknown): string {
  try {
    const message = (thrown as { message?: unknown } | null | undefined)?.message;
    if (typeof message === 'string') return message;
  } catch {
    // A `message` getter (or proxy trap) that throws: fall back to the value itself.
  }
  return textOf(thrown);
}

/** Longest `statusMessage` kept or sent; longer ones are cut and end in an ellipsis. */
export const MAX_STATUS_MESSAGE_LENGTH = 16_384;

/** `text`, cut to at most `max` characters, ending in an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
