/**
 * A resumed task that waits for input whose question never reaches this process. On the
 * 2025-11-25 wire a question is a request the server sends on one connection, delivered while
 * the client waits on `tasks/result` ([R29]); a server that handed it to the connection of the
 * process that started the task (which then died) may never send it again: the SDK's server does
 * not. Nothing can answer it from here, and without this note the screen would show
 * `input_required` forever. On the extension wire the question travels in the task itself, so any
 * process can answer it.
 */
import type { TaskHandle } from 'mcp-task-client';
import { shortId } from './format.js';

/** How long a task may wait in `input_required`, with no question reaching this process, before the note. */
export const UNANSWERED_NOTE_MS = 5_000;

/** What the watch needs. */
export interface UnansweredDeps {
  /** How many questions of the task reached this process so far. */
  inputSeen(): number;
  note(text: string): void;
  /** How to give the task up, e.g. "cancel it (Ctrl-C)". */
  readonly cancelHint: string;
}

/**
 * Watches `handle` (2025-11-25 wire only) and says once, on stderr, when it has waited in
 * `input_required` for {@link UNANSWERED_NOTE_MS} (or two poll intervals, if longer) without a
 * question reaching this process. @returns a function that stops watching.
 */
export function unansweredInput(handle: TaskHandle, deps: UnansweredDeps): () => void {
  if (handle.wire !== '2025-11-25' || handle.kind !== 'task') return () => {};
  let since: number | undefined;
  let seenAtStart = 0;
  let said = false;
  const timer = setInterval(() => {
    const task = handle.task;
    if (handle.settled || task === undefined || task.status !== 'input_required') {
      since = undefined;
      return;
    }
    const seen = deps.inputSeen();
    if (since === undefined || seen !== seenAtStart) {
      since = Date.now();
      seenAtStart = seen;
      return;
    }
    const wait = Math.max(UNANSWERED_NOTE_MS, 2 * (task.pollInterval ?? 0));
    if (said || Date.now() - since < wait) return;
    said = true;
    deps.note(
      `task ${shortId(task.taskId)} waits for input, but its question has not reached this process: on the 2025-11-25 wire the server sends a question to one connection (here, the process that started the task, or an earlier one), and this server does not send it again. It cannot be answered from another process: ${deps.cancelHint}, or leave it until the server gives up waiting`,
    );
  }, 500);
  // The watch alone never keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
