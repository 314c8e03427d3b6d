/**
 * The one-shot commands: `tools`, `list`, `get <id>`, `result <id>` and `cancel <id>`. The last
 * three take a task id or `--ref FILE` (a reference saved by `call --save-ref`).
 */
import {
  TaskExpiredError,
  TaskNotFoundError,
  TaskTimeoutError,
  isTerminalStatus,
  type Task,
  type TaskHandle,
} from 'mcp-task-client';
import { EXT_WIRE } from '../args.js';
import { EXIT } from '../exit.js';
import { follow } from '../follow.js';
import { formatElapsed, shortId } from '../format.js';
import type { SavedReference } from '../ref-file.js';
import type { CommonOptions } from '../session-context.js';
import type { Target } from '../target.js';
import { runSession } from './session.js';
import { taskOf, type TaskOptions } from './watch.js';

function describeTask(task: Task): string {
  const age = Date.now() - Date.parse(task.createdAt);
  const parts = [task.taskId, task.status.padEnd(14)];
  if (Number.isFinite(age)) parts.push(`${formatElapsed(age)} old`.padEnd(10));
  if (task.statusMessage) parts.push(task.statusMessage);
  return parts.join('  ');
}

/** `tools`: every tool with its task support. */
export function toolsCommand(options: CommonOptions): Promise<number> {
  return runSession(
    options,
    async ({ target, reporter }) => {
      const tools = await target.tasks.tools();
      const width = Math.max(4, ...tools.map((tool) => tool.name.length));
      const supportWidth = Math.max(...tools.map((tool) => tool.taskSupport.length));
      for (const tool of tools) {
        reporter.item(
          'tool',
          { ...tool },
          `${tool.name.padEnd(width)}  ${tool.taskSupport.padEnd(supportWidth)}  ${tool.description ?? ''}`.trimEnd(),
        );
      }
      if (tools.length === 0) reporter.note('no tools');
      return EXIT.ok;
    },
    { oneShot: true },
  );
}

/** `list`: every task the server reports, all pages. */
export function listCommand(options: CommonOptions): Promise<number> {
  return runSession(
    options,
    async ({ target, reporter }) => {
      if (target.wire === EXT_WIRE) {
        // The extension has no tasks/list: a task is known only by its id (TaskClient.list() says TaskNotSupportedError).
        reporter.note(
          `the ${EXT_WIRE} wire has no tasks/list: tasks are known by their ids only (use get, watch or result with an id)`,
        );
        return EXIT.failed;
      }
      let count = 0;
      for await (const task of target.tasks.list()) {
        count += 1;
        reporter.item('snapshot', { task }, describeTask(task));
      }
      if (count === 0) reporter.note('no tasks');
      return EXIT.ok;
    },
    { oneShot: true },
  );
}

/** Resumes the task: by its saved reference when there is one (see `watch`), else by id. */
function resumeFor(
  target: Target,
  taskId: string,
  saved: SavedReference | undefined,
  options: TaskOptions,
  timeoutMs: number | undefined,
): TaskHandle {
  return saved !== undefined
    ? target.tasks.resume(saved.reference, { timeoutMs })
    : target.tasks.resume(taskId, { toolName: options.tool, timeoutMs });
}

/** `get <id>`: the task's current snapshot. */
export function getCommand(id: string | undefined, options: TaskOptions): Promise<number> {
  const { taskId, saved } = taskOf(id, options);
  return runSession(
    options,
    async ({ target, reporter, timeoutMs }) => {
      const handle = resumeFor(target, taskId, saved, options, timeoutMs);
      const updates = handle.updates();
      try {
        const first = await updates.next();
        if (first.done === true) throw new Error('The task ended without a snapshot');
        reporter.item('snapshot', { task: first.value }, describeTask(first.value));
        return EXIT.ok;
      } finally {
        await updates.return?.();
        handle.detach();
      }
    },
    { saved, oneShot: true },
  );
}

/**
 * `result <id>`: waits for the task's result and prints it, exiting like `call`: Ctrl-C (SIGINT,
 * SIGTERM, a closed stdout) cancels the remote task and reports what became of it, as in `call`.
 */
export function resultCommand(id: string | undefined, options: TaskOptions): Promise<number> {
  const { taskId, saved } = taskOf(id, options);
  return runSession(
    options,
    async (session) => {
      const handle = resumeFor(session.target, taskId, saved, options, session.timeoutMs);
      // Only the ending is printed; follow() does the waiting and the Ctrl-C handling.
      return follow(handle, { ...session, startedAt: Date.now(), showProgress: false, resumed: true });
    },
    { saved, resultLine: true },
  );
}

/** `cancel <id>`: cancels the task and prints its final snapshot (exit 0 also when it had already ended). */
export function cancelCommand(id: string | undefined, options: TaskOptions): Promise<number> {
  const { taskId, saved } = taskOf(id, options);
  return runSession(
    options,
    async ({ target, reporter }) => {
      const handle = resumeFor(target, taskId, saved, options, undefined);
      let final: Task | undefined;
      try {
        // Read the task first, like `get`: a task the server does not know (or that expired) is an
        // error (exit 1), never a made-up snapshot of a resumed id.
        const updates = handle.updates();
        try {
          const first = await updates.next();
          if (first.done === true) throw new Error('The task ended without a snapshot');
        } finally {
          await updates.return?.();
        }
        final = await handle.cancel().catch((error: unknown) => {
          // The server did not answer tasks/cancel in time: an error of the command (exit 1), not
          // a --timeout (124), which `cancel` does not take.
          if (!(error instanceof TaskTimeoutError)) throw error;
          throw new Error(
            `${error.message}: the server did not confirm the cancel of task ${shortId(taskId)}, which may still be running`,
            { cause: error },
          );
        });
        // The task may vanish between the read and the cancel: report what the server said.
        if (handle.settled) {
          const failure = await handle.result().then(
            () => undefined,
            (error: unknown) => error,
          );
          if (failure instanceof TaskNotFoundError || failure instanceof TaskExpiredError) throw failure;
        }
      } finally {
        handle.detach();
      }
      if (final === undefined) throw new Error(`No answer about task ${shortId(taskId)}`);
      reporter.item('snapshot', { task: final }, describeTask(final));
      if (final.status !== 'cancelled') {
        reporter.note(
          isTerminalStatus(final.status)
            ? `the task had already ended: ${final.status}`
            : `the task is still ${final.status}`,
        );
      }
      return EXIT.ok;
    },
    { saved, oneShot: true, unconfirmed: `the cancel of task ${shortId(taskId)} is not confirmed` },
  );
}
