/**
 * A promise made without a closure of its own: `new Promise(capture)` hands the promise's settle
 * functions to {@link captured}, where the maker reads them at once (and clears them). For hot
 * paths that make a promise per request or per call.
 */

/** The settle functions of the promise {@link capture} was last handed (read at once, then cleared). */
export const captured: {
  resolve: ((value: unknown) => void) | undefined;
  reject: ((error: unknown) => void) | undefined;
} = {
  resolve: undefined,
  reject: undefined,
};

/** A promise executor that makes no closure per promise: it hands its settle functions to {@link captured}. */
export function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  captured.resolve = resolve as (value: unknown) => void;
  captured.reject = reject;
}
