/**
 * Getting the answers to a task's inline input requests to the server (the tasks extension), and
 * handing those requests out to be answered.
 *
 * Each answer goes out with `tasks/update` as soon as its callback returns ([E5]); transient
 * failures are retried at once by the retry policy. An answer whose `tasks/update` still failed
 * is kept rather than dropped: its callback is never asked again for a key it answered ([E4]: the
 * user is not prompted twice), yet the client should fulfil every request the server still lists
 * as outstanding ([E23]). So:
 *
 * - while a later poll (`tasks/get`) still lists the key, the kept answer is sent again: at most
 *   one round per poll, so re-sends are paced by polling, never a tight loop;
 * - after `maxPollFailures` rounds in all (the bound repeated hard poll failures have), the task
 *   fails with a {@link TaskRpcError} naming the key and the last `tasks/update` error, rather
 *   than waiting for an answer that will never arrive (with no deadline and no ttl, forever);
 * - a kept answer is dropped as soon as a poll no longer lists its key (the server took it after
 *   all, or moved on), and when the task settles.
 *
 * A callback that throws has no answer to keep; that stays as it was (reported, not asked again).
 *
 * An answer goes out only for a key the task still has outstanding as last seen ([E5]: the keys of
 * a `tasks/update` are pending ones; the extension's schema says each key must be one currently
 * outstanding). A server may withdraw a request before its callback answers: the task leaves
 * `input_required`, or lists other keys instead (a superseded request). Such a late answer is
 * kept, unsent, for the next poll to decide like a failed one: sent if that poll lists its key
 * after all (the view that dropped it was a lagging read taken as current, [A11]: a tie of
 * whole-second timestamps goes to the later arrival), dropped if not.
 */
import { TaskProtocolError, TaskRpcError, asTaskError, type TaskError } from '../errors.js';
import type { JsonObject } from '../types.js';
import { scrub } from '../util/fingerprint.js';
import { isoMs } from '../util/iso-time.js';
import type { InlineInput, WireSnapshot } from '../wire/wire.js';
import type { TaskRecord } from './record.js';
import type { KeptAnswer } from './record-extras.js';
import type { EngineCore, EngineEvents, RequestScope } from './types.js';

/** Longest key quoted in an error message (keys are the server's; messages stay short). */
const MAX_KEY_CHARS = 64;

/**
 * Hands out the input requests of a snapshot not handed out before ([E4]: keys are unique per
 * task, and no request is shown to the user twice); a key listed again for a different request is
 * reported as a {@link TaskProtocolError} (`method`: where the snapshot came from), not asked. A key whose answer failed to go out is not
 * handed out again: its kept answer is sent again instead ([E23], see above).
 */
export function offerInput(
  events: EngineEvents,
  record: TaskRecord,
  input: readonly InlineInput[],
  method: string,
): void {
  if (record.task.status !== 'input_required' || input.length === 0) return;
  const { fresh, reused } = record.inputArrived(input);
  // A key listed again for another request breaks [E4]: the user is not asked twice under one key
  // (an answer under it may already have gone), so the change is reported, and not asked.
  for (const item of reused) {
    events.problem(
      new TaskProtocolError(
        `The server reused the input request key ${keyName(item.key, record.taskId)} for a different request ` +
          "(keys are unique over a task's life); it is not asked again, and no answer is sent under that key",
        { method, task: record.task, toolName: record.toolName },
      ),
      record,
    );
  }
  if (fresh.length === 0) return;
  events.input(record, fresh);
}

/** No input request outstanding: what a current snapshot in any status but `input_required` says. */
const NONE: ReadonlySet<string> = new Set();

/**
 * A current snapshot of `record` (not stale) was observed: it says which input request keys the
 * task has outstanding when it lists them (a `tasks/get` always does, [E3]) or when its status is
 * not `input_required` (none). An `input_required` one without `inputRequests` (a terse
 * notification) says nothing about them.
 *
 * The keys outstanding before that it leaves out are withdrawn ([E5]), and told to `events`: the
 * prompts still open for them are dismissed. A snapshot no newer than the one that listed them (a
 * tie, [A11]) withdraws them too: it is the task as the client holds it, the later arrival. Should
 * it have been a lagging read, and a later one list a key again, the request is asked again if it
 * was not answered (`inputDismissed`); an answer already given is kept, dropped only by a newer
 * read (`resendKept`).
 */
export function inputListing(events: EngineEvents, record: TaskRecord, snapshot: WireSnapshot): void {
  const keys =
    snapshot.input !== undefined
      ? new Set(snapshot.input.map((item) => item.key))
      : record.task.status !== 'input_required'
        ? NONE
        : undefined;
  if (keys === undefined) return;
  const before = record.outstandingInput;
  record.inputListed(keys);
  // Nothing is built for a task that had no key outstanding (every poll of most tasks).
  if (before === undefined || before.size === 0) return;
  const withdrawn = [...before].filter((key) => !keys.has(key));
  if (withdrawn.length > 0) events.withdrawn(record, withdrawn);
}

/**
 * The prompt of `record`'s input request `key` was dismissed, unanswered, because the task stopped
 * listing it: its key is forgotten, so that a later read that lists it again (the one that
 * stopped was a lagging read) asks it again. [E4] spares the user only keys already answered.
 */
export function inputDismissed(record: TaskRecord, key: string): void {
  record.inputDismissed(key);
}

/**
 * Sends the answers `responses` (by key) of `record`'s input requests with `tasks/update`, and
 * keeps any the request fails to deliver, to be sent again ([E23]). An answer for a key the task
 * no longer has outstanding (withdrawn while its callback ran) is left out ([E5]), kept for the
 * next poll to decide.
 */
export function deliverAnswers(engine: EngineCore, record: TaskRecord, responses: Record<string, JsonObject>): void {
  const outstanding = record.outstandingInput;
  const round: Array<[string, KeptAnswer]> = [];
  // Keys are the server's: without a prototype, a key "__proto__" stays an own key when assigned.
  const sent = Object.create(null) as Record<string, JsonObject>;
  for (const [key, response] of Object.entries(responses)) {
    // Answered before the server reused the key for another request ([E4]): it would answer that one.
    if (record.inputChanged(key)) continue;
    if (outstanding !== undefined && !outstanding.has(key)) {
      // Not sent now; the next poll sends it or drops it (`resendKept`). A settled (detached) task
      // has no next poll: dropped.
      if (record.settlement === undefined)
        record.answerKept(key, { response, sends: 0, sending: false, listedAt: -Infinity });
      continue;
    }
    round.push([key, { response, sends: 1, sending: true, listedAt: isoMs(record.task.lastUpdatedAt) }]);
    sent[key] = response;
  }
  if (round.length > 0) send(engine, record, round, sent);
}

/**
 * A poll answered: drops the kept answers whose keys the server no longer lists, and sends the
 * rest again in one `tasks/update` (those not already on their way). Only polls decide: a
 * notification may leave `inputRequests` out, a `tasks/get` carries them all ([E3]).
 */
export function resendKept(engine: EngineCore, record: TaskRecord, snapshot: WireSnapshot): void {
  const kept = record.undelivered;
  if (kept === undefined) return;
  // An input_required read without inputRequests (malformed: a tasks/get lists them all, [E3])
  // says nothing of them, as `inputListing` takes it: the kept answers wait for a read that does.
  if (snapshot.task.status === 'input_required' && snapshot.input === undefined) return;
  const listed =
    snapshot.task.status === 'input_required' ? new Set(snapshot.input?.map((item) => item.key)) : undefined;
  const round: Array<[string, KeptAnswer]> = [];
  // Keys are the server's: without a prototype, a key "__proto__" stays an own key when assigned.
  const responses = Object.create(null) as Record<string, JsonObject>;
  const readAt = isoMs(snapshot.task.lastUpdatedAt);
  for (const [key, answer] of kept) {
    if (listed?.has(key) !== true) {
      // Dropped by a read newer than the one that listed the key; a tie may be a lagging replica.
      if (!(readAt <= answer.listedAt)) record.answerUnlisted(key);
    } else if (!answer.sending) {
      answer.listedAt = readAt;
      answer.sending = true;
      answer.sends += 1;
      round.push([key, answer]);
      responses[key] = answer.response;
    }
  }
  if (round.length > 0) send(engine, record, round, responses);
}

/**
 * One `tasks/update` with answers to inline input requests of `record` by key ([E5]), retrying
 * transient failures. An answer for a task no longer tracked (detached: it runs on) still goes
 * out, once, in the background.
 */
export function supplyInput(
  engine: EngineCore,
  record: TaskRecord,
  responses: Record<string, JsonObject>,
): Promise<void> {
  const send = (scope: RequestScope, weak?: boolean): Promise<void> =>
    engine.wire.supplyInput(
      record.taskId,
      responses,
      engine.requestOptions(record.requestTimeoutMs, scope, weak, record.instrument, false, record.input),
    );
  if (record.settlement !== undefined) return engine.background(record, (scope) => send(scope, true), true);
  return engine.retrying(record, (scope) => send(scope));
}

/** One `tasks/update` round carrying `round`'s answers. */
function send(
  engine: EngineCore,
  record: TaskRecord,
  round: ReadonlyArray<[string, KeptAnswer]>,
  responses: Record<string, JsonObject>,
): void {
  supplyInput(engine, record, responses).then(
    () => {
      for (const [key, answer] of round) record.answerDelivered(key, answer);
    },
    (error: unknown) => failed(engine, record, round, error),
  );
}

/** A round failed: report it, keep its answers for the next poll, or give up once the bound is reached. */
function failed(
  engine: EngineCore,
  record: TaskRecord,
  round: ReadonlyArray<[string, KeptAnswer]>,
  error: unknown,
): void {
  engine.report(error, record);
  // After the task settled (detached, or ended) nothing is kept: no poll will come to resend.
  if (record.settlement !== undefined || engine.classify(error) === 'stopped') return;
  const exhausted: string[] = [];
  for (const [key, answer] of round) {
    answer.sending = false;
    // A re-sent answer dropped meanwhile (a poll no longer listed its key) stays dropped.
    if (answer.sends > 1 && record.undelivered?.get(key) !== answer) continue;
    record.answerKept(key, answer);
    if (answer.sends >= engine.config.maxPollFailures) exhausted.push(key);
  }
  // A stop under way (deadline, abort, dispose) settles the task its own way.
  if (exhausted.length === 0 || engine.isStopping(record)) return;
  const failure = undeliverable(record, exhausted, engine.config.maxPollFailures, error);
  engine.settle(record, { ok: false, error: failure }, failure);
}

/** The error a task fails with when the answers for `keys` could not be delivered. */
function undeliverable(record: TaskRecord, keys: readonly string[], sends: number, last: unknown): TaskError {
  const cause = asTaskError(last, record);
  const names = keys.map((key) => keyName(key, record.taskId)).join(', ');
  const what = keys.length === 1 ? `input request ${names}` : `input requests ${names}`;
  return new TaskRpcError(
    `The answer to ${what} never reached the server: tasks/update failed ${sends} times (last: ${cause.message}); ` +
      'the remote task may still be waiting for it',
    {
      method: 'tasks/update',
      code: cause instanceof TaskRpcError ? cause.code : -32603,
      data: cause instanceof TaskRpcError ? cause.data : undefined,
      transient: false,
      kind: cause instanceof TaskRpcError ? cause.kind : 'local',
      task: record.task,
      toolName: record.toolName,
      cause,
    },
  );
}

/** An input request key as quoted in a message: kept short, and never repeating the task id (a secret). */
function keyName(key: string, taskId: string): string {
  return scrub(JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key), taskId);
}
