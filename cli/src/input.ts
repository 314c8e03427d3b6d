/**
 * The CLI's answers to a task's questions: the next `--answer`, else a terminal form when there
 * is a terminal, else a decline (said so on stderr). A URL-mode elicitation is answered the same
 * way, with an action only: on a terminal the URL and the message are shown and the user says
 * whether they completed it. Sampling works the same with a typed reply; a rejection is sent as a
 * JSON-RPC error.
 */
import type { ElicitationCallback, SamplingCallback } from 'mcp-task-client';
import { toElicitAnswer, toSamplingAnswer, toUrlElicitAnswer, textReply, type AnswerQueue } from './answers.js';
import { shortId } from './format.js';
import { askElicitation, askSampling } from './forms.js';
import type { Reporter } from './reporter.js';

/** The callbacks given to `TaskClient.connect`. */
export interface CliInputCallbacks {
  readonly onElicitation: ElicitationCallback;
  readonly onSampling: SamplingCallback;
}

/** What the callbacks use, looked up at each request (the reporter is made after connecting). */
export interface InputDeps {
  readonly answers: AnswerQueue;
  reporter(): Reporter;
  /** Runs a prompt: the status line is paused and Ctrl-C reading is re-armed afterwards. */
  prompt<T>(run: () => Promise<T>): Promise<T>;
  /** Interruptions so far (Ctrl-C, SIGINT, SIGTERM, a closed stdout). */
  interruptions(): number;
  /** Told of every question as it arrives, before it is answered. */
  asked?(taskId: string | undefined): void;
}

/** The error a rejected sampling request is answered with. */
export class SamplingRejectedError extends Error {
  override readonly name = 'SamplingRejectedError';
  /** The JSON-RPC error code sent to the server (the spec's "user rejected" code). */
  readonly code = -1;
}

const about = (taskId: string | undefined): string => (taskId === undefined ? 'the server' : `task ${shortId(taskId)}`);

/** Settles only when `signal` aborts, rejecting with its reason. */
const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/**
 * Runs a prompt; its answer is sent only when no interruption came while it was open. A prompt
 * reads Ctrl-C as "dismiss" and would answer `cancel` (or reject) at once, before the task's cancel
 * reaches the server, which could then go on to complete the task: instead nothing is sent, and
 * the question is given up when the library says it is no longer wanted (the task was cancelled,
 * or the call abandoned).
 */
async function promptUninterrupted<T>(deps: InputDeps, run: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const before = deps.interruptions();
  const answer = await deps.prompt(run);
  return deps.interruptions() > before ? untilAborted(signal) : answer;
}

/** Builds the input callbacks. */
export function inputCallbacks(deps: InputDeps): CliInputCallbacks {
  return {
    onElicitation: async (params, context) => {
      deps.asked?.(context.taskId);
      const request = params as unknown as Record<string, unknown>;
      const reporter = deps.reporter();
      // A URL-mode elicitation's result is an action without content.
      const url = request.mode === 'url';
      const preset = deps.answers.next();
      let answer =
        preset === undefined ? undefined : url ? toUrlElicitAnswer(preset.value) : toElicitAnswer(preset.value);
      let source: 'answer' | 'prompt' | 'none' = 'answer';
      if (preset !== undefined && answer === undefined) {
        const fits = url
          ? 'a URL elicitation (an action only: accept, decline or cancel)'
          : 'an elicitation (an action, or content of strings, numbers, booleans and string arrays)';
        reporter.note(`answer #${preset.number} does not fit ${fits}; declining ${about(context.taskId)}'s question`);
        answer = { action: 'decline' };
        source = 'none';
      }
      if (answer === undefined && reporter.interactive) {
        answer = await promptUninterrupted(deps, () => askElicitation(request, context.signal), context.signal);
        source = 'prompt';
      }
      if (answer === undefined) {
        reporter.note(
          `declined a question from ${about(context.taskId)} ("${String(request.message)}"): no answer given (use --answer JSON or --answers FILE)`,
        );
        answer = { action: 'decline' };
        source = 'none';
      }
      reporter.input({
        taskId: context.taskId,
        kind: 'elicitation',
        delivery: context.delivery,
        request,
        answer: { ...answer },
        source,
      });
      return { ...answer };
    },
    onSampling: async (params, context) => {
      deps.asked?.(context.taskId);
      const request = params as unknown as Record<string, unknown>;
      const reporter = deps.reporter();
      const reply = (
        result: Record<string, unknown>,
        source: 'answer' | 'prompt',
      ): Awaited<ReturnType<SamplingCallback>> => {
        reporter.input({
          taskId: context.taskId,
          kind: 'sampling',
          delivery: context.delivery,
          request,
          answer: result,
          source,
        });
        return result as Awaited<ReturnType<SamplingCallback>>;
      };
      const reject = (source: 'answer' | 'prompt' | 'none', why: string): never => {
        reporter.input({
          taskId: context.taskId,
          kind: 'sampling',
          delivery: context.delivery,
          request,
          answer: { action: 'reject' },
          source,
        });
        throw new SamplingRejectedError(why);
      };
      const preset = deps.answers.next();
      if (preset !== undefined) {
        const answer = toSamplingAnswer(preset.value);
        if (answer === undefined) {
          reporter.note(
            `answer #${preset.number} is not a sampling answer; rejecting ${about(context.taskId)}'s request`,
          );
          return reject('none', 'The answer given was not a sampling answer');
        }
        return 'reject' in answer
          ? reject('answer', 'The user rejected the sampling request')
          : reply(answer.result, 'answer');
      }
      if (reporter.interactive) {
        const answer = await promptUninterrupted(deps, () => askSampling(request, context.signal), context.signal);
        return 'reject' in answer
          ? reject('prompt', 'The user rejected the sampling request')
          : reply(textReply(answer.text), 'prompt');
      }
      reporter.note(
        `rejected a sampling request from ${about(context.taskId)}: no answer given (use --answer JSON or --answers FILE)`,
      );
      return reject('none', 'No answer was given for the sampling request');
    },
  };
}
