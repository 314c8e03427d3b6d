/**
 * The `execute` of a task tool: one `callToolAsTask` per AI SDK tool call, its status changes
 * and progress notifications yielded as preliminary results, then the final result as the last
 * value (the AI SDK takes the last yielded value as the tool's result).
 */
import type { ToolExecutionOptions } from 'ai';
import {
  TaskFailedError,
  TaskNotSupportedError,
  type CallToolAsTaskOptions,
  type CallToolResult,
  type ContentBlock,
  type Task,
  type TaskClient,
  type TaskHandle,
  type TaskProgress,
} from '../index.js';
import { bounded, DEFAULT_MAX_ERROR_LENGTH } from './bound.js';
import { Feed } from './feed.js';
import { asTimeout, CallSignal, givenUpAtTimeout } from './timeout.js';
import { scrubbed } from './scrub.js';
import { InputWatch, unansweredError, type Unanswered } from './unanswered.js';
import type { TaskToolInputContext, TaskToolOptions, TaskToolOutput, TaskToolResult, TaskToolStatus } from './types.js';

/** What one tool of the set calls: the server's name, the model's name, and its options. */
export interface ToolCallPlan {
  /** The server's name of the tool. */
  readonly serverName: string;
  /** The tool set's key. */
  readonly aiName: string;
  /** Its options (the set's, with its own override on top). */
  readonly options: TaskToolOptions;
}

/**
 * One thing that happened to the call: a snapshot, a progress notification, input nobody answers,
 * or a timeout of the AI SDK that the tool takes up itself.
 */
type Happening =
  | { readonly task: Task }
  | { readonly progress: TaskProgress }
  | { readonly unanswered: Unanswered }
  | { readonly timedOut: true };

/**
 * The call's options for `callToolAsTask`: the plan's, the feed, and `signal` (the call's: see
 * {@link CallSignal}).
 */
function callOptions(
  plan: ToolCallPlan,
  execution: ToolExecutionOptions<unknown>,
  feed: Feed<Happening>,
  signal: AbortSignal,
): CallToolAsTaskOptions {
  const { options } = plan;
  const extend = <C>(context: C): C & Pick<TaskToolInputContext, 'toolCallId' | 'aiToolName'> => ({
    ...context,
    toolCallId: execution.toolCallId,
    aiToolName: plan.aiName,
  });
  const { onElicitation, onSampling } = options;
  return {
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    ...(options.requireTask === undefined ? {} : { requireTask: options.requireTask }),
    ...(options.cancelOnAbort === undefined ? {} : { cancelOnAbort: options.cancelOnAbort }),
    ...(options.cancelOnTimeout === undefined ? {} : { cancelOnTimeout: options.cancelOnTimeout }),
    signal,
    // A progress token lives as long as the task on 2025-11-25 ([R35]); the extension sends none ([E10]).
    ...(options.progress === false ? {} : { onProgress: (progress: TaskProgress) => feed.push({ progress }) }),
    ...(onElicitation === undefined
      ? {}
      : { onElicitation: (params, context) => onElicitation(params, extend(context)) }),
    ...(onSampling === undefined ? {} : { onSampling: (params, context) => onSampling(params, extend(context)) }),
  };
}

/** The final output of a tool result. */
function resultOutput(result: CallToolResult): TaskToolResult {
  return {
    type: 'result',
    content: Array.isArray(result.content) ? result.content : [],
    ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
    ...(result.isError === true ? { isError: true as const } : {}),
  };
}

/** Whether `content` holds a text block with some text: what a model reads as the tool's own words. */
function hasText(content: readonly ContentBlock[]): boolean {
  return content.some((block) => block.type === 'text' && typeof block.text === 'string' && block.text !== '');
}

/**
 * The tool's result. A result that reports a tool error is the final output, for the model to
 * read in full, however the wire reports it: `isError` on a plain call, on a task the server
 * marked `completed` (as the tasks extension does, [E15]), or on a task that ended `failed` (as
 * 2025-11-25 servers do, [V18]); the library's `TaskFailedError` then carries that result. When
 * that result has no text (no content, or only an image) and the server gave the failed task a
 * status message, the error's message, which quotes it, leads the content (cut to
 * `maxErrorLength`, as an error would be): the reason the task failed is not lost. A task that
 * failed without a tool result (a JSON-RPC error) throws its `TaskFailedError`: the AI SDK makes a
 * `tool-error` of it, with the server's message.
 */
async function finalOutput(handle: TaskHandle, maxErrorLength: number): Promise<TaskToolResult> {
  try {
    return resultOutput(await handle.result());
  } catch (error) {
    if (!(error instanceof TaskFailedError) || error.result === undefined) throw error;
    const output = resultOutput(error.result);
    const { statusMessage } = error;
    if (hasText(output.content) || statusMessage === undefined || statusMessage === '')
      return { ...output, isError: true };
    const reason = { type: 'text' as const, text: (bounded(error, maxErrorLength) as Error).message };
    return { ...output, content: [reason, ...output.content], isError: true };
  }
}

/**
 * The error the model reads for a call that could not start, where the library's message is
 * advice for the developer: a callback of this tool whose capability the SDK client never
 * declared (on 2025-11-25, where capabilities are fixed at connect time, the TaskClient refuses
 * the call before sending it). The model is told that the tool cannot be used here and that
 * calling it again will not help; the library's error, with what to declare, is the `cause`.
 * Only that refusal is rewritten: it is the one `TaskNotSupportedError` of an input kind that a
 * call rejects with on 2025-11-25, and only for a callback the call passed. Input a server asks
 * for before it answers a call (the tasks extension's input rounds) may be refused for other
 * reasons (params that break the schema, an elicitation mode the call did not declare), and
 * keeps the library's message, which says why.
 */
function forModel(tasks: TaskClient, plan: ToolCallPlan, error: unknown): unknown {
  if (!(error instanceof TaskNotSupportedError)) return error;
  const { feature } = error;
  if (feature !== 'elicitation' && feature !== 'sampling') return error;
  const passed = feature === 'elicitation' ? plan.options.onElicitation : plan.options.onSampling;
  if (tasks.wire !== '2025-11-25' || passed === undefined || error.task !== undefined) return error;
  const asks = feature === 'elicitation' ? 'questions for the user (elicitation)' : 'requests for a model (sampling)';
  const toolName = plan.serverName;
  return new TaskNotSupportedError(
    `Tool "${toolName}" cannot be used here: this application is not set up to receive its ${asks}. Calling it again will fail the same way.`,
    { feature, toolName, cause: error },
  );
}

/** The status a UI sees of `task` and the latest `progress`, without the task id. */
function statusOf(
  task: Task | undefined,
  progress: TaskProgress | undefined,
  taskId: string | undefined,
): TaskToolStatus {
  const message = progress?.message;
  return {
    type: 'status',
    status: task?.status ?? 'working',
    ...(task?.statusMessage === undefined ? {} : { statusMessage: scrubbed(task.statusMessage, taskId) }),
    ...(progress === undefined
      ? {}
      : { progress: message === undefined ? progress : { ...progress, message: scrubbed(message, taskId) } }),
  };
}

/** Whether two statuses would look the same to a UI. */
function same(a: TaskToolStatus | undefined, b: TaskToolStatus): boolean {
  return (
    a !== undefined &&
    a.status === b.status &&
    a.statusMessage === b.statusMessage &&
    a.progress?.progress === b.progress?.progress &&
    a.progress?.total === b.progress?.total &&
    a.progress?.message === b.progress?.message
  );
}

/**
 * Whether unanswered input leaves the task waiting, so that the tool gives up on it. On the tasks
 * extension it does: a question nobody answers, or whose callback threw, is never answered
 * ([E4]). On 2025-11-25 a callback that throws answers the server with an error, and the task
 * goes on or fails on the server's terms.
 */
function leavesTaskWaiting(unanswered: Unanswered, handle: TaskHandle): boolean {
  return unanswered.reason === 'no-handler' || handle.wire === 'io.modelcontextprotocol/tasks';
}

/**
 * Runs one AI SDK tool call as a task. Yields a {@link TaskToolStatus} for each change (status,
 * status message or progress; repeats are skipped), then the {@link TaskToolResult}. The AI SDK's
 * `abortSignal` is the call's signal: aborting cancels the remote task (`cancelOnAbort`). When the
 * AI SDK stops reading before the end, the call is aborted the same way: the task is cancelled, or
 * left running when `cancelOnAbort` (the tool's, else the TaskClient's) is `false`. When the task
 * asks for input that no callback here answers, or, on the tasks extension, whose callback threw,
 * the task is given up at once rather than at its deadline: cancelled (a task found ended keeps
 * its outcome), and the tool fails with an error that says so. On 2025-11-25 the server's request
 * also gets an error reply, and a callback that threw there only answers the server with its
 * error: the server decides.
 */
export async function* executeTaskTool(
  tasks: TaskClient,
  plan: ToolCallPlan,
  input: unknown,
  execution: ToolExecutionOptions<unknown>,
): AsyncGenerator<TaskToolOutput, void, undefined> {
  const feed = new Feed<Happening>();
  const args = input === undefined || input === null ? {} : (input as Record<string, unknown>);
  // A timeout of the AI SDK once the task exists, on a tool that sets cancelOnTimeout: the tool
  // gives the task up itself, as that says. Otherwise it aborts the call like any abort of the AI
  // SDK's signal (cancelOnAbort: the TaskClient cannot tell it from one), and the error the model
  // reads is made a timeout. The call is also aborted when the reader leaves early: cancelOnAbort
  // then decides whether the remote task is cancelled.
  const cancelOnTimeout = plan.options.cancelOnTimeout;
  let handle: TaskHandle | undefined;
  const call = new CallSignal(execution.abortSignal, () => {
    if (cancelOnTimeout === undefined || handle === undefined || handle.settled) return false;
    feed.push({ timedOut: true });
    return true;
  });
  // Watched from before the call: the task may ask for input in its very first snapshot.
  const watch = new InputWatch(tasks);
  try {
    handle = await tasks.callToolAsTask(plan.serverName, args, callOptions(plan, execution, feed, call.signal));
  } catch (error) {
    watch.stop();
    call.dispose();
    throw forModel(tasks, plan, asTimeout(error, plan.serverName, call.timedOutAfterMs));
  }
  // The handle, for the closures below (`handle` may be read before it is set).
  const tracked = handle;
  const taskId = tracked.kind === 'task' ? tracked.taskId : undefined;
  if (taskId !== undefined) {
    watch.follow(taskId, (unanswered) => {
      if (leavesTaskWaiting(unanswered, tracked)) feed.push({ unanswered });
    });
  }
  // The snapshot the call returned, then every change; the feed ends once the result settles.
  if (tracked.task !== undefined) feed.push({ task: tracked.task });
  const off = tracked.on('status', (_metrics, task) => feed.push({ task }));
  const ended = tracked.result().then(
    () => feed.end(),
    () => feed.end(),
  );
  let finished = false;
  try {
    let last: TaskToolStatus | undefined;
    let task: Task | undefined;
    let progress: TaskProgress | undefined;
    let unanswered: Unanswered | undefined;
    let timedOut = false;
    for await (const happening of feed.drain()) {
      if ('unanswered' in happening) {
        unanswered = happening.unanswered;
        break;
      }
      if ('timedOut' in happening) {
        // A task that has just settled keeps its outcome.
        timedOut = !tracked.settled;
        if (timedOut) break;
        continue;
      }
      if ('task' in happening) task = happening.task;
      else progress = happening.progress;
      const status = statusOf(task, progress, taskId);
      if (same(last, status)) continue;
      last = status;
      yield status;
    }
    // Nobody will answer, or the AI SDK's time is up: cancel the task (bounded by cancelGraceMs)
    // instead of waiting for it, or, at a timeout with cancelOnTimeout false, leave it running.
    if (unanswered !== undefined || (timedOut && cancelOnTimeout === true))
      await tracked.dispose().catch(() => undefined);
    else if (timedOut) tracked.detach();
    await ended;
    const output = await finalOutput(tracked, plan.options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH).catch(
      (error: unknown) => {
        // A task that finished anyway keeps its result; otherwise the error says why it was given
        // up, and whether the server confirmed the cancel ([E6]: it may only acknowledge it).
        const status = tracked.task?.status;
        if (unanswered !== undefined && taskId !== undefined)
          throw unansweredError(plan.serverName, unanswered, taskId, status, error);
        if (timedOut && status !== 'completed' && status !== 'failed')
          throw givenUpAtTimeout(
            plan.serverName,
            call.timedOutAfterMs ?? 0,
            cancelOnTimeout === true,
            tracked.task,
            error,
          );
        throw asTimeout(error, plan.serverName, call.timedOutAfterMs);
      },
    );
    finished = true;
    yield output;
  } finally {
    off();
    watch.stop();
    feed.end();
    // The reader left before the end (the loop was stopped): nobody will read this task's result.
    // Stopped like an abort, the task is cancelled or left running as cancelOnAbort says.
    if (!finished && !tracked.settled) {
      call.leave(new Error('The AI SDK stopped reading the tool output'));
      await ended;
    }
    call.dispose();
  }
}
