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

/**
 * Why a task's input signal aborted while a stop or a cancel of it is under way: `over` settles
 * once it is over.
 */
export class StopUnderWay extends Error {
  constructor(readonly over: Promise<unknown>) {
    super('The task is being stopped or cancelled');
  }
}

/**
 * Rejects with {@link AbandonedError}: at once, or, when `reason` is a {@link StopUnderWay}, once
 * that stop is over. Servers keep running work after a cancel (D10), and one told that its
 * question failed may fail the task before the stop's `tasks/cancel` reaches it; told after it, it
 * finds the task cancelled as asked.
 */
export function abandoned(reason: unknown): Promise<never> {
  const fail = (): never => {
    throw new AbandonedError();
  };
  return Promise.resolve(reason instanceof StopUnderWay ? reason.over : undefined).then(fail, fail);
}

/** Runs `run`, but gives up (rejecting) as soon as `signal` aborts (before it runs: it does not run). */
export function abandonable<T>(run: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
  const abandoned = (): AbandonedError => new AbandonedError();
  return signal.aborted ? Promise.reject(abandoned()) : raceAbort(Promise.resolve().then(run), signal, abandoned);
}
