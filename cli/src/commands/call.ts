/** `mcp-task call <tool> [key=value ...]`: calls a tool as a task and follows it to the end. */
import { TaskAbortError, TaskTimeoutError, type TaskHandle } from 'mcp-task-client';
import { EXT_WIRE, parseToolArgs } from '../args.js';
import { describeError, outcomeOf } from '../exit.js';
import { follow } from '../follow.js';
import { checkWritable } from '../ref-file.js';
import { CLOSE_WAIT_MS } from '../target.js';
import { runSession, type CommonOptions } from './session.js';

/** Options of `call`. */
export interface CallOptions extends CommonOptions {
  readonly args?: string[];
}

/** Runs `call`; returns the exit code. */
export async function callCommand(tool: string, pairs: readonly string[], options: CallOptions): Promise<number> {
  const args = parseToolArgs(pairs, options.args);
  // Refused before the call, so that an unwritable path never strands a task nobody knows of.
  if (options.saveRef !== undefined) checkWritable(options.saveRef, '--save-ref');
  const startedAt = Date.now();
  return runSession(
    options,
    async (session) => {
      const { target, reporter, interrupts } = session;
      if (session.ttlMs !== undefined && target.wire === EXT_WIRE) {
        reporter.note(`--ttl is ignored on the ${EXT_WIRE} wire: the server decides how long it keeps a task`);
      }
      // Ctrl-C before the server answered: stop waiting; a task created anyway is cancelled by the
      // library once its id arrives (closing the connection waits for that, bounded by
      // CLOSE_WAIT_MS). A second Ctrl-C leaves at once.
      const controller = new AbortController();
      const restoreKeys = interrupts.onPress((count) => {
        if (count === 1)
          reporter.note(
            `${interrupts.label}: abandoning the call (a task created anyway will be cancelled; press Ctrl-C again to leave at once)`,
          );
        controller.abort(new Error('Interrupted'));
      });
      let handle: TaskHandle;
      try {
        handle = await target.tasks.callToolAsTask(tool, args, {
          timeoutMs: session.timeoutMs,
          ttlMs: session.ttlMs,
          signal: controller.signal,
          onProgress: (progress, context) => reporter.progress(context.taskId, progress),
        });
      } catch (error) {
        if (isPending(error)) {
          reporter.note(
            `waiting up to ${CLOSE_WAIT_MS / 1000} s for the server to answer the call, so that a task it creates anyway is cancelled (Ctrl-C to leave at once)`,
          );
        }
        restoreKeys();
        const { outcome, exitCode: code } = outcomeOf(error);
        const exitCode = outcome === 'cancelled' && interrupts.presses > 0 ? interrupts.exitCode : code;
        reporter.end({
          outcome,
          exitCode,
          wire: target.wire,
          error: { name: (error as Error).name ?? 'Error', message: describeError(error, options.timeout) },
        });
        return exitCode;
      }
      restoreKeys();
      if (options.saveRef !== undefined && handle.kind === 'task') {
        // Still unwritable after the check (the disk filled, say): the task exists, so say so and
        // follow it anyway; its id is in the note and in the `task` line.
        try {
          const file = session.saveReference(handle, options.saveRef);
          if (file !== undefined) reporter.note(`reference saved to ${file}`);
        } catch (error) {
          reporter.note(
            `cannot save the reference to ${options.saveRef}: ${describeError(error)}; following task ${handle.taskId ?? ''} anyway`,
          );
        }
      }
      if (controller.signal.aborted) {
        // Interrupted just as the task was created: cancel it like a Ctrl-C while following.
        await handle.cancel().catch(() => undefined);
      }
      return follow(handle, {
        target,
        reporter,
        interrupts,
        startedAt,
        watchCommand: (h) => session.watchCommand(h),
        taskEnded: (h) => session.taskEnded(h),
        loss: session.loss,
        leaveNow: () => session.leaveNow(),
        timeout: options.timeout,
      });
    },
    { startedAt, resultLine: true },
  );
}

/** True when `error` stopped a call whose `tools/call` is still unanswered, and a task it creates will be cancelled. */
function isPending(error: unknown): boolean {
  return (error instanceof TaskAbortError || error instanceof TaskTimeoutError) && error.remoteCancel === 'pending';
}
