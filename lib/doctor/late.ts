/**
 * The doctor's calls that may create a task, and the tasks their late replies name. Such a call is
 * never cancelled with `notifications/cancelled` ([R24], [E7]: a task is cancelled with
 * `tasks/cancel`, and there is no rule for one whose id is not known yet, [A5]), so it is sent
 * without a signal or a timeout of the port's. The doctor stops waiting for it at its bound (or
 * when the probe stops), but the request stays open while the session does, so that a task its
 * late reply names is still counted, noted as late and taken into the clean-up. When the doctor is
 * done with the session ({@link LateTasks.end}) it lets go of the calls still open: they stay open
 * on a caller's client (never cancelled, [R24]), a reply that comes later is left alone, and
 * nothing more is sent.
 */
import { localCode, type JsonObject, type SessionPort, type Timers } from '../port/port.js';
import { failedReply, ProbeStopped, type Reply, type Timing } from './reply.js';
import { isObject, isTerminal, ms, nameText, seenTask } from './shape.js';
import type { TaskLedger } from './tasks.js';
import type { DoctorWire } from './types.js';

/** What the late tasks need of their session. */
export interface LateHost {
  readonly port: SessionPort;
  readonly wire: DoctorWire;
  readonly ledger: TaskLedger;
  /** The running probe's signal. */
  readonly signal: AbortSignal;
  now(): number;
}

/**
 * Passes a call's outcome on while the doctor follows the call: emptied by {@link LateTasks.end}, so
 * that a call still open on a caller's client holds nothing of the run.
 */
interface Relay {
  to: ((outcome: { ok: true; result: JsonObject } | { ok: false; error: unknown }) => void) | undefined;
}

/** The late tasks of one session. */
export class LateTasks {
  /** Tasks that came late, not yet taken by a clean-up (battery.ts `settle` takes them). */
  private readonly ids = new Set<string>();
  /** Aborted by {@link LateTasks.end}: nothing more is sent, and a late clean-up under way stops. */
  private readonly life = new AbortController();
  /** The calls followed whose outcome has not come yet. */
  private readonly relays = new Set<Relay>();
  /** Cleans up the tasks that come late once the battery's own clean-ups are over ({@link LateTasks.cleanWith}). */
  private cleanup: ((signal: AbortSignal) => Promise<void>) | undefined = undefined;
  /** The late clean-ups under way, one after the other. */
  private cleaning: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: LateHost,
    private readonly timers: Timers,
  ) {}

  /** Aborted once the doctor is done with the session: no call that may create a task is sent then. */
  get signal(): AbortSignal {
    return this.life.signal;
  }

  /** Whether `taskId` came late and no clean-up took it yet. */
  has(taskId: string): boolean {
    return this.ids.has(taskId);
  }

  /** A clean-up takes `taskId`. */
  take(taskId: string): void {
    this.ids.delete(taskId);
  }

  /**
   * Follows a call that may create a task (`request`, sent without a signal: never cancelled with
   * `notifications/cancelled`, [R24]): its reply, or at its bound a timeout; a stop of the probe
   * rejects with {@link ProbeStopped}. A reply that comes after either is read for the task it names.
   */
  follow(request: Promise<JsonObject>, tool: string, timeoutMs: number, timing: () => Timing): Promise<Reply> {
    const { signal } = this.host;
    const relay: Relay = { to: undefined };
    this.relays.add(relay);
    request.then(
      (result) => relay.to?.({ ok: true, result }),
      (error: unknown) => relay.to?.({ ok: false, error }),
    );
    return new Promise<Reply>((resolve, reject) => {
      let waiting = true;
      let gaveUpAt = 0;
      let why = '';
      const stopWaiting = (): void => {
        waiting = false;
        this.timers.cancel(timer);
        signal.removeEventListener('abort', stopped);
      };
      const giveUp = (reason: string): void => {
        stopWaiting();
        gaveUpAt = this.host.now();
        why = reason;
      };
      const stopped = (): void => {
        if (!waiting) return;
        giveUp('the probe stopped');
        reject(new ProbeStopped('stopped'));
      };
      const timer = this.timers.after(
        timeoutMs,
        () => {
          if (!waiting) return;
          giveUp(`no answer in ${ms(timeoutMs)}`);
          resolve({
            ok: false,
            code: localCode('timeout'),
            message: 'Request timed out',
            kind: 'timeout',
            ...timing(),
          });
        },
        true,
      );
      signal.addEventListener('abort', stopped, { once: true });
      relay.to = (outcome) => {
        relay.to = undefined;
        this.relays.delete(relay);
        if (!waiting) {
          if (outcome.ok) this.came(outcome.result, tool, gaveUpAt, why);
          return;
        }
        stopWaiting();
        if (outcome.ok) return resolve({ ok: true, result: outcome.result, ...timing() });
        try {
          resolve(failedReply(outcome.error, timing));
        } catch (stop) {
          reject(stop);
        }
      };
    });
  }

  /**
   * From now on a task that comes late is cleaned up at once by `clean` (one clean-up at a time,
   * bounded by its own bound and by {@link LateTasks.end}, and awaited by nothing: it never holds
   * the run): the battery's own clean-ups, which took the late tasks until now, are over. A task
   * that came late since the last of them goes first.
   */
  cleanWith(clean: (signal: AbortSignal) => Promise<void>): void {
    this.cleanup = clean;
    this.clean();
  }

  /**
   * The doctor is done with the session (its port closed, or left to the caller): it lets go of the
   * calls still open without cancelling them ([R24]: on a caller's client they stay open, and the
   * port takes a reply that comes later), a reply that comes later is left alone, and a late
   * clean-up under way stops.
   */
  end(): void {
    this.cleanup = undefined;
    for (const relay of this.relays) relay.to = undefined;
    this.relays.clear();
    this.life.abort();
  }

  /**
   * The reply to a call the doctor had given up on came after all. A task it names (a
   * `CreateTaskResult`, read or not, as at the end of a call answered in time) runs on the server
   * like any other of the doctor's: it is counted, noted as late, and taken into the clean-up,
   * read and cancelled with `tasks/cancel` ([R24], [E7]) while the session is open.
   */
  private came(result: JsonObject, tool: string, gaveUpAt: number, why: string): void {
    const { host } = this;
    if (this.life.signal.aborted || host.port.closed) return;
    const raw = host.wire === '2025-11-25' ? result.task : result.resultType === 'task' ? result : undefined;
    if (!isObject(raw)) return;
    const task = seenTask(raw, host.wire);
    if (task.taskId === undefined || host.ledger.has(task.taskId)) return;
    host.ledger.track(task.taskId, tool, host, task.status);
    host.ledger.cameLate(
      task.taskId,
      `a task of ${nameText(tool)} came late, ${ms(host.now() - gaveUpAt)} after the doctor had given up on its tools/call (${why}): taken into the clean-up`,
    );
    // One that has already ended needs no clean-up.
    if (isTerminal(task.status)) return;
    this.ids.add(task.taskId);
    this.clean();
  }

  private clean(): void {
    const clean = this.cleanup;
    if (clean === undefined || this.ids.size === 0 || this.life.signal.aborted) return;
    this.cleaning = this.cleaning.then(() => clean(this.life.signal)).catch(() => {});
  }
}
