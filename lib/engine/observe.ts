/**
 * Observation: a task starts being tracked (its record made, the notifications that came before it
 * applied), pushed snapshots find their task (or wait in the early buffer while a creation is under
 * way), and every snapshot, pushed or read, is merged into the task's record and acted on.
 */
import { TaskProtocolError } from '../errors.js';
import { isTerminalStatus, type Task } from '../types.js';
import { OMITTED, type WireSnapshot } from '../wire/wire.js';
import type { EarlyBuffer } from './early.js';
import { inputListing, offerInput, resendKept } from './input-delivery.js';
import { awaitsPayloadRead, observedFresh, react } from './poll.js';
import { TaskRecord } from './record.js';
import type { TaskView } from './task-view.js';
import type { EngineEvents, SnapshotSource, TrackOptions } from './types.js';
import { observationBegins, type WatchEngine } from './watch.js';

/** What observation needs of its engine, beyond watching: its tasks, its early buffer, its events. */
export interface ObserveEngine extends WatchEngine {
  /** The tasks being tracked, by id. */
  readonly records: Map<string, TaskRecord>;
  /** Notifications for tasks not yet known, kept while a creation is under way. */
  readonly early: EarlyBuffer;
  /** What the engine tells the layer above. */
  readonly events: EngineEvents;
}

/**
 * Starts tracking `task`. Notifications that arrived before it are applied, and the first poll
 * waits one poll interval (the spec leaves it open, [A16]; polling at once wastes a request).
 */
export function track(
  engine: ObserveEngine,
  snapshot: WireSnapshot,
  toolName: string,
  options: TrackOptions,
): TaskView {
  const task = snapshot.task;
  const now = engine.config.clock.now();
  // The ttl counts from when the server can have created the task: at the earliest when its
  // creating request was sent, at the latest now, when this client first sees it (`ttl-watch.ts`).
  const record = new TaskRecord(
    task,
    toolName,
    options.startedAt ?? now,
    now,
    Math.min(options.sentAt ?? now, now),
    options.requestTimeoutMs ?? engine.config.requestTimeoutMs,
    options.provisional === true,
  );
  engine.records.set(task.taskId, record);
  if (options.instrument !== undefined) record.instrumented(options.instrument);
  if (options.input !== undefined) record.inputAnswered(options.input);
  if (snapshot.payload !== undefined && record.terminal) record.payloadRode(snapshot.payload);
  for (const early of engine.early.take(task.taskId)) {
    record.notificationArrived();
    observe(engine, record, early, 'notification');
  }
  // Observation begins (`watch.ts`), unless the task is provisional (see `activate`).
  if (!record.provisional) observationBegins(engine, record, now);
  return record;
}

/** Handles a pushed snapshot (a status notification). Unknown tasks are ignored. */
export function push(engine: ObserveEngine, snapshot: WireSnapshot): void {
  const record = engine.records.get(snapshot.task.taskId);
  if (record === undefined) {
    engine.early.offer(snapshot);
    return;
  }
  record.notificationArrived();
  observe(engine, record, snapshot, 'notification');
}

/** Offers a snapshot to a record and reacts to what changed. */
export function observe(
  engine: ObserveEngine,
  record: TaskRecord,
  snapshot: WireSnapshot,
  source: SnapshotSource,
): void {
  if (record.settlement !== undefined) return;
  const previous = record.task;
  const omitted = snapshot.omitted;
  const task = omitted === undefined ? snapshot.task : filledIn(snapshot.task, previous, omitted);
  const wasProvisional = record.provisional;
  const verdict = record.observed(task, record.holdsStream);
  // A payload riding on a terminal snapshot ([E3]) is the task's; never replaced once known. A
  // terminal task told without it (a terse notification) takes it from the next read even when
  // that read is not newer ([A11]: equal timestamps, fields left out of the notification).
  const payload = snapshot.payload;
  const tookPayload =
    payload !== undefined &&
    record.payload === undefined &&
    isTerminalStatus(task.status) &&
    (verdict !== 'stale' || record.terminal);
  if (tookPayload) {
    record.payloadRode(payload);
    if (task.status !== record.task.status) engine.report(contradiction(engine, record, task, source), record);
  }
  if (verdict !== 'stale' && verdict !== 'after-terminal') {
    // Which input requests are outstanding now, before any is handed out ([E5]: answers go for those only).
    inputListing(engine.events, record, snapshot);
    if (snapshot.input !== undefined)
      offerInput(
        engine.events,
        record,
        snapshot.input,
        source === 'notification' ? engine.wire.statusNotification : 'tasks/get',
      );
    // [E23]: answers a failed tasks/update did not deliver go again while a poll still lists their
    // key; not once a stop or a cancel began (the last look is a poll): D10, it would be acted on.
    if (source === 'poll' && record.undelivered !== undefined && !record.ending) resendKept(engine, record, snapshot);
  }
  if (verdict === 'stale') {
    if (tookPayload) react(engine, record);
    return;
  }
  if (verdict === 'after-terminal') {
    if (tookPayload) react(engine, record);
    if (!isTerminalStatus(task.status)) engine.report(contradiction(engine, record, task, source), record);
    return;
  }
  // Any current snapshot is a fresh observation: the next poll moves a full interval away.
  // Unless it left out what only a read brings: a terminal status without its payload, or
  // input_required just told without the input requests ([E3]: tasks/get carries them); or a
  // read was already asked for ahead of the cadence (by such a notification, or the ttl
  // backstop). Then the read comes as soon as its pacing allows (see `poll.ts`; [E14]: a
  // repeated notification neither hastens nor postpones it).
  const terseInput =
    source === 'notification' &&
    verdict === 'changed' &&
    task.status === 'input_required' &&
    snapshot.input === undefined &&
    engine.features.inlineInput;
  const needsRead = terseInput || record.readSoon || (record.terminal && awaitsPayloadRead(engine, record));
  observedFresh(engine, record, needsRead);
  // The ttl counts from the task's creation (`ttl-watch.ts`): only a new ttl moves its end.
  if (wasProvisional || previous.ttl !== record.task.ttl) engine.ttl.arm(record);
  if (verdict === 'changed') engine.events.status(record, source, previous);
  // Also on an unchanged snapshot: e.g. still input_required after a failed blocking request.
  react(engine, record);
}

/**
 * `task` with the fields its notification left out (D20; `omitted`: {@link OMITTED} bits) taken from
 * `held`, the snapshot held before: a terse notification changes the status and its message, not
 * what was known of the rest. `task` itself when that changes nothing (no copy).
 */
function filledIn(task: Task, held: Task, omitted: number): Task {
  const createdAt = omitted & OMITTED.createdAt ? held.createdAt : task.createdAt;
  const lastUpdatedAt = omitted & OMITTED.lastUpdatedAt ? held.lastUpdatedAt : task.lastUpdatedAt;
  const ttl = omitted & OMITTED.ttl ? held.ttl : task.ttl;
  const pollInterval = omitted & OMITTED.pollInterval ? held.pollInterval : task.pollInterval;
  if (
    createdAt === task.createdAt &&
    lastUpdatedAt === task.lastUpdatedAt &&
    ttl === task.ttl &&
    pollInterval === task.pollInterval
  )
    return task;
  const filled: { -readonly [K in keyof Task]: Task[K] } = { ...task, createdAt, lastUpdatedAt, ttl };
  if (pollInterval !== undefined) filled.pollInterval = pollInterval;
  return filled;
}

/** The server reported `task` after the terminal status held by `record`: it keeps the first one. */
function contradiction(
  engine: ObserveEngine,
  record: TaskRecord,
  task: Task,
  source: SnapshotSource,
): TaskProtocolError {
  return new TaskProtocolError(`Server reported "${task.status}" after terminal "${record.task.status}"; ignored`, {
    method: source === 'notification' ? engine.wire.statusNotification : 'tasks/get',
    task: record.task,
    toolName: record.toolName,
  });
}
