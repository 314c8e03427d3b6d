/**
 * Following one task to its end: snapshots and live counts to the reporter, Ctrl-C handling
 * (the first cancels the remote task, waiting at most the cancel grace for the server's answer,
 * and reports what became of it; the second leaves at once), a server that goes away (exit 1),
 * and the exit code of how it ended.
 */
import { isTerminalStatus, type TaskHandle } from 'mcp-task-client';
import { EXIT, describeError, outcomeOf, type Outcome } from './exit.js';
import { shortId } from './format.js';
import type { Interrupts } from './interrupt.js';
import type { ServerLoss } from './loss.js';
import type { Counts, Reporter } from './reporter.js';
import { inSeconds, type RunDeadline } from './run-deadline.js';
import { CANCEL_GRACE_MS, type Target } from './target.js';
import { unansweredInput } from './unanswered.js';

/** What following needs. */
export interface FollowContext {
  readonly target: Target;
  readonly reporter: Reporter;
  readonly interrupts: Interrupts;
  /** Local time the wait started (elapsed is counted from here). */
  readonly startedAt: number;
  /**
   * Tells the user how to pick the task up from another process (`--url` targets): saves the
   * reference if needed and returns the `watch` command line.
   */
  readonly watchCommand: (handle: TaskHandle) => string | undefined;
  /** The task ended: reference files written on the CLI's own for it are removed. */
  readonly taskEnded?: ((handle: TaskHandle) => void) | undefined;
  /** Tells when the server goes away. */
  readonly loss?: ServerLoss | undefined;
  /** Leave without closing the connection in order. */
  readonly leaveNow?: (() => void) | undefined;
  /** Counts the task's questions that reached this process (2025-11-25 requests, extension `inputRequests`). */
  readonly inputSeen?: ((taskId: string) => number) | undefined;
  /**
   * The task was resumed (`watch`, `result`), not created by this process: a question it waits for
   * may have gone to the process that created it.
   */
  readonly resumed?: boolean | undefined;
  /**
   * Report the task and its snapshots as they come (`call`, `watch`); `false` prints only the
   * ending (`result`). Ctrl-C is handled the same either way. @defaultValue true
   */
  readonly showProgress?: boolean;
  /** `--timeout` as the user typed it, to name a deadline that passed. */
  readonly timeout?: string | undefined;
  /**
   * `--timeout` as the run's deadline: a cancel's answer is waited for until it at most, and
   * following ends by it even when the library's stop has not settled yet.
   */
  readonly deadline?: RunDeadline | undefined;
}

/** How following ended before the task did. */
interface Leaving {
  readonly outcome: Outcome;
  readonly exitCode: number;
  readonly name: string;
  readonly message: string;
}

/** Follows `handle` until it settles (or the user leaves); returns the exit code. */
export async function follow(handle: TaskHandle, ctx: FollowContext): Promise<number> {
  const { target, reporter, interrupts } = ctx;
  const taskId = handle.taskId;
  // The library's live numbers for this task, read on every status-line refresh and snapshot.
  const counts = (): Counts => {
    const metrics = handle.metrics;
    return {
      polls: metrics?.polls ?? 0,
      notifications: metrics?.notifications ?? 0,
      retries: metrics?.retries ?? 0,
      elapsedMs: Date.now() - ctx.startedAt,
    };
  };
  const wire = handle.wire;
  const showProgress = ctx.showProgress !== false;
  if (showProgress) reporter.begin({ taskId, toolName: handle.toolName, kind: handle.kind, wire }, handle.task, counts);
  const stopWatchingInput =
    ctx.resumed === true && ctx.inputSeen !== undefined && taskId !== undefined
      ? unansweredInput(handle, {
          inputSeen: () => ctx.inputSeen?.(taskId) ?? 0,
          note: (text) => reporter.note(text),
          cancelHint: cancelHint(ctx),
        })
      : () => {};
  const snapshots = (async () => {
    if (!showProgress) return;
    try {
      for await (const task of handle) reporter.snapshot(task, counts());
    } catch {
      // The same error settles result(), reported below.
    }
  })();

  let leave: (leaving: Leaving) => void = () => {};
  const left = new Promise<Leaving>((resolve) => (leave = resolve));
  const id = shortId(taskId ?? '');
  /** Where the task stands once this process leaves without knowing its end, and how to follow it. */
  const afterLeaving = (): string => {
    if (target.kind !== 'url') {
      return `the ${target.kind === 'stdio' ? 'stdio server' : 'embedded server'} stops with this process, and task ${id} with it`;
    }
    const command = ctx.watchCommand(handle);
    return `task ${id} may still be running on the server; ${command === undefined ? `its id is ${taskId ?? '?'}` : `to follow it: ${command}`}`;
  };
  const leaveInterrupted = (why: string): void => {
    ctx.leaveNow?.();
    leave({
      outcome: 'interrupted',
      exitCode: interrupts.exitCode,
      name: 'Interrupted',
      message: `${why}; ${afterLeaving()}`,
    });
  };

  /** Cancels the task, waiting at most the cancel grace (and never past `--timeout`) for the server's answer. */
  const cancel = async (): Promise<void> => {
    if (handle.kind !== 'task' || handle.settled) return;
    reporter.note(`${interrupts.label}: cancelling the task (press Ctrl-C again to leave at once)`);
    const graceMs = ctx.deadline?.bound(CANCEL_GRACE_MS) ?? CANCEL_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ kind: 'late' }>(
      (resolve) => (timer = setTimeout(() => resolve({ kind: 'late' }), graceMs)),
    );
    const answer = await Promise.race([
      handle.cancel().then(
        (final) => ({ kind: 'answer' as const, final }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      late,
    ]);
    clearTimeout(timer);
    if (answer.kind === 'late') {
      // The library goes on asking in the background; the CLI does not wait for a server that may
      // never answer (a service manager would kill it first).
      leaveInterrupted(`the server did not answer the cancel within ${inSeconds(graceMs)}`);
      return;
    }
    if (answer.kind === 'error') {
      reporter.note(`cannot cancel the task: ${describeError(answer.error)}`);
      leaveInterrupted('the cancel failed');
      return;
    }
    const final = answer.final;
    reporter.note(
      final === undefined
        ? `task ${id}: no answer about the cancel`
        : final.status === 'cancelled'
          ? `task ${id} was cancelled on the server`
          : isTerminalStatus(final.status)
            ? `task ${id} had already ended: ${final.status}`
            : // [E6]: acknowledged, but cancelling is cooperative: follow the task to its real end.
              `the server acknowledged the cancel; task ${id} is still ${final.status} (cancelling is up to the server)`,
    );
  };
  let cancelling: Promise<void> | undefined;
  let presses = 0;
  const restoreKeys = interrupts.onPress(() => {
    presses += 1;
    if (presses === 1) {
      cancelling = cancel();
      return;
    }
    reporter.note(
      `second ${interrupts.label === 'stdout closed' ? 'interruption' : interrupts.label}: leaving without waiting`,
    );
    leaveInterrupted('left without waiting for the task to end');
  });
  const restoreLoss =
    ctx.loss?.onLost((why, sessionGone) => {
      ctx.leaveNow?.();
      const next =
        target.kind !== 'url'
          ? `task ${id} ended with it`
          : sessionGone
            ? `task ${id} went with the session`
            : afterLeaving();
      if (presses > 0) {
        // Lost while cancelling on the user's interruption: a SIGINT sent to the whole process
        // group (a CI runner, a terminal whose stdin is not the CLI's) stops a stdio server too.
        leave({
          outcome: 'interrupted',
          exitCode: interrupts.exitCode,
          name: 'Interrupted',
          message: `${why}; ${next}`,
        });
        return;
      }
      leave({ outcome: 'error', exitCode: EXIT.failed, name: 'ServerLostError', message: `${why}; ${next}` });
    }) ?? (() => {});
  // `--timeout` ends following at the latest: the library's stop settles before it (the reserve
  // covers its cancel grace), so this only ends a run whose stop or ending overran it.
  const expiry = ctx.deadline?.expiry();
  void expiry?.passed.then(() => {
    ctx.leaveNow?.();
    leave({
      outcome: 'timeout',
      exitCode: EXIT.timeout,
      name: 'TaskTimeoutError',
      message: `--timeout ${ctx.timeout ?? ''} passed before the task's end (or its cancel) was known; ${afterLeaving()}`,
    });
  });

  try {
    const ending = await Promise.race([
      handle.result().then(
        (result) => ({ kind: 'result' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      left.then((leaving) => ({ kind: 'left' as const, leaving })),
    ]);
    if (ending.kind === 'left') {
      const { leaving } = ending;
      reporter.end({
        outcome: leaving.outcome,
        exitCode: leaving.exitCode,
        wire,
        taskId,
        error: { name: leaving.name, message: leaving.message },
      });
      return leaving.exitCode;
    }
    if (handle.task !== undefined && isTerminalStatus(handle.task.status)) ctx.taskEnded?.(handle);
    await Promise.race([snapshots, left]);
    // Let a cancel in flight report what became of the task before the ending is printed.
    if (cancelling !== undefined) await Promise.race([cancelling, left]);
    if (ending.kind === 'result') {
      reporter.end({ outcome: 'completed', exitCode: EXIT.ok, wire, taskId, result: ending.result });
      return EXIT.ok;
    }
    const { outcome, exitCode: code } = outcomeOf(ending.error);
    // Cancelled because the user interrupted: the exit code says how (130, 143 for SIGTERM, 141 for a closed stdout).
    const exitCode = outcome === 'cancelled' && presses > 0 ? interrupts.exitCode : code;
    const error = ending.error as Error & { result?: unknown };
    reporter.end({
      outcome,
      exitCode,
      wire,
      taskId,
      result: error.result as never,
      error: { name: error.name ?? 'Error', message: describeError(ending.error, ctx.timeout) },
    });
    return exitCode;
  } finally {
    expiry?.clear();
    restoreKeys();
    restoreLoss();
    stopWatchingInput();
  }
}

/** How to give up a task whose question cannot be answered from here. */
function cancelHint(ctx: FollowContext): string {
  return ctx.target.kind === 'url'
    ? 'cancel it (Ctrl-C here, or mcp-task cancel with the same --ref or id)'
    : 'cancel it (Ctrl-C)';
}
