/**
 * An answer no longer wanted: the signal a callback's answer is given up on (any of several), and
 * the rejection of an answer given up, which is no failure (the task ended or the request was
 * cancelled). Used by the input router (router.ts).
 */
import { onAbort } from '../../util/abort.js';

/** A signal that aborts when any of `signals` aborts; `release()` detaches from them all. */
export function anyOf(...signals: ReadonlyArray<AbortSignal | undefined>): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const offs: Array<() => void> = [];
  for (const signal of signals) {
    if (signal !== undefined) offs.push(onAbort(signal, () => controller.abort(signal.reason)));
  }
  return {
    signal: controller.signal,
    release: () => {
      for (const off of offs) off();
    },
  };
}

/** The rejection of an answer that is no longer wanted. */
export class AbandonedError extends Error {
  constructor() {
    super('The answer is no longer needed: the task ended or the request was cancelled');
  }
}

/** Runs `run`, but gives up (rejecting) as soon as `signal` aborts. */
export function abandonable<T>(run: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(new AbandonedError());
      return;
    }
    const off = onAbort(signal, () => reject(new AbandonedError()));
    Promise.resolve().then(run).then(resolve, reject).finally(off);
  });
}
