/**
 * Fetching a task's final payload (`tasks/result`) and settling the task from it.
 *
 * - On `input_required` one blocking request is kept open so queued input can be delivered
 *   ([R29]); never two at once (inspector#1174).
 * - On a terminal status the payload is fetched at once. If a blocking request started earlier is
 *   still open and does not answer within a short grace, a second, short one is sent beside it and
 *   whichever brings the payload first wins: the result arrives promptly even from servers that
 *   wake their blocking `tasks/result` late (D5), and a lost answer cannot hang the task. A "not
 *   found" from the short one waits for the blocking one, bounded (gone-hold.ts): a server that
 *   hands a result out once (D19) may have given it to that one.
 * - A payload is kept once it arrived and never fetched again (rmcp consumes it).
 */
import {
  TaskCancelledError,
  TaskExpiredError,
  TaskNotFoundError,
  TaskProtocolError,
  TaskRpcError,
  asTaskError,
} from '../errors.js';
import { failedError } from './failure.js';
import { holdGone, released } from './gone-hold.js';
import { confirmTerminal, endFromPayload } from './payload-end.js';
import { scrub } from '../util/fingerprint.js';
import { probablyExpired } from './ttl-watch.js';
import type { JsonRpcErrorInfo } from '../types.js';
import type { TaskPayload } from '../wire/wire.js';
import type { EngineCore as TaskEngine } from './types.js';
import type { TaskRecord } from './record.js';

/** No request timeout (arms no timer): a blocking `tasks/result` waits as long as the task runs. */
const NO_TIMEOUT = Number.POSITIVE_INFINITY;
/**
 * How much sooner than our reckoning (the ttl counted from when the creating request was sent,
 * `ttl-watch.ts`) a server may drop a task at its ttl (its expiry timers may be coarse, or run
 * fast), when telling expiry from early vanishing.
 */
const EXPIRY_SKEW_MS = 1_000;
/**
 * How long an open blocking `tasks/result` gets to deliver the payload after the terminal status
 * was seen, before a second, short request is sent beside it.
 */
export const TERMINAL_GRACE_MS = 20;

/**
 * The task is terminal: fetch its payload now, or, when a blocking request from the
 * input_required phase is still open, give that one {@link TERMINAL_GRACE_MS} first.
 */
export function fetchTerminal(engine: TaskEngine, record: TaskRecord): void {
  if (record.payloadFetches === 0) {
    fetchPayload(engine, record);
    return;
  }
  if (record.pollTimer?.live === true || record.terminalFetch) return;
  // Polling is over for a terminal task, so its timer slot holds the grace period.
  record.graceArmed(
    engine.scheduler.after(TERMINAL_GRACE_MS, () => {
      record.graceEnded();
      fetchPayload(engine, record);
    }),
  );
}

/**
 * Starts a `tasks/result` request when one is needed: a blocking one for `input_required`, a
 * short one for a terminal task (even beside an open blocking one).
 *
 * What its answer means depends on when it was sent:
 * - sent for a terminal task, a reply is the final payload, a JSON-RPC error included ([V15], [V17]);
 * - sent while the task ran (the blocking wait of [R29]), only a successful reply is the payload.
 *   A JSON-RPC error there (a gateway's -32001, a server's -32603) says nothing certain about the
 *   task: it is reported on `error`, polling goes on, and the wait is opened again after the next
 *   observation that still shows `input_required`, at most once per poll interval. Once the
 *   server reports the task terminal, a fresh request fetches the real payload. A JSON-RPC error
 *   that arrives once the task is known failed (a notification came while the wait was open) is
 *   most likely the task's own ([V17]) but may be a gateway's: it is kept, and a fresh request
 *   asks again; should that one find the payload gone (a server that hands it out once, D19) or
 *   fail, the kept error is the task's. One that arrives while the task still shows running is
 *   reported, and kept the same way for a task that then shows failed.
 */
export function fetchPayload(engine: TaskEngine, record: TaskRecord): void {
  if (record.payload !== undefined || record.settlement !== undefined) return;
  const terminal = record.terminal;
  if (terminal ? record.terminalFetch : record.payloadFetches > 0) return;
  record.payloadRequested(terminal);
  // While the task runs, tasks/result blocks until it ends ([V16]): no request timeout then; a
  // deadline, if any, stops it. For a terminal task it answers at once.
  const timeoutMs = terminal ? record.requestTimeoutMs : NO_TIMEOUT;
  const generation = engine.generation;
  const done = (): boolean => {
    record.payloadRequestEnded(terminal);
    return record.settlement !== undefined || record.payload !== undefined;
  };
  const fetched = engine
    .retrying(record, (scope) => engine.wire.getPayload(record.taskId, engine.requestOptions(timeoutMs, scope)))
    .then(
      (answer) => {
        if (done()) return;
        if (!terminal && answer.kind === 'error') {
          if (endedFailed(record)) {
            // The task was seen failed while the wait was open (a notification): the error is most
            // likely its own ([V17]), or a gateway's. Kept, not reported; a fresh request asks again.
            record.waitErrorKept(answer);
            if (!record.terminalFetch && record.pollTimer?.live !== true) engine.react(record);
          } else {
            // Reported, and kept too: a server that sends no notification (rmcp) may have answered
            // the wait with the task's own error; should the task turn out failed and its result
            // handed out already (D19), that error is the task's ([V17]).
            record.waitErrorKept(answer);
            blockingWaitFailed(engine, record, waitError(record, answer.error));
          }
          return;
        }
        if (answer.kind === 'error' && answer.gone !== undefined) {
          // Only a request sent for the terminal task gets here (the wait's errors are handled above).
          if (!holdGone(engine, record, () => goneAnswered(engine, record, answer)))
            goneAnswered(engine, record, answer);
          return;
        }
        record.payloadFetched(answer);
        if (record.terminal) finish(engine, record);
        else void confirmTerminal(engine, record);
      },
      (error: unknown) => {
        if (done()) return;
        // Dropped with an old connection: ask again over the new one.
        if (generation !== engine.generation) {
          engine.react(record);
          return;
        }
        // The blocking wait failed while the short request for the now terminal task is out (even
        // as "not found": a server that hands the result out once gave it to that one): that one
        // brings the payload; this failure is reported and otherwise ignored.
        if (!terminal && record.terminalFetch) {
          engine.report(error, record);
          return;
        }
        if (engine.classify(error) === 'vanished') {
          if (!(terminal && holdGone(engine, record, () => goneFailed(engine, record, error))))
            goneFailed(engine, record, error);
          return;
        }
        if (terminal || error instanceof TaskProtocolError) {
          const failure = asTaskError(error, record);
          engine.settle(record, { ok: false, error: failure }, failure);
          return;
        }
        blockingWaitFailed(engine, record, error);
      },
    );
  // The blocking request's end lets go of a "not found" held for it (`released`, gone-hold.ts); the short
  // request of a terminal task (every task's) chains nothing.
  if (!terminal) void fetched.then(() => released(engine, record));
  else void fetched;
}

/**
 * The short request for the terminal task answered "not found" as a JSON-RPC error (`gone`), and
 * no blocking request may still bring the payload. A server that hands a result out once (D19)
 * answers so once it gave the result away: the error the wait brought is the task's own then,
 * for a task seen failed ([V17]). Otherwise an error that may also say "unknown task" ([V26]) is
 * the task's own only for a task seen failed; for one seen completed or cancelled, it is gone.
 */
function goneAnswered(engine: TaskEngine, record: TaskRecord, answer: TaskPayload & { kind: 'error' }): void {
  const failed = record.task.status === 'failed';
  const kept = failed ? record.waitError : undefined;
  if (kept === undefined && !failed) {
    vanished(engine, record, answer.gone);
    return;
  }
  record.payloadFetched(kept ?? answer);
  finish(engine, record);
}

/**
 * A request for the payload failed with "unknown task" (`error`), and no blocking request may
 * still bring it. Found so by the request for the terminal task (a server that hands a result out
 * once, D19), the error the wait brought is the task's, for a task seen failed. Any other
 * failure (a timeout, a gateway) says nothing of it, and the kept error may be a gateway's own.
 */
function goneFailed(engine: TaskEngine, record: TaskRecord, error: unknown): void {
  const kept = record.task.status === 'failed' ? record.waitError : undefined;
  if (kept === undefined) {
    vanished(engine, record, error);
    return;
  }
  engine.report(error, record);
  record.payloadFetched(kept);
  finish(engine, record);
}

/**
 * The blocking wait of the input_required phase failed: report it, keep polling, and allow the
 * next wait only one poll interval later. A task that turned terminal meanwhile gets its payload
 * from a fresh request (unless one is already open or scheduled).
 */
function blockingWaitFailed(engine: TaskEngine, record: TaskRecord, error: unknown): void {
  engine.report(error, record);
  record.blockingWaitFailed(engine.config.clock.now() + engine.pollDelay(record));
  if (record.terminal) {
    // The server already reported the end: fetch the payload afresh (unless a fetch is on its way).
    if (!record.terminalFetch && record.pollTimer?.live !== true) engine.react(record);
    return;
  }
  engine.ensurePoll(record);
}

/** True for a task known to have ended `failed`. */
function endedFailed(record: TaskRecord): boolean {
  return record.terminal && record.task.status === 'failed';
}

/** The error for a JSON-RPC error that answered a blocking wait. */
function waitError(record: TaskRecord, error: JsonRpcErrorInfo): TaskRpcError {
  return new TaskRpcError(`tasks/result failed while the task was running: ${error.message}`, {
    method: 'tasks/result',
    code: error.code,
    data: error.data,
    transient: false,
    task: record.task,
    toolName: record.toolName,
  });
}

/** Settles a terminal record from its status and payload. */
export function finish(engine: TaskEngine, record: TaskRecord): void {
  const task = record.task;
  if (task.status === 'cancelled') {
    // A stop under way (timeout, abort) settles a cancelled task with its own error.
    if (engine.isStopping(record)) return;
    // The server's message may name the task: its id is a secret, scrubbed as for a failure.
    const reason = task.statusMessage === undefined ? '' : `: ${scrub(task.statusMessage, task.taskId)}`;
    engine.settle(record, {
      ok: false,
      error: new TaskCancelledError(`Task for tool "${record.toolName}" was cancelled${reason}`, {
        task,
        toolName: record.toolName,
      }),
    });
    return;
  }
  const payload = record.payload;
  if (payload === undefined) return;
  // [V18]: isError counts as failed even if a server calls the task completed.
  if (payload.kind === 'result' && task.status === 'completed' && payload.result.isError !== true) {
    engine.settle(record, { ok: true, result: payload.result });
    return;
  }
  const ended = payload.kind === 'result' ? { result: payload.result } : { rpcError: payload.error };
  engine.settle(record, { ok: false, error: failedError(record.toolName, task, ended) });
}

/**
 * The server no longer knows the task ([V11], [V12], D9, D12): `TaskExpiredError` when its ttl
 * had elapsed (counted as `ttl-watch.ts` does), `TaskNotFoundError` when it vanished early.
 */
export function vanished(engine: TaskEngine, record: TaskRecord, error: unknown): void {
  // [V16], [V19]: the waiting tasks/result may have delivered the task's result (tagged for it)
  // before the server dropped the task (D9: at its ttl), while a read was still out; that read's
  // "unknown task" must not throw the result away. It settles as when the read had shown the task
  // running (`confirmTerminal`, payload-end.ts).
  if (
    !record.terminal &&
    !engine.isStopping(record) &&
    endFromPayload(engine, record) &&
    record.settlement !== undefined
  )
    return;
  const task = record.task;
  const common = { task, toolName: record.toolName, cause: error };
  // `error` undefined: the ttl's backstop, whose last look showed the task still there (a
  // cancel the server accepted is only a request, [E6]): it expired, it was not dropped.
  if (record.cancelAccepted && error !== undefined) {
    // [V25], [E6]: a task the server accepted a cancel for may be deleted at once; its absence is
    // the cancel's end, not a vanishing. A stop under way (deadline, abort) settles with its own
    // error, naming the acknowledged cancel; otherwise the task ends cancelled.
    if (engine.isStopping(record)) return;
    const failure = new TaskCancelledError(
      `Task for tool "${record.toolName}" was cancelled: the server accepted tasks/cancel and then dropped the task`,
      common,
    );
    engine.settle(record, { ok: false, error: failure }, failure);
    return;
  }
  const expired = probablyExpired(record, engine.config.clock.now(), EXPIRY_SKEW_MS);
  const sessions = engine.features.sessionScoped;
  let failure: TaskExpiredError | TaskNotFoundError;
  if (expired) {
    failure = new TaskExpiredError(
      error === undefined
        ? // [E13]: the ttl is a backstop; the server may fail or delete the task from now on.
          `Task expired: its ttl of ${task.ttl} ms elapsed, after which the server may fail or delete it`
        : `Task expired: its ttl of ${task.ttl} ms elapsed and the server dropped it`,
      common,
    );
  } else if (record.provisional) {
    // A resumed task the server never showed us.
    failure = new TaskNotFoundError(
      sessions
        ? 'The server does not know this task: it may belong to another session (resume over the same session), or it expired'
        : 'The server does not know this task: it may have expired, or never existed on this server',
      common,
    );
  } else if (sessions && record.olderConnection) {
    failure = new TaskNotFoundError(
      'The server no longer knows this task since the connection was replaced: it may have belonged to the previous session',
      common,
    );
  } else {
    failure = new TaskNotFoundError(
      'The server no longer knows this task (it vanished before its ttl elapsed)',
      common,
    );
  }
  // Iterators end by throwing: no terminal snapshot will ever come.
  engine.settle(record, { ok: false, error: failure }, failure);
}
