/**
 * The AI SDK's timeouts. The AI SDK bounds a tool call with timers of its own (`timeout.toolMs`
 * or `timeout.tools.<name>Ms` for one call; `stepMs`, `chunkMs` and `totalMs` for the step or the
 * run) by aborting the tool's `abortSignal` with a `TimeoutError` DOMException, as
 * `AbortSignal.timeout` does. Passed on as the call's signal, the TaskClient would take it for an
 * abort: the model would read `AbortError: Call to "x" was aborted`, and the remote cancel would
 * follow `cancelOnAbort`. A task tool treats it as a deadline instead: the model reads a
 * `TaskTimeoutError`, and a tool that sets `cancelOnTimeout` has its task cancelled, or left
 * running, as that says.
 */
import { TaskAbortError, TaskTimeoutError, type Task, type TaskError } from '../index.js';

/** Whether an abort signal's `reason` is a timeout: a `TimeoutError` (the AI SDK's timers, `AbortSignal.timeout`). */
export function isTimeout(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}

/**
 * The signal of one call, made from the AI SDK's: an abort of it is passed on, and so is a
 * timeout, unless `takeUp` takes the timeout up (the tool then gives its task up itself). It is
 * also aborted when the reader leaves early ({@link CallSignal.leave}).
 */
export class CallSignal {
  private readonly controller = new AbortController();
  private readonly startedAt = Date.now();
  private timedOutAt: number | undefined = undefined;
  private readonly off: () => void;

  /** `takeUp`: called at a timeout of the AI SDK; `true` when the tool gives its task up itself. */
  constructor(
    private readonly ai: AbortSignal | undefined,
    takeUp: () => boolean,
  ) {
    const aborted = (): void => {
      const reason: unknown = ai?.reason;
      if (isTimeout(reason)) {
        this.timedOutAt ??= Date.now();
        if (takeUp()) return;
      }
      this.controller.abort(reason);
    };
    if (ai === undefined) this.off = () => undefined;
    else if (ai.aborted) {
      this.off = () => undefined;
      aborted();
    } else {
      ai.addEventListener('abort', aborted, { once: true });
      this.off = () => ai.removeEventListener('abort', aborted);
    }
  }

  /** The call's signal, for `callToolAsTask`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Milliseconds from the call to the AI SDK's timeout, once it fired. */
  get timedOutAfterMs(): number | undefined {
    return this.timedOutAt === undefined ? undefined : this.timedOutAt - this.startedAt;
  }

  /** Aborts the call: the reader left before the end. */
  leave(reason: Error): void {
    this.controller.abort(reason);
  }

  /** Stops listening to the AI SDK's signal. */
  dispose(): void {
    this.off();
  }
}

/** The opening of a timeout's message: the TaskClient's own reads `Task for tool "x" timed out after N ms`. */
function timedOut(toolName: string, elapsedMs: number): string {
  return `Task for tool "${toolName}" timed out after ${elapsedMs} ms (a timeout of the AI SDK)`;
}

/**
 * The error the model reads for a call the TaskClient stopped because the AI SDK's timeout
 * aborted its signal (`error`, a `TaskAbortError` whose reason is a timeout; `elapsedMs`: when the
 * timeout fired): a `TaskTimeoutError` with its task and remote cancel, whose message says what
 * became of the remote task as the abort's did, and whose `cause` is the abort. Any other error is
 * returned as it is.
 */
export function asTimeout(error: unknown, toolName: string, elapsedMs: number | undefined): unknown {
  if (!(error instanceof TaskAbortError) || !isTimeout(error.reason) || elapsedMs === undefined) return error;
  const aborted = `Call to "${toolName}" was aborted`;
  const rest = error.message.startsWith(aborted) ? error.message.slice(aborted.length) : `: ${error.message}`;
  return new TaskTimeoutError(`${timedOut(toolName, elapsedMs)}${rest}`, {
    task: error.task,
    toolName,
    remoteCancel: error.remoteCancel ?? 'no-task',
    timeoutMs: elapsedMs,
    elapsedMs,
    cause: error,
  });
}

/** What became of a task the tool gave up for a timeout itself, for the model. */
const GIVEN_UP: Readonly<Record<'cancelled' | 'disabled' | 'unknown', string>> = {
  cancelled: 'the remote task was cancelled',
  disabled: 'the remote task was left running',
  unknown: 'the tool gave the remote task up, but did not see it cancelled: it may still be running',
};

/**
 * The error of a call whose task the tool gave up itself at the AI SDK's timeout (per the tool's
 * `cancelOnTimeout`): cancelled (`cancel`) or left running. `task`: its last snapshot, once given
 * up; `cause`: the error its handle settled with.
 */
export function givenUpAtTimeout(
  toolName: string,
  elapsedMs: number,
  cancel: boolean,
  task: Task | undefined,
  cause: unknown,
): TaskError {
  const remoteCancel: keyof typeof GIVEN_UP = !cancel
    ? 'disabled'
    : task?.status === 'cancelled'
      ? 'cancelled'
      : 'unknown';
  return new TaskTimeoutError(`${timedOut(toolName, elapsedMs)}; ${GIVEN_UP[remoteCancel]}`, {
    task,
    toolName,
    remoteCancel,
    timeoutMs: elapsedMs,
    elapsedMs,
    cause,
  });
}
