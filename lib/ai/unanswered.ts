/**
 * Input a task asks for that nobody here answers. A task tool often runs where no one can be
 * asked (an agent loop without a UI), and a task whose question goes unanswered would wait until
 * its deadline or its ttl. The TaskClient reports such a question on its `error` event, naming the
 * task: a `TaskNotSupportedError` (feature `elicitation`, `sampling` or `input`) when no callback
 * answers it, a `TaskInputError` (feature `elicitation` or `sampling`) when the callback threw (see
 * docs/input.md). This watch picks out the reports about one call's task, so that its tool can
 * cancel the task and tell the model at once.
 */
import {
  TaskError,
  TaskFailedError,
  TaskInputError,
  TaskNotSupportedError,
  type TaskClient,
  type TaskStatus,
} from '../index.js';
import { scrubbed } from './scrub.js';

/** What kind of input went unanswered: the `feature` of the library's report. */
export type InputKind = 'elicitation' | 'sampling' | 'input';

/** Input a task asked for that went unanswered, and why. */
export interface Unanswered {
  /** What the task asked for. */
  readonly kind: InputKind;
  /** `no-handler`: no callback answers it here; `failed`: the callback threw. */
  readonly reason: 'no-handler' | 'failed';
  /** The TaskClient's report. */
  readonly report: TaskError;
}

/** What a report on the `error` event says of a task's input, when it says that it went unanswered. */
function unansweredIn(report: TaskError): Unanswered | undefined {
  if (report instanceof TaskNotSupportedError) {
    const { feature } = report;
    return feature === 'elicitation' || feature === 'sampling' || feature === 'input'
      ? { kind: feature, reason: 'no-handler', report }
      : undefined;
  }
  return report instanceof TaskInputError ? { kind: report.feature, reason: 'failed', report } : undefined;
}

/**
 * Watches a TaskClient's `error` event for unanswered input of one call's task. It starts before
 * the call, since the task may ask in its very first snapshot: reports that come before the task
 * id is known are kept, and handed over once {@link InputWatch.follow} names the task.
 */
export class InputWatch {
  private readonly early: Array<{ readonly taskId: string; readonly unanswered: Unanswered }> = [];
  private taskId: string | undefined = undefined;
  private found: ((unanswered: Unanswered) => void) | undefined = undefined;
  private readonly off: () => void;

  constructor(tasks: TaskClient) {
    this.off = tasks.on('error', (report) => {
      const taskId = report.taskId;
      const unanswered = taskId === undefined ? undefined : unansweredIn(report);
      if (taskId === undefined || unanswered === undefined) return;
      if (this.found === undefined) this.early.push({ taskId, unanswered });
      else if (taskId === this.taskId) this.found(unanswered);
    });
  }

  /** From now on, calls `found` for each report about the task `taskId` (those already in first). */
  follow(taskId: string, found: (unanswered: Unanswered) => void): void {
    this.taskId = taskId;
    this.found = found;
    for (const item of this.early.splice(0)) if (item.taskId === taskId) found(item.unanswered);
  }

  /** Stops watching. */
  stop(): void {
    this.off();
    this.early.length = 0;
    this.found = undefined;
  }
}

/** What the model is told of calling the tool again, when nobody here can answer its input. */
const NO_RETRY = 'Calling the tool again would stop at the same question: tell the user it needs their input.';

const ASKED: Readonly<Record<InputKind, string>> = {
  elicitation: 'an elicitation',
  sampling: 'a sampling request',
  input: 'a kind of request this library cannot answer',
};

/**
 * The error a tool ends with when its task's input went unanswered and the tool gave the task up
 * for it: a `TaskNotSupportedError` when no callback answers that input here, else a `TaskError`
 * with the callback's failure. `status`: the task's status once the tool gave it up. Only a task
 * seen `cancelled` is said to be cancelled: a server may only acknowledge the cancel (or not
 * answer it), and the task may still run ([E6]), which the message then says. A task that ended
 * `failed` meanwhile has its failure (`failure`, the error its result gave) quoted. Neither message
 * names the task id. The message is what the model reads (`error.toString()`), so it is addressed
 * to the model: what happened, and whether calling the tool again may help; what the developer
 * should set (an `onElicitation` / `onSampling` callback) is in `cause`, the TaskClient's report.
 */
export function unansweredError(
  toolName: string,
  unanswered: Unanswered,
  taskId: string,
  status: TaskStatus | undefined,
  failure?: unknown,
): TaskError {
  const { kind, reason, report } = unanswered;
  const asked = `Tool "${toolName}" needs user input (${ASKED[kind]})`;
  const options = { task: report.task, taskId, toolName, cause: report };
  // A task that failed while the tool gave it up has a failure of its own, which the model is told.
  const failed = failure instanceof TaskFailedError ? ` (${failure.message})` : '';
  const fate =
    status === 'cancelled'
      ? 'so its task was cancelled'
      : status === 'completed' || status === 'failed'
        ? `and its task ended ${status}${failed}`
        : 'so the tool asked the server to cancel its task, and the server has not confirmed the cancel: the task may still be running';
  if (reason === 'failed') {
    const why = scrubbed(report.message, taskId);
    return new TaskError(`${asked}, and answering it failed, ${fate}. ${why}`, options);
  }
  return new TaskNotSupportedError(`${asked}, and nobody can answer it here, ${fate}. ${NO_RETRY}`, {
    ...options,
    feature: kind,
  });
}
