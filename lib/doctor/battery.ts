/**
 * What the probes of one wire share (the session, the rows, the tools to run, what earlier probes
 * measured), and how each probe runs: bounded in time, and followed by a clean-up that cancels
 * every task of the session still running, so that nothing is left running on the server.
 */
import type { RowSink } from './rows.js';
import { ProbeStopped } from './reply.js';
import type { Session } from './session.js';
import { isTerminal, ms, seenTask, ttlWords } from './shape.js';
import { timerDelay } from './timers.js';
import type { DoctorProgress } from './types.js';

/** A tool to call, with its arguments. */
export interface Resolved {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** What the probes of one wire share. */
export interface Battery {
  readonly s: Session;
  readonly rows: RowSink;
  /** The task tool of the battery. */
  readonly tool: Resolved;
  readonly failTool: Resolved | undefined;
  readonly inputTool: Resolved | undefined;
  /** Whether the server can cancel tasks on this wire (2025: `tasks.cancel`). */
  readonly canCancel: boolean;
  /** Whether `tasks/list` is offered (2025: `tasks.list`). */
  readonly canList: boolean;
  /** The client declared elicitation or sampling (the input checks need one). */
  readonly canAnswer: boolean;
  /** Until when the running probe may wait for its tasks (`session.now()` clock). */
  until: number;
  /** How long the battery's tool took from call to end, once measured. */
  toolMs: number | undefined;
  /** The task of the lifecycle probe, for the list and expiry checks. */
  mainTask:
    { readonly taskId: string; readonly createdLocal: number; readonly ttl: unknown; retained: boolean } | undefined;
  readonly onProgress: ((event: DoctorProgress) => void) | undefined;
}

/**
 * Runs one probe: it may wait for its tasks until `b.until` (the probe bound), and is stopped a
 * request bound later. Checks it could not reach get a not-testable row saying why, and every
 * task still running afterwards is cancelled.
 * @throws ProbeStopped when the run itself was stopped (its signal).
 */
export async function runProbe(
  b: Battery,
  name: string,
  checks: readonly string[],
  body: () => Promise<void>,
  runSignal: AbortSignal,
): Promise<void> {
  const { s } = b;
  const { deadline } = s.settings;
  // The run's deadline has passed: the probe is not run, and its checks say so.
  if (deadline?.passed() === true) return deadline.cut(b.rows, checks);
  b.onProgress?.({ wire: s.wire, probe: name });
  const bound = s.settings.probeTimeoutMs;
  const own = bound + s.settings.requestTimeoutMs + 1_000;
  const stop = bounded(runSignal, deadline === undefined ? own : Math.min(own, deadline.untilCut()));
  s.signal = stop.signal;
  b.until = s.now() + bound;
  try {
    await body();
  } catch (error) {
    if (runSignal.aborted) throw error instanceof ProbeStopped ? error : new ProbeStopped('stopped', { cause: error });
    if (deadline?.passed() === true) deadline.cut(b.rows, checks);
    const why =
      error instanceof ProbeStopped
        ? `the probe ran out of time (${ms(bound)})`
        : `the probe failed: ${error instanceof Error ? error.message : String(error)}`;
    b.rows.rest(checks, why);
  } finally {
    // Requests of the probe still open (a blocking tasks/result of a task that never ended) are
    // given up now: the port tells the server with notifications/cancelled ([R27]).
    stop.abort();
    s.release();
    s.inputMode = 'answer';
  }
  b.rows.rest(checks, 'not reached');
  await settle(s, b.canCancel, runSignal);
}

/**
 * Cancels every task of the session that may still run (with `onlyLate`, only the tasks that came
 * late and no clean-up took yet), and says why when one cannot be stopped (a 2025 server without
 * `tasks.cancel`, [R5]; an extension server that acknowledges and goes on, [E6]). A task that
 * comes late while it runs (the reply to a call the doctor had given up on, late.ts) is taken
 * too, within the same bound.
 */
export async function settle(s: Session, canCancel: boolean, runSignal: AbortSignal, onlyLate = false): Promise<void> {
  const visited = new Set<string>();
  const next = (): { taskId: string; tool: string } | undefined =>
    s.ledger.running(s).find((task) => !visited.has(task.taskId) && (!onlyLate || s.late.has(task.taskId)));
  if (next() === undefined) return;
  // Within the run's deadline too: its reserve is kept for this clean-up and closing.
  const { deadline } = s.settings;
  const own = 3 * s.settings.requestTimeoutMs + 5_000;
  const stop = bounded(runSignal, deadline === undefined ? own : Math.min(own, deadline.forCleanUp()));
  s.signal = stop.signal;
  try {
    for (let task = next(); task !== undefined; task = next()) {
      const { taskId, tool } = task;
      visited.add(taskId);
      s.late.take(taskId);
      const read = await s.call('tasks/get', { taskId });
      if (!read.ok) {
        if (read.kind === 'server' && read.code === -32602) s.ledger.gone(taskId);
        else
          s.ledger.leftRunning(
            `a task of ${tool}: its last read failed (${s.describe(read)}), so the doctor could not tell whether it still runs`,
            taskId,
          );
        continue;
      }
      const seen = seenTask(read.result, s.wire);
      s.ledger.seen(taskId, seen.status);
      if (isTerminal(seen.status)) continue;
      if (!canCancel) {
        s.ledger.leftRunning(
          `a task of ${tool}: the server declared no tasks.cancel, so it runs until its ttl (${ttlWords(seen.ttl)})`,
          taskId,
        );
        continue;
      }
      await s.call('tasks/cancel', { taskId });
      if (!(await endsWithin(s, taskId, 2_000))) {
        s.ledger.leftRunning(
          `a task of ${tool}: the server did not stop it when cancelled (still running 2 s later)`,
          taskId,
        );
      }
    }
  } catch (error) {
    if (runSignal.aborted) throw error;
    for (const { taskId, tool } of s.ledger.running(s))
      if (!onlyLate || visited.has(taskId) || s.late.has(taskId)) {
        s.late.take(taskId);
        s.ledger.leftRunning(
          deadline !== undefined && deadline.forCleanUp() === 0
            ? `a task of ${tool}: the run's deadline (timeoutMs) left no time to cancel it`
            : `a task of ${tool}: cancelling it took too long`,
          taskId,
        );
      }
  } finally {
    stop.dispose();
  }
}

/** A signal that aborts with `runSignal`, after `ms`, or on `abort()`; `dispose` (and `abort`) let go of both. */
function bounded(runSignal: AbortSignal, ms: number): { signal: AbortSignal; dispose(): void; abort(): void } {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), timerDelay(ms));
  const onRun = (): void => stop.abort();
  runSignal.addEventListener('abort', onRun, { once: true });
  if (runSignal.aborted) stop.abort();
  const dispose = (): void => {
    clearTimeout(timer);
    runSignal.removeEventListener('abort', onRun);
  };
  return {
    signal: stop.signal,
    dispose,
    abort: () => {
      dispose();
      stop.abort();
    },
  };
}

/** Reads `taskId` until it is terminal (or gone), for at most `within` ms; true when it ended. */
async function endsWithin(s: Session, taskId: string, within: number): Promise<boolean> {
  const end = s.now() + within;
  for (;;) {
    const read = await s.call('tasks/get', { taskId });
    if (!read.ok && read.kind === 'server' && read.code === -32602) {
      s.ledger.gone(taskId);
      return true;
    }
    const status = read.ok ? seenTask(read.result, s.wire).status : undefined;
    s.ledger.seen(taskId, status);
    if (isTerminal(status)) return true;
    if (s.now() >= end) return false;
    await s.sleep(200);
  }
}
