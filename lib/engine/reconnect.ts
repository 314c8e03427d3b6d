/**
 * What a reconnection does to the tracked tasks. Over a new wire, each task was tracked on an
 * older connection, and each one observed is watched on the new wire instead; once the connection
 * is back, each one observed is read again at once. The engine keeps its own state (the wire in
 * use, its features, the generation that tells old answers apart, the paused state).
 */
import type { TaskWire } from '../wire/wire.js';
import { ensurePoll, react, readNow, type PollEngine } from './poll.js';
import type { TaskRecord } from './record.js';
import type { EngineCore } from './types.js';
import { unwatch, watch } from './watch.js';

/**
 * The wire in use (still the old one) is being replaced by `wire`: every record was tracked on an
 * older connection, and each one observed is unwatched on the old wire and watched on `wire`.
 * Requests still open on the old connection stay there.
 */
export function wireReplaced(engine: EngineCore, records: Iterable<TaskRecord>, wire: TaskWire): void {
  for (const record of records) {
    record.connectionReplaced();
    if (!record.active) continue;
    unwatch(engine, record);
    watch(engine, record, wire);
  }
}

/** The connection is back: every record observed is read again at once (a terminal one is reacted to, `poll.ts`). */
export function readAllAgain(engine: PollEngine, records: Iterable<TaskRecord>): void {
  const now = engine.config.clock.now();
  for (const record of records) {
    if (!record.active) continue;
    readNow(record, now);
    if (record.terminal) react(engine, record);
    else ensurePoll(engine, record);
  }
}
