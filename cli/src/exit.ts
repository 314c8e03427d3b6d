/** Exit codes, and how an error maps to one. */
import {
  TaskAbortError,
  TaskCancelledError,
  TaskFailedError,
  TaskOptionError,
  TaskTimeoutError,
} from 'mcp-task-client';
import { UsageError } from './args.js';

/** The CLI's exit codes. */
export const EXIT = {
  /** The task completed (or the command succeeded). */
  ok: 0,
  /** The task failed, or the command could not do its job. */
  failed: 1,
  /** The CLI was invoked wrongly. */
  usage: 2,
  /** `--timeout` passed. */
  timeout: 124,
  /** The task was cancelled (Ctrl-C or SIGINT, or by someone else). */
  cancelled: 130,
  /** Stdout was closed by its reader (EPIPE, e.g. `| head -1`); the task was cancelled first. */
  pipe: 141,
  /** SIGTERM; the task was cancelled first. */
  terminated: 143,
} as const;

/**
 * How a wait ended, for printing and JSON lines. `interrupted`: the CLI left without knowing how
 * the task ends (a second Ctrl-C, or a cancel the server did not answer in time).
 */
export type Outcome = 'completed' | 'failed' | 'cancelled' | 'timeout' | 'error' | 'interrupted';

/** The outcome and exit code that `error` stands for. */
export function outcomeOf(error: unknown): { outcome: Outcome; exitCode: number } {
  if (error instanceof TaskTimeoutError) return { outcome: 'timeout', exitCode: EXIT.timeout };
  if (error instanceof TaskCancelledError || error instanceof TaskAbortError)
    return { outcome: 'cancelled', exitCode: EXIT.cancelled };
  if (error instanceof TaskFailedError) return { outcome: 'failed', exitCode: EXIT.failed };
  if (error instanceof UsageError || error instanceof TaskOptionError)
    return { outcome: 'error', exitCode: EXIT.usage };
  return { outcome: 'error', exitCode: EXIT.failed };
}

/**
 * A one-line description of `error` for stderr. `timeout` is `--timeout` as the user typed it: a
 * task's deadline is named by it (the library counts the part left once connected, in ms).
 */
export function describeError(error: unknown, timeout?: string): string {
  if (error instanceof TaskTimeoutError && timeout !== undefined) {
    const given = `--timeout ${timeout} passed`;
    const said = error.message.replace(/timed out after \d+ ms/, `timed out: ${given}`);
    return said === error.message ? `${given}: ${error.message}` : said;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
