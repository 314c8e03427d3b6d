/** `mcp-task call <tool> [key=value ...]`: calls a tool as a task and follows it to the end. */
import { TaskAbortError, TaskTimeoutError, type TaskHandle } from 'mcp-task-client';
import { EXT_WIRE, parseToolArgs } from '../args.js';
import { describeError, outcomeOf, type Outcome } from '../exit.js';
import { follow } from '../follow.js';
import { checkWritable } from '../ref-file.js';
import { inSeconds } from '../run-deadline.js';
import type { CommonOptions } from '../session-context.js';
import { CLOSE_WAIT_MS } from '../target.js';
import { runSession } from './session.js';

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
        restoreKeys();
        const { outcome, exitCode: code } = outcomeOf(error);
        const exitCode = outcome === 'cancelled' && interrupts.presses > 0 ? interrupts.exitCode : code;
        let ending: { outcome: Outcome; name: string; message: string } = {
          outcome,
          name: (error as Error).name ?? 'Error',
          message: describeError(error, options.timeout),
        };
        if (isPending(error)) {
          // CLOSE_WAIT_MS, or what is left of --timeout when less.
          const waitMs = session.closeWaitMs();
          reporter.note(
            `waiting up to ${inSeconds(waitMs)} for the server to answer the call, so that a task it creates anyway is cancelled (Ctrl-C to leave at once)`,
          );
          // The result line says what became of a task the server creates: the library's message
          // promises its cancel, which holds only if the answer comes within the wait.
          const wait = await session.closeAfterAbandon();
          if (wait !== 'answered') {
            if (wait === 'left') reporter.note(`${interrupts.label}: leaving without waiting for the server's answer`);
            const stop =
              error instanceof TaskTimeoutError
                ? `--timeout ${options.timeout ?? ''} passed before the server answered the call to "${tool}"`
                : `${interrupts.label} before the server answered the call to "${tool}"`;
            const waited =
              wait === 'late'
                ? `; stopped waiting for its answer after ${inSeconds(waitMs)}${waitMs < CLOSE_WAIT_MS ? ' (the end of --timeout)' : ''}`
                : '; left without waiting for its answer';
            const fate =
              target.kind === 'url'
                ? 'a task it creates now is not cancelled: it runs on the server until it expires'
                : `the ${target.kind === 'stdio' ? 'stdio' : 'embedded'} server stops with this process, and a task it creates with it`;
            ending = {
              outcome: outcome === 'cancelled' ? 'interrupted' : outcome,
              name: outcome === 'cancelled' ? 'Interrupted' : ending.name,
              message: `${stop}${waited}; ${fate}`,
            };
          }
        }
        reporter.end({
          outcome: ending.outcome,
          exitCode,
          wire: target.wire,
          error: { name: ending.name, message: ending.message },
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
        deadline: session.deadline,
      });
    },
    { startedAt, resultLine: true },
  );
}

/** True when `error` stopped a call whose `tools/call` is still unanswered, and a task it creates will be cancelled. */
function isPending(error: unknown): boolean {
  return (error instanceof TaskAbortError || error instanceof TaskTimeoutError) && error.remoteCancel === 'pending';
}
