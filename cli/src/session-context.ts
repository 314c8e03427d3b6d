/**
 * What a command and `runSession` (commands/session.ts) agree on: the options every command
 * accepts, what a command adds to them, and the running context the command's body is given.
 */
import type { TaskHandle } from 'mcp-task-client';
import type { Interrupts } from './interrupt.js';
import type { ServerLoss } from './loss.js';
import type { SavedReference } from './ref-file.js';
import type { Reporter } from './reporter.js';
import type { RunDeadline } from './run-deadline.js';
import type { Target } from './target.js';

/** Options every command accepts (as commander parses them). */
export interface CommonOptions {
  readonly stdio?: string;
  readonly url?: string;
  readonly header?: string[];
  readonly session?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly wire?: string;
  readonly timeout?: string;
  readonly ttl?: string;
  readonly answer?: string[];
  readonly answers?: string;
  readonly saveRef?: string;
  readonly ref?: string;
  readonly connectTimeout?: string;
}

/** A command's running context. */
export interface Session {
  readonly target: Target;
  readonly reporter: Reporter;
  readonly interrupts: Interrupts;
  /**
   * The library's deadline for the call (or the resumed task), in ms: what is left of `--timeout`
   * once connected, less the reserve for the remote cancel and the shutdown (see run-deadline.ts).
   */
  readonly timeoutMs: number | undefined;
  /** `--timeout` as a deadline for the whole run (the deadline counts from the start of the run). */
  readonly deadline: RunDeadline | undefined;
  /** `--timeout` as the user typed it (to name it in messages). */
  readonly timeout: string | undefined;
  /** `--ttl` in ms. */
  readonly ttlMs: number | undefined;
  /** Saves a reference file for `handle` (`call --save-ref`, or a temporary one). @returns the file. */
  saveReference(handle: TaskHandle, file?: string): string | undefined;
  /** The `watch` command line that picks `handle` up from another process (`--url` targets). */
  watchCommand(handle: TaskHandle): string | undefined;
  /** The task ended (a terminal status): reference files the CLI wrote on its own for it are removed. */
  taskEnded(handle: TaskHandle): void;
  /** How many questions of task `taskId` reached this process. */
  inputSeen(taskId: string): number;
  /** The server went away: {@link ServerLoss.onLost} takes the news over from the command's default (exit 1). */
  readonly loss: ServerLoss;
  /**
   * Leave without closing the connection in order (nothing is awaited, a stdio server is killed):
   * after a second Ctrl-C, an unanswered cancel, or a lost server.
   */
  leaveNow(): void;
  /**
   * After a call given up before the server answered it (Ctrl-C, `--timeout`): closes the
   * connection in order, which waits (the library's `closeTimeoutMs`) for the answer so that a task
   * the server creates anyway gets its `tasks/cancel`. Resolves `answered` once that is done,
   * `late` when the answer has not come within {@link closeWaitMs} (a task the server creates
   * now is not cancelled), or `left` on a Ctrl-C meanwhile; in both last cases the CLI then leaves
   * without waiting more.
   */
  closeAfterAbandon(): Promise<'answered' | 'late' | 'left'>;
  /** How long {@link closeAfterAbandon} waits from now: {@link CLOSE_WAIT_MS}, or what is left of `--timeout` when less. */
  closeWaitMs(): number;
}

/** What a command adds to {@link runSession}. */
export interface SessionExtra {
  /** The reference of `--ref FILE`: where to connect (its URL, HTTP session) unless `--url`/`--stdio` say otherwise. */
  readonly saved?: SavedReference;
  /** When the run started (for elapsed times). */
  readonly startedAt?: number;
  /**
   * The command ends with a `result` line (`call`, `watch`, `result`): a failure to connect
   * prints one too, so that its output always ends with one.
   */
  readonly resultLine?: boolean;
  /**
   * The command asks the server once and ends (`tools`, `list`, `get`, `cancel`): its work is
   * bounded by the connect timeout, so that a server that stops answering cannot keep it forever.
   */
  readonly oneShot?: boolean;
  /**
   * What is left unconfirmed when an interruption ends the command before its work is done, said
   * in the note (`cancel`: that the task's cancel is not confirmed).
   */
  readonly unconfirmed?: string;
}
