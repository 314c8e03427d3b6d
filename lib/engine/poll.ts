/**
 * The engine's poll loop: what a record needs after a snapshot (its payload, or a read), when each
 * task is read next, reading it (`tasks/get`), and what a failed read does.
 *
 * Besides the cadence (one read a poll interval after the latest observation), a read can be asked
 * for ahead of it ({@link soonestRead}): by a notification that left out what only a read brings
 * (a terminal status without its payload, `input_required` without its input requests, [E3]), or
 * by the ttl backstop's last look ([E13]). However many ask, such reads are paced per task: one at
 * a time, the first at once, the next not sooner than one poll interval after the previous one
 * went out ([E14]); while polls are failing, not sooner than their backoff allows.
 */
import { asTaskError, TaskProtocolError } from '../errors.js';
import { isTerminalStatus } from '../types.js';
import type { WireSnapshot } from '../wire/wire.js';
import type { Sink } from '../util/deliver.js';
import { fetchPayload, fetchTerminal, finish, vanished } from './payload.js';
import type { TaskRecord } from './record.js';
import type { Requests } from './requests.js';
import { pollDelay } from './timing.js';
import type { EngineCore, RequestScope } from './types.js';

/** What the poll loop uses of the engine: its core, and the parts only the loop needs. */
export interface PollEngine extends EngineCore {
  /** True for a failure worth another attempt. */
  readonly retryable: (error: unknown) => boolean;
  /** The engine's request runner (a failed poll is a failed attempt of it). */
  readonly requests: Requests;
  /** A record's poll timer fired (one function for every record: no closure per poll). */
  readonly pollDue: (record: TaskRecord) => void;
  /** Told of every poll's outcome, with its record ({@link pollSink}). */
  readonly polls: Sink<WireSnapshot, TaskRecord>;
  /** The read the ttl backstop waited for ended (`answered`, or failed but for a vanished task). */
  looked(record: TaskRecord, answered: boolean): void;
  /** A read sent by {@link poll} ended, answered (and observed) or failed: a ttl timer waiting for it is armed. */
  readEnded(record: TaskRecord): void;
}

/**
 * When a read of `record` asked for ahead of the poll cadence may go: now, unless such a read went
 * out less than a poll interval ago (then one interval after it), or polls are failing (then the
 * retry time their backoff set; never later, never sooner). Repeated asks before the read goes
 * out all get the same time.
 */
function soonestRead(engine: PollEngine, record: TaskRecord): number {
  const now = engine.config.clock.now();
  if (record.failedPolls > 0) return Math.max(now, record.nextPollAt);
  return Math.max(now, record.hastenedAt + delay(engine, record));
}

/** Schedules a read of `record` ahead of the poll cadence (see {@link soonestRead}). */
export function readSoon(engine: PollEngine, record: TaskRecord): void {
  record.readRequested(soonestRead(engine, record));
  ensurePoll(engine, record);
}

/** Tracking of `record` began at `now`: its first poll waits one poll interval ([A16]). */
export function firstPoll(engine: PollEngine, record: TaskRecord, now: number): void {
  record.pollPlanned(now + delay(engine, record));
}

/** `record` is to be read at `now` (a resumed task is observed, the connection is back). */
export function readNow(record: TaskRecord, now: number): void {
  record.pollPlanned(now);
}

/**
 * A current snapshot of `record` was observed, a fresh observation: the next poll moves one full
 * interval away. Unless `needsRead` (the snapshot left out what only a read brings, or a read was
 * already asked for ahead of the cadence): then the read comes as soon as its pacing allows.
 */
export function observedFresh(engine: PollEngine, record: TaskRecord, needsRead: boolean): void {
  if (needsRead) record.readRequested(soonestRead(engine, record));
  else record.pollPlanned(engine.config.clock.now() + delay(engine, record));
}

/**
 * True when `record`'s poll timer firing now sends a read (as {@link poll} decides), its ttl timer
 * put off aside: the engine asks only for a record whose ttl timer waits for the first poll's.
 */
export function timerSendsRead(engine: PollEngine, record: TaskRecord): boolean {
  return (
    engine.config.clock.now() >= record.nextPollAt &&
    !record.pollInFlight &&
    record.settlement === undefined &&
    !record.terminal &&
    !engine.paused
  );
}

/** `record`'s poll timer fired: it polls now, or re-arms if a fresh observation pushed the poll back. */
export function pollTimerFired(engine: PollEngine, record: TaskRecord): void {
  record.pollTimerFired();
  // Notifications push nextPollAt back without touching the heap; re-arm if so.
  if (engine.config.clock.now() < record.nextPollAt) ensurePoll(engine, record);
  else poll(engine, record);
}

export function delay(engine: PollEngine, record: TaskRecord): number {
  const c = engine.config;
  return pollDelay(record.task, record.hintlessPolls, record.failedPolls, c, c.retry, c.random);
}

/** Decides what a record needs after its snapshot changed (or was confirmed). */
export function react(engine: PollEngine, record: TaskRecord): void {
  // A resumed task sends nothing until someone observes it (activate() reacts then).
  if (record.settlement !== undefined || record.provisional || !record.active) return;
  const status = record.task.status;
  if (isTerminalStatus(status)) {
    engine.scheduler.cancel(record.ttlTimer);
    if (status === 'cancelled' || record.payload !== undefined) {
      engine.scheduler.cancel(record.pollTimer);
      finish(engine, record);
    } else if (engine.features.payloadFetch) {
      // A short request for the payload is out, or its "not found" held with its bound in the timer
      // slot (`payload.ts`): nothing to do until it ends. Else the slot's grace starts afresh.
      if (record.terminalFetch) return;
      engine.scheduler.cancel(record.pollTimer);
      fetchTerminal(engine, record);
    } else {
      // The payload rides on the snapshot, but this one came without it (a terse notification):
      // read the task ahead of the cadence, paced ([E14]: a repeated notification must not bypass
      // the backoff of failing polls, nor the poll interval).
      readSoon(engine, record);
    }
    return;
  }
  // [R29]: on input_required, call tasks/result so queued input requests can be delivered;
  // polling goes on meanwhile ([R15]) so statuses keep flowing.
  if (
    status === 'input_required' &&
    engine.features.inputViaPayload &&
    !engine.paused &&
    engine.config.clock.now() >= record.blockingRetryAt
  ) {
    fetchPayload(engine, record);
  }
  ensurePoll(engine, record);
}

/**
 * Makes sure a poll is scheduled for a live record that is not terminal, or is terminal without
 * the payload a read must bring (a terse notification told the end). Every path that ends a
 * read (an answer, a stale answer, a failure) comes back here, so such a task is read until its
 * payload arrives or a bound gives up.
 */
export function ensurePoll(engine: PollEngine, record: TaskRecord): void {
  if (!record.active || record.settlement !== undefined) return;
  if (record.terminal && !awaitsPayloadRead(engine, record)) return;
  // A stop under way pauses polling, but not the read that brings a payload a terse notification
  // left out: the task finished first, and its result is what the stop settles with (as the
  // 2025-11-25 wire's tasks/result, which a stop does not hold back either).
  if ((engine.isStopping(record) && !record.terminal) || engine.paused) return;
  const timer = record.pollTimer;
  if (timer?.live) {
    if (timer.at <= record.nextPollAt) return;
    engine.scheduler.cancel(timer);
  }
  record.pollArmed(engine.scheduler.call(record.nextPollAt, engine.pollDue, record));
}

/** True for a terminal record whose payload rides on a read (not `tasks/result`) and is missing. */
export function awaitsPayloadRead(engine: PollEngine, record: TaskRecord): boolean {
  return !engine.features.payloadFetch && record.payload === undefined && record.task.status !== 'cancelled';
}

export function poll(engine: PollEngine, record: TaskRecord): void {
  if (record.pollInFlight || record.settlement !== undefined || engine.paused) return;
  if (record.terminal && !awaitsPayloadRead(engine, record)) return;
  const now = engine.config.clock.now();
  // [E13]: the first read sent once the backstop ttl ran out is its last look.
  record.pollSent(now, record.task.pollInterval === undefined && !record.provisional);
  record.pollPlanned(now + delay(engine, record));
  record.readSent();
  // One attempt, in the record's request group (as `attempt` does), its outcome told to the
  // engine's poll sink with the record: no promise or closure per poll. What the poll was (the
  // last look, sent over a connection since replaced) is kept on the record meanwhile.
  engine.wire.readTask(record.taskId, engine.requestOptions(record.requestTimeoutMs, record), engine.polls, record);
}

/** What a poll's outcome does; one per engine, told of every poll's with its record. */
export function pollSink(engine: PollEngine): Sink<WireSnapshot, TaskRecord> {
  return {
    replied(snapshot: WireSnapshot, record: TaskRecord): void {
      const look = record.pollAnswered();
      engine.observe(record, snapshot, 'poll');
      engine.readEnded(record);
      if (look) engine.looked(record, true);
      if (!payloadNeverCame(engine, record, snapshot)) ensurePoll(engine, record);
    },
    failed(error: unknown, record: TaskRecord): void {
      const older = record.pollOnOlderConnection;
      const look = record.pollFailed();
      engine.readEnded(record);
      const failure = engine.requests.attemptFailed(record, error);
      // A poll dropped with an old connection: reconnected() polls again over the new one.
      if (!older) pollFailed(engine, record, failure, look);
      else {
        if (look) record.lookPutOff();
        ensurePoll(engine, record);
      }
    },
  };
}

/**
 * A read of `record` was answered (and observed) while the task is terminal without the payload a
 * read must bring: a notification told the end without it ([E3]), and this read did not bring it
 * either (it shows the task still running, ended otherwise, or is not newer; the terminal status
 * is kept, [A11]). The task is read again, paced ([E14]), but not forever: after
 * `maxPollFailures` such reads (the bound of repeated hard poll failures) the server has
 * contradicted its own notification beyond doubt, and the task fails with TaskProtocolError
 * instead of leaving `result()` pending.
 * @returns true when the task was failed.
 */
function payloadNeverCame(engine: PollEngine, record: TaskRecord, snapshot: WireSnapshot): boolean {
  if (record.settlement !== undefined || !record.terminal || !awaitsPayloadRead(engine, record)) return false;
  const reads = record.readWithoutPayload();
  if (reads < engine.config.maxPollFailures) return false;
  const status = record.task.status;
  const failure = new TaskProtocolError(
    `Server reported "${status}", but ${reads} reads of the task never carried its ${status === 'failed' ? 'error' : 'result'} (the last one said "${snapshot.task.status}")`,
    { method: 'tasks/get', task: record.task, toolName: record.toolName },
  );
  engine.settle(record, { ok: false, error: failure }, failure);
  return true;
}

function pollFailed(engine: PollEngine, record: TaskRecord, error: unknown, look: boolean): void {
  if (record.settlement !== undefined) return;
  const kind = engine.classify(error);
  if (kind === 'vanished') {
    vanished(engine, record, error);
    return;
  }
  if (engine.paused || kind === 'stopped') {
    // reconnected() polls again; that read is the last look then.
    if (look) record.lookPutOff();
    return;
  }
  // A last look that failed: the task cannot be asked about, and its ttl ran out.
  if (look) {
    engine.looked(record, false);
    if (record.settlement !== undefined) return;
  }
  // A poll that times out is simply retried at the next tick; only repeated hard failures
  // (a server that cannot serve tasks/get, or keeps sending garbage) fail the task. A transient
  // failure between them (a server restarting drops answers, then errors) starts the count again.
  const hard = !engine.retryable(error);
  const hardFailures = record.pollFailureCounted(hard);
  engine.report(error, record);
  if (hard && hardFailures >= engine.config.maxPollFailures) {
    const failure = asTaskError(error, record);
    engine.settle(record, { ok: false, error: failure }, failure);
    return;
  }
  record.pollPlanned(engine.config.clock.now() + delay(engine, record));
  ensurePoll(engine, record);
}

/** Reads a task (`tasks/get`) for `record`, counting the request in its metrics. */
export function readTask(engine: PollEngine, record: TaskRecord, scope: RequestScope): Promise<WireSnapshot> {
  record.readSent();
  return engine.wire.getTask(record.taskId, engine.requestOptions(record.requestTimeoutMs, scope));
}
