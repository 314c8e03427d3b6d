/**
 * An answer no longer wanted: the rejection of an answer given up, which is no failure (the task
 * ended or the request was cancelled), on the signal it is given up on (util/abort.ts `anyOf`).
 * Used by the input router (router.ts).
 */
import { raceAbort } from '../../util/abort.js';

/** The rejection of an answer that is no longer wanted. */
export class AbandonedError extends Error {
  constructor() {
    super('The answer is no longer needed: the task ended or the request was cancelled');
  }
}

/** Runs `run`, but gives up (rejecting) as soon as `signal` aborts (before it runs: it does not run). */
export function abandonable<T>(run: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
  const abandoned = (): AbandonedError => new AbandonedError();
  return signal.aborted ? Promise.reject(abandoned()) : raceAbort(Promise.resolve().then(run), signal, abandoned);
}
