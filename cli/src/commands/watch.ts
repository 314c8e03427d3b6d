/**
 * `mcp-task watch <id>` / `mcp-task watch --ref FILE`: resumes a task and follows it to the end.
 * With a reference saved over `--url`, it joins the HTTP session that holds the task.
 */
import { UsageError } from '../args.js';
import { follow } from '../follow.js';
import { readReference, type SavedReference } from '../ref-file.js';
import type { CommonOptions } from '../session-context.js';
import { runSession } from './session.js';

/** Options of `watch` (and of the other commands that take a task). */
export interface TaskOptions extends CommonOptions {
  readonly tool?: string;
}

/** The task id and saved reference a command names, from `<id>` or `--ref FILE`. */
export function taskOf(
  id: string | undefined,
  options: TaskOptions,
): { taskId: string; saved: SavedReference | undefined } {
  const saved = options.ref === undefined ? undefined : readReference(options.ref);
  const taskId = id ?? saved?.reference.taskId;
  if (taskId === undefined || taskId === '') throw new UsageError('Give a task id or --ref FILE');
  if (saved !== undefined && id !== undefined && id !== saved.reference.taskId) {
    throw new UsageError(`The task id ${id} is not the one in ${options.ref}`);
  }
  if (saved !== undefined && saved.url === undefined && options.url === undefined && options.stdio === undefined) {
    throw new UsageError(
      `${options.ref} has no URL: its task lived in a stdio or embedded server, which ended with the process that started it (give --url or --stdio to look elsewhere)`,
    );
  }
  return { taskId, saved };
}

/** Runs `watch`; returns the exit code. */
export async function watchCommand(id: string | undefined, options: TaskOptions): Promise<number> {
  const { taskId, saved } = taskOf(id, options);
  const created = saved === undefined ? NaN : Date.parse(saved.reference.createdAt);
  const startedAt = Number.isFinite(created) && created <= Date.now() ? created : Date.now();
  return runSession(
    options,
    async (session) => {
      const { target } = session;
      // A reference also tells a joined session (which never saw the server's handshake) what the
      // server supports; with a bare id the library takes it to support cancel and list.
      const handle =
        saved !== undefined
          ? target.tasks.resume(saved.reference, { timeoutMs: session.timeoutMs })
          : target.tasks.resume(taskId, { timeoutMs: session.timeoutMs, toolName: options.tool });
      return follow(handle, { ...session, startedAt, resumed: true });
    },
    { saved, startedAt, resultLine: true },
  );
}
