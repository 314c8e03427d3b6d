/**
 * One `abort` listener per signal, whatever the number of waiters on it. Agent hosts share one
 * `AbortSignal` among many calls (a turn's stop button); a listener per call would trip Node's
 * `MaxListenersExceededWarning` past ten and keep every waiter reachable from the signal. Here a
 * signal carries a single listener that fans out to a set of callbacks, and the listener is
 * removed as soon as the set is empty. The library's own long-lived signals ({@link keepListening})
 * keep theirs: each call would otherwise add and remove it again.
 */
import { noop } from './noop.js';

type Callbacks = Set<() => void>;

const hubs = new WeakMap<AbortSignal, Callbacks>();

/** The library's own signals whose listener stays while the signal lives. */
const kept = new WeakSet<AbortSignal>();

/**
 * Marks a signal the library owns and waits on for every call (a client's close signal): its one
 * listener stays installed when no callback is registered. Never for a caller's signal, which
 * must carry nothing of ours after the call.
 */
export function keepListening(signal: AbortSignal): void {
  kept.add(signal);
}

/** Runs every callback registered on `signal`, once, when it aborts. */
function fanOut(this: AbortSignal): void {
  const callbacks = hubs.get(this);
  hubs.delete(this);
  if (callbacks === undefined) return;
  for (const callback of callbacks) callback();
}

/**
 * Calls `callback` once when `signal` aborts (at once, synchronously, if it already has). Pass a
 * function of the call's own: one function registered twice on a signal is kept once.
 * @returns a function that removes the callback (harmless after it ran).
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return noop;
  }
  let callbacks = hubs.get(signal);
  if (callbacks === undefined) {
    callbacks = new Set();
    hubs.set(signal, callbacks);
    signal.addEventListener('abort', fanOut, { once: true });
  }
  // The callback itself is the entry: every caller passes a function of its own.
  callbacks.add(callback);
  const set = callbacks;
  return () => {
    if (!set.delete(callback) || set.size > 0 || kept.has(signal)) return;
    if (hubs.get(signal) === set) {
      hubs.delete(signal);
      signal.removeEventListener('abort', fanOut);
    }
  };
}

/**
 * Settles like `promise`, unless `signal` aborts first: then rejects with `reason()`. The listener
 * is removed as soon as either happens; `promise` keeps running, and when it loses, its own later
 * rejection is handled here (never an unhandled rejection).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, reason: () => unknown): Promise<T> {
  if (signal.aborted) {
    promise.then(undefined, noop);
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const off = onAbort(signal, () => reject(reason()));
    promise.then(
      (value) => {
        off();
        resolve(value);
      },
      (error: unknown) => {
        off();
        reject(error);
      },
    );
  });
}

/**
 * A signal that aborts (with the same reason) when any of `signals` aborts; `release()` detaches
 * from them all. For one request or one answer: release it when that is over.
 */
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
