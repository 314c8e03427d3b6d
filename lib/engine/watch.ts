/**
 * Watching a task: its observation beginning (a created task at once, a resumed one once someone
 * observes it), and the interest in its pushed snapshots told to the wire in use, withdrawn once
 * (when it settles, or before a replaced wire's successor is told, `reconnect.ts`).
 */
import type { TaskWire } from '../wire/wire.js';
import { ensurePoll, firstPoll, react, readNow, type PollEngine } from './poll.js';
import type { TaskRecord } from './record.js';
import type { TtlWatch } from './ttl-watch.js';
import type { EngineCore } from './types.js';

/** What watching a task needs of its engine: the poll loop's engine, and the ttl timers. */
export interface WatchEngine extends PollEngine {
  /** The ttl timers of the engine's tasks. */
  readonly ttl: TtlWatch;
}

/**
 * Observation of a task just tracked (not provisional) begins at `now`: the wire is told, the
 * first poll waits one poll interval ([A16]), and the ttl is watched.
 */
export function observationBegins(engine: WatchEngine, record: TaskRecord, now: number): void {
  record.observationBegan();
  watch(engine, record, engine.wire);
  firstPoll(engine, record, now);
  // Without a poll to come (the connection is lost), the ttl's timer cannot wait for one.
  if (engine.paused) engine.ttl.arm(record);
  else engine.ttl.armAfter(record, record.nextPollAt);
  react(engine, record);
}

/** Starts observing a provisional task (a resumed one): it is read at once. */
export function activate(engine: PollEngine, record: TaskRecord): void {
  if (record.active || record.settlement !== undefined) return;
  record.observationBegan();
  watch(engine, record, engine.wire);
  readNow(record, engine.config.clock.now());
  // A notification may have told its state meanwhile (even a terminal one): act on it now.
  if (record.provisional) ensurePoll(engine, record);
  else react(engine, record);
}

/** Tells `wire` (the one in use) the record's task wants pushed snapshots. */
export function watch(engine: EngineCore, record: TaskRecord, wire: TaskWire): void {
  record.watched();
  wire.watch(record.taskId, engine.scheduler);
}

/**
 * Withdraws the interest told by {@link watch}, once. It was told to the wire in use: a replaced
 * wire's records are unwatched on it before the new one is taken (`reconnect.ts`).
 */
export function unwatch(engine: EngineCore, record: TaskRecord): void {
  if (record.unwatched()) engine.wire.unwatch(record.taskId);
}
