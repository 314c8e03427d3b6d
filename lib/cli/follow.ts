/**
 * Following one task to its end: snapshots and live counts to the reporter, Ctrl-C handling
 * (the first cancels the remote task and reports what became of it; the second leaves at once
 * with 130), and the exit code of how it ended.
 */
import { isTerminalStatus, type TaskHandle } from '../index.js';
import { EXIT, describeError, outcomeOf } from './exit.js';
import { shortId } from './format.js';
import type { Interrupts } from './interrupt.js';
import type { Counts, Reporter } from './reporter.js';
import type { Target } from './target.js';

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
  /**
   * Report the task and its snapshots as they come (`call`, `watch`); `false` prints only the
   * ending (`result`). Ctrl-C is handled the same either way. @defaultValue true
   */
  readonly showProgress?: boolean;
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
  const snapshots = (async () => {
    if (!showProgress) return;
    try {
      for await (const task of handle) reporter.snapshot(task, counts());
    } catch {
      // The same error settles result(), reported below.
    }
  })();

  let leave: (code: number) => void = () => {};
  const left = new Promise<number>((resolve) => (leave = resolve));
  const leaveHint = (): void => {
    if (taskId === undefined) return;
    if (target.kind === 'url') {
      const command = ctx.watchCommand(handle);
      reporter.note(`task id ${taskId}${command === undefined ? '' : `; to follow it from another process: ${command}`}`);
    } else {
      reporter.note(`task ${shortId(taskId)} ends with the ${target.kind === 'stdio' ? 'stdio server' : 'embedded server'}, which stops with this process`);
    }
  };
  const cancel = async (): Promise<void> => {
    if (handle.kind !== 'task' || handle.settled) return;
    reporter.note(`${interrupts.label}: cancelling the task (press Ctrl-C again to leave at once)`);
    try {
      const final = await handle.cancel();
      const id = shortId(taskId ?? '');
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
      if (target.kind === 'url') leaveHint();
    } catch (error) {
      reporter.note(`cannot cancel the task: ${describeError(error)}`);
      leaveHint();
      leave(interrupts.exitCode);
    }
  };
  let cancelling: Promise<void> | undefined;
  let presses = 0;
  const restoreKeys = interrupts.onPress(() => {
    presses += 1;
    if (presses === 1) {
      cancelling = cancel();
      return;
    }
    reporter.note(`second ${interrupts.label === 'stdout closed' ? 'interruption' : interrupts.label}: leaving without waiting`);
    leaveHint();
    leave(interrupts.exitCode);
  });

  try {
    const ending = await Promise.race([
      handle.result().then(
        (result) => ({ kind: 'result' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      left.then((code) => ({ kind: 'left' as const, code })),
    ]);
    if (ending.kind === 'left') {
      reporter.end({ outcome: 'cancelled', exitCode: ending.code, wire, taskId, error: { name: 'Interrupted', message: 'left without waiting for the task to end' } });
      return ending.code;
    }
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
      error: { name: error.name ?? 'Error', message: describeError(ending.error) },
    });
    return exitCode;
  } finally {
    restoreKeys();
  }
}
