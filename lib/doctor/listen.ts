/**
 * The doctor's `subscriptions/listen` on the tasks extension ([E18]): opened for some task ids,
 * ended by the doctor, and the server's answer kept if one came first: an empty result ends it
 * gracefully ([E22]); a task in its place is an invalid reply ([E36]), tracked at once so that the
 * clean-up cancels it however the probe ends (no row quotes its id).
 */
import type { SessionPort } from '../port/port.js';
import { DECLARE, failedReply, identity, type Reply, type Timing } from './reply.js';
import type { TaskLedger } from './tasks.js';
import { TIMERS } from './timers.js';

/** The doctor's `subscriptions/listen` (extension): how to end it, and the server's answer if it came first. */
export interface Listen {
  /** The reply, once the server answered (a result or its error) before {@link Listen.stop}. */
  reply: Reply | undefined;
  /** Ends the listen. */
  readonly stop: () => void;
}

/** What a listen needs of its session (session.ts). */
export interface ListenHost {
  readonly port: SessionPort;
  /** The running probe's signal: its abort ends the listen. */
  readonly signal: AbortSignal;
  readonly ledger: TaskLedger;
  now(): number;
  step(): number;
}

/**
 * Opens a `subscriptions/listen` for `taskIds`, its request id added to `listens` (the session
 * takes the notifications of those); {@link Listen.stop} ends it (the port then sends
 * `notifications/cancelled` for the open request).
 */
export function openListen(host: ListenHost, listens: Set<string>, taskIds: readonly string[]): Listen {
  const stop = new AbortController();
  listens.add(host.port.nextRequestId());
  const stopBoth = (): void => stop.abort();
  const signal = host.signal;
  signal.addEventListener('abort', stopBoth, { once: true });
  const sentAt = host.now();
  const sentSeq = host.step();
  const timing = (): Timing => ({ at: host.now(), sentAt, seq: host.step(), sentSeq });
  const listen: Listen = {
    reply: undefined,
    stop: () => {
      signal.removeEventListener('abort', stopBoth);
      stop.abort();
    },
  };
  host.port
    .request(
      'subscriptions/listen',
      { notifications: { taskIds: [...taskIds] } },
      identity,
      { timeoutMs: Infinity, timers: TIMERS, signal: stop.signal },
      undefined,
      undefined,
      DECLARE,
    )
    .then(
      (result) => {
        listen.reply = { ok: true, result, ...timing() };
        if (result.resultType === 'task' && typeof result.taskId === 'string')
          host.ledger.track(
            result.taskId,
            'subscriptions/listen',
            host,
            typeof result.status === 'string' ? result.status : undefined,
          );
      },
      (error: unknown) => {
        if (stop.signal.aborted) return;
        try {
          listen.reply = failedReply(error, timing);
        } catch {
          // Aborted: the listen was ended, not answered.
        }
      },
    );
  return listen;
}
