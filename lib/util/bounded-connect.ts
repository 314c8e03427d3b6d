/**
 * A connection attempt with a bound: it gives up when its time runs out, its signal aborts, or
 * something else shows it failed (the doctor's watch on a target that is not MCP). Given up, the
 * transport is closed, a client that connects after all is closed again, and the attempt gets a
 * short while to let go of what it started (a spawned process, an open request), so that nothing
 * of a connection its caller gave up on stays open.
 */
import { TaskAbortError, TaskConnectError } from '../errors.js';
import type { McpTransport } from '../types.js';
import { noop } from './noop.js';

/** The longest wait a timer can count; a longer bound is no bound. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * How long a given-up attempt gets to let go of what it started once its transport is closed
 * (SDK v2 reaps the process of its stdio era probe before its `connect` settles).
 */
const LET_GO_MS = 2_000;

/** What bounds a connection attempt. */
export interface ConnectBounds {
  /** Time for the whole attempt (the transport's start and the MCP handshake), in ms. */
  readonly timeoutMs: number;
  /** Stops the attempt at once. */
  readonly signal?: AbortSignal | undefined;
  /** Rejects when the attempt is known to have failed some other way. */
  readonly failed?: Promise<never> | undefined;
}

/**
 * A connection attempt over `transport`, started by `start` and bounded by `bounds`. `start` gets a
 * signal that aborts when the attempt is given up (or when `bounds.signal` aborted before it
 * began): an attempt that has not yet started its transport (the SDK still loading) must then not
 * start it.
 * @throws TaskConnectError (`reason: 'no-answer'`) when the time ran out; TaskAbortError, with the
 *   signal's reason, when the signal aborted; otherwise whatever the attempt or `failed` rejected with.
 */
export async function boundConnect<T extends { readonly client: { close(): Promise<void> } }>(
  start: (signal: AbortSignal) => Promise<T>,
  transport: McpTransport,
  bounds: ConnectBounds,
): Promise<T> {
  const { timeoutMs, signal } = bounds;
  const giveUp = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let offAbort: (() => void) | undefined;
  const stops = new Promise<never>((_, reject) => {
    if (timeoutMs <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        reject(
          new TaskConnectError(`The server did not finish the MCP handshake within ${timeoutMs} ms`, {
            reason: 'no-answer',
          }),
        );
      }, timeoutMs);
    }
    if (signal === undefined) return;
    const abort = (): void => {
      giveUp.abort(signal.reason);
      reject(new TaskAbortError('Connecting was aborted', { reason: signal.reason }));
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    offAbort = () => signal.removeEventListener('abort', abort);
  });
  const attempt = start(giveUp.signal);
  // A connection that completes after it was given up is closed again.
  const over = attempt.then(({ client }) => (giveUp.signal.aborted ? client.close().catch(noop) : undefined), noop);
  const racers: Array<Promise<T>> = [attempt, stops];
  if (bounds.failed !== undefined) racers.push(bounds.failed);
  try {
    return await Promise.race(racers);
  } catch (error) {
    giveUp.abort(error);
    // Whatever the transport's close does (throws, never settles), the wait stays bounded.
    const closing = Promise.resolve()
      .then(() => transport.close())
      .catch(noop);
    await letGo(Promise.all([closing, over]));
    throw error;
  } finally {
    clearTimeout(timer);
    offAbort?.();
  }
}

/** Waits until `over` settles, at most {@link LET_GO_MS}. */
async function letGo(over: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([over, new Promise<void>((resolve) => (timer = setTimeout(resolve, LET_GO_MS)))]);
  clearTimeout(timer);
}
