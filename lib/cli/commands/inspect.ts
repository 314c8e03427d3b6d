/**
 * The one-shot commands: `tools`, `list`, `get <id>`, `result <id>` and `cancel <id>`. The last
 * three take a task id or `--ref FILE` (a reference saved by `call --save-ref`).
 */
import { isTerminalStatus, type Task, type TaskHandle } from '../../index.js';
import { EXT_WIRE } from '../args.js';
import { EXIT, describeError, outcomeOf } from '../exit.js';
import { formatElapsed, shortId } from '../format.js';
import type { SavedReference } from '../ref-file.js';
import type { Target } from '../target.js';
import { runSession, type CommonOptions } from './session.js';
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
  return runSession(options, async ({ target, reporter }) => {
    const tools = await target.tasks.tools();
    const width = Math.max(4, ...tools.map((tool) => tool.name.length));
    const supportWidth = Math.max(...tools.map((tool) => tool.taskSupport.length));
    for (const tool of tools) {
      reporter.item('tool', { ...tool }, `${tool.name.padEnd(width)}  ${tool.taskSupport.padEnd(supportWidth)}  ${tool.description ?? ''}`.trimEnd());
    }
    if (tools.length === 0) reporter.note('no tools');
    return EXIT.ok;
  });
}

/** `list`: every task the server reports, all pages. */
export function listCommand(options: CommonOptions): Promise<number> {
  return runSession(options, async ({ target, reporter }) => {
    if (target.wire === EXT_WIRE) {
      // The extension has no tasks/list: a task is known only by its id (TaskClient.list() says TaskNotSupportedError).
      reporter.note(`the ${EXT_WIRE} wire has no tasks/list: tasks are known by their ids only (use get, watch or result with an id)`);
      return EXIT.failed;
    }
    let count = 0;
    for await (const task of target.tasks.list()) {
      count += 1;
      reporter.item('snapshot', { task }, describeTask(task));
    }
    if (count === 0) reporter.note('no tasks');
    return EXIT.ok;
  });
}

/** Resumes the task: by its saved reference when there is one (see `watch`), else by id. */
function resumeFor(target: Target, taskId: string, saved: SavedReference | undefined, options: TaskOptions, timeoutMs: number | undefined): TaskHandle {
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
    { saved },
  );
}

/** `result <id>`: waits for the task's result and prints it, exiting like `call`. */
export function resultCommand(id: string | undefined, options: TaskOptions): Promise<number> {
  const { taskId, saved } = taskOf(id, options);
  return runSession(
    options,
    async ({ target, reporter, timeoutMs }) => {
      const handle = resumeFor(target, taskId, saved, options, timeoutMs);
      try {
        const result = await handle.result();
        reporter.end({ outcome: 'completed', exitCode: EXIT.ok, wire: handle.wire, taskId, result });
        return EXIT.ok;
      } catch (error) {
        const { outcome, exitCode } = outcomeOf(error);
        const failure = error as Error & { result?: unknown };
        reporter.end({ outcome, exitCode, wire: handle.wire, taskId, result: failure.result as never, error: { name: failure.name, message: describeError(error) } });
        return exitCode;
      }
    },
    { saved },
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
        final = await handle.cancel();
      } finally {
        handle.detach();
      }
      if (final === undefined) throw new Error(`No answer about task ${shortId(taskId)}`);
      reporter.item('snapshot', { task: final }, describeTask(final));
      if (final.status !== 'cancelled') {
        reporter.note(isTerminalStatus(final.status) ? `the task had already ended: ${final.status}` : `the task is still ${final.status}`);
      }
      return EXIT.ok;
    },
    { saved },
  );
}
