/**
 * The producer's side, usable from any process that can reach Redis: enqueue a tool call as a
 * job, answer the questions its task asks, cancel it.
 */
import type { Job, JobsOptions } from 'bullmq';
import { TaskOptionError, type CallToolResult, type CreateMessageResult, type ElicitResult } from '../index.js';
import { instanceOf, writeControl, type ToolQueue } from './control-store.js';
import { jobDataFor } from './job-data.js';
import type { PendingQuestion, ToolJobData, ToolJobProgress, ToolJobRequest } from './types.js';

/** BullMQ's job options, plus the job's name. */
export interface ToolJobOptions extends JobsOptions {
  /** The job's name, as BullMQ shows it. @defaultValue the tool's name */
  readonly name?: string | undefined;
}

/** A tool job as BullMQ hands it out: its data, and the tool's result as its return value. */
export type ToolJob = Job<ToolJobData, CallToolResult>;

/**
 * Enqueues "call `request.tool` with `request.args` on the server `request.server`" as a job on
 * `queue`. A worker running `taskProcessor` calls the tool as a task, stores the task's reference
 * in the job before it waits, and returns the tool's result as the job's return value.
 * @throws TaskOptionError for a malformed request (nothing is enqueued).
 */
export async function enqueueToolTask(
  queue: ToolQueue,
  request: ToolJobRequest,
  options: ToolJobOptions = {},
): Promise<ToolJob> {
  const data = jobDataFor(request, Date.now());
  const { name, ...jobOptions } = options;
  return (await queue.add(name ?? data.tool, data, jobOptions)) as ToolJob;
}

/** The questions a tool job waits on, from its progress (`job.progress`). */
export function pendingQuestions(job: Pick<Job, 'progress'>): PendingQuestion[] {
  const progress = job.progress as Partial<ToolJobProgress> | number | string | boolean | undefined;
  if (typeof progress !== 'object' || progress === null || !Array.isArray(progress.questions)) return [];
  const questions: unknown[] = progress.questions;
  return questions.filter(
    (question): question is PendingQuestion =>
      typeof question === 'object' && question !== null && typeof (question as { id?: unknown }).id === 'string',
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why `answer` cannot answer a question of `kind`, or `undefined` when it can. */
function answerProblem(kind: PendingQuestion['kind'], answer: unknown): string | undefined {
  if (!isObject(answer)) return 'an answer must be an object';
  if (kind === 'elicitation') {
    if (answer.action !== 'accept' && answer.action !== 'decline' && answer.action !== 'cancel') {
      return 'an elicitation answer needs "action": "accept", "decline" or "cancel"';
    }
    if (answer.content !== undefined && !isObject(answer.content))
      return 'an elicitation answer\'s "content" must be an object';
    return undefined;
  }
  if (answer.role !== 'assistant' && answer.role !== 'user')
    return 'a sampling answer needs "role": "assistant" (or "user")';
  if (typeof answer.model !== 'string') return 'a sampling answer needs the "model" that produced it';
  if (!isObject(answer.content) && !Array.isArray(answer.content))
    return 'a sampling answer needs "content" (a content block or an array of them)';
  return undefined;
}

/** Options of {@link answerJobInput}. */
export interface AnswerOptions {
  /** The question to answer; required when the job waits on more than one. */
  readonly question?: string | undefined;
}

/**
 * Answers a question that a tool job's task asks (an elicitation or a sampling request), from any
 * process: the answer is stored in Redis and delivered by whichever worker holds the job, now or
 * after a takeover. The job's progress lists its pending questions ({@link pendingQuestions}).
 * @returns the question answered.
 * @throws TaskOptionError when the job does not exist or has finished, when it waits on no
 *   question (or on several and `options.question` does not name one), when the answer does not
 *   fit the question, or when the question was answered already.
 */
export async function answerJobInput(
  queue: ToolQueue,
  jobId: string,
  answer: ElicitResult | CreateMessageResult,
  options: AnswerOptions = {},
): Promise<PendingQuestion> {
  const job = await queue.getJob(jobId);
  if (job === undefined || job === null)
    throw new TaskOptionError(`No job ${jobId} on queue ${queue.name}`, { option: 'jobId' });
  const state = await job.getState();
  if (state === 'completed' || state === 'failed' || state === 'unknown') {
    throw new TaskOptionError(`Job ${jobId} has ${state === 'unknown' ? 'gone' : state}: there is nothing to answer`, {
      option: 'jobId',
    });
  }
  const pending = pendingQuestions(job);
  const question =
    options.question === undefined
      ? pending.length === 1
        ? pending[0]
        : undefined
      : pending.find((q) => q.id === options.question);
  if (question === undefined) {
    const why =
      options.question !== undefined
        ? `job ${jobId} waits on no question "${options.question}"`
        : pending.length === 0
          ? `job ${jobId} waits on no question`
          : `job ${jobId} waits on ${pending.length} questions (${pending.map((q) => q.id).join(', ')}): name one with options.question`;
    throw new TaskOptionError(`Cannot answer: ${why}`, { option: 'question' });
  }
  const problem = answerProblem(question.kind, answer);
  if (problem !== undefined)
    throw new TaskOptionError(`Cannot answer ${question.id}: ${problem}`, { option: 'answer' });
  const stored = await writeControl(queue, instanceOf(job), { kind: 'answer', question: question.id }, answer, true);
  if (stored === 'present')
    throw new TaskOptionError(`Question ${question.id} of job ${jobId} was answered already`, { option: 'question' });
  // It ended, or was removed, since its state was read: nothing was stored.
  if (stored !== 'written') {
    throw new TaskOptionError(
      `Job ${jobId} has ${stored === 'gone' ? 'gone' : 'finished'}: there is nothing to answer`,
      {
        option: 'jobId',
      },
    );
  }
  return question;
}

/**
 * Cancels a tool job from any process: the worker that holds it cancels the remote task
 * (`tasks/cancel`) and fails the job without a retry. A job still waiting in the queue fails
 * that way as soon as a worker takes it (a delayed one is promoted so that this is now).
 * @returns false when the job does not exist or has finished already.
 */
export async function cancelToolJob(
  queue: ToolQueue,
  jobId: string,
  reason = 'cancelled on request',
): Promise<boolean> {
  if (typeof reason !== 'string') throw new TaskOptionError('"reason" must be a string', { option: 'reason' });
  const job = await queue.getJob(jobId);
  if (job === undefined || job === null) return false;
  const state = await job.getState();
  if (state === 'completed' || state === 'failed' || state === 'unknown') return false;
  const stored = await writeControl(queue, instanceOf(job), { kind: 'cancel' }, { reason, at: Date.now() }, false);
  // It ended, or was removed, since its state was read: nothing was stored.
  if (stored !== 'written') return false;
  if (state === 'delayed') await job.promote().catch(() => {});
  return true;
}
