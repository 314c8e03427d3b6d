/**
 * Results handed to an object rather than to a promise: a {@link Sink} is told of each outcome
 * with a token of its caller's (a task's record), so that a hot path (a poll, once per task per
 * interval) makes no promise, no settle functions and no reaction closures of its own.
 *
 * Outcomes are delivered as promise reactions would run them: later, never inside the call that
 * produced them (a transport's `onmessage`), from one microtask per batch, in the order they came.
 */

/** Told of each outcome of what it was handed to, with the token it was handed with. */
export interface Sink<T, Token> {
  /** The work succeeded with `value`. */
  replied(value: T, token: Token): void;
  /** The work failed with `error`. */
  failed(error: unknown, token: Token): void;
}

// The queue: three slots per outcome (sink, token, value or error), and which of the two it is.
const slots: unknown[] = [];
const failures: boolean[] = [];
let size = 0;
let scheduled = false;

/** Tells `sink` of an outcome, in a microtask (one per batch): `value` if `failed` is false, else the error. */
export function deliver<T, Token>(sink: Sink<T, Token>, token: Token, value: unknown, failed: boolean): void {
  const at = size * 3;
  slots[at] = sink;
  slots[at + 1] = token;
  slots[at + 2] = value;
  failures[size] = failed;
  size += 1;
  if (!scheduled) {
    scheduled = true;
    queueMicrotask(flush);
  }
}

/** Delivers every outcome queued, those queued meanwhile included, and lets go of them. */
function flush(): void {
  for (let i = 0; i < size; i += 1) {
    const at = i * 3;
    const sink = slots[at] as Sink<unknown, unknown>;
    const token = slots[at + 1];
    const value = slots[at + 2];
    slots[at] = slots[at + 1] = slots[at + 2] = undefined;
    try {
      if (failures[i] === true) sink.failed(value, token);
      else sink.replied(value, token);
    } catch (error) {
      // The others are still delivered; the error goes on as one thrown in a promise reaction
      // would: a rejection nobody handles.
      void Promise.reject(error);
    }
  }
  size = 0;
  scheduled = false;
}
