/**
 * Public types of the per-call callbacks: input (elicitation and sampling) callbacks and what
 * they learn, and the progress callback and its context.
 */
import type { CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult } from '../types.js';
import type { TaskProgress } from './events.js';
import type { TaskHandle } from './handle.js';

/**
 * How an input request reached the client: `request`, `task-update` and `retry` for input a
 * task of this client's asks for, `receiver-task` for a task-augmented request this client runs
 * as a receiver task (see {@link TaskClient.serve}).
 */
export type InputDelivery = 'request' | 'task-update' | 'retry' | 'receiver-task';

/** What an input callback learns about the request it answers. */
export interface InputContext {
  /**
   * The task that asked; `undefined` before a task exists (`retry`), and for an untagged request
   * (e.g. from mcp-go) unless the library tied it to a task (see {@link InputContext.inferred}).
   */
  readonly taskId: string | undefined;
  /** The handle of that task, when this client tracks it. */
  readonly handle: TaskHandle | undefined;
  /** The tool that was called, when known. */
  readonly toolName: string | undefined;
  /**
   * `true` when the request named no task (no related-task `_meta`) and the library tied it to a
   * call on its own: the only call in flight on the connection, or the only task waiting for
   * input. `taskId`, `handle` and `toolName` then describe that call (`taskId` and `handle` are
   * `undefined` while its `tools/call` has no answer yet). The answer is sent without a task id,
   * as the request came. Absent otherwise.
   */
  readonly inferred?: true | undefined;
  /**
   * Which path brought the request: `request` (a 2025-11-25 side-channel request), `task-update`
   * (a task's `inputRequests` on the tasks extension), `retry` (asked before a task exists; the
   * call is sent again with the answer) or `receiver-task` (a task-augmented request: the answer
   * becomes the result of the receiver task {@link InputContext.receiverTaskId}, which the server
   * polls).
   */
  readonly delivery: InputDelivery;
  /**
   * With delivery `task-update` or `retry`: the request's key in the `inputRequests` that carried
   * it (the answer goes back under that key). On `task-update` a key names one request over the
   * task's whole life ([E4]): the same key seen again (after a resume, by another process) is the
   * same request, and a request asked again later has a new key. Absent for other deliveries.
   */
  readonly key?: string | undefined;
  /**
   * With delivery `receiver-task`: the id of the task this client created to run the request (a
   * secret, like every task id). `taskId` is then the server's own task the request belongs to,
   * if it said so.
   */
  readonly receiverTaskId?: string | undefined;
  /**
   * Fires when the answer is no longer wanted: the task ended, timed out or was cancelled, the
   * call was abandoned, or the server cancelled the request; for a receiver task, when the server
   * cancelled it (`tasks/cancel`), its ttl ran out, or serving stopped. Dismiss any prompt then.
   */
  readonly signal: AbortSignal;
}

/** Answers an elicitation (`elicitation/create`); the result is sent back to the server. */
export type ElicitationCallback = (
  params: ElicitRequestParams,
  context: InputContext,
) => ElicitResult | Promise<ElicitResult>;

/** Answers a sampling request (`sampling/createMessage`); the result is sent back to the server. */
export type SamplingCallback = (
  params: CreateMessageRequestParams,
  context: InputContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/** Input callbacks, per call or client-wide. */
export interface InputCallbacks {
  /**
   * Answers elicitations. On 2025-11-25 the SDK client must have declared the `elicitation`
   * capability; on the tasks extension the requests of the calls it answers declare it.
   */
  readonly onElicitation?: ElicitationCallback | undefined;
  /**
   * Answers sampling requests. On 2025-11-25 the SDK client must have declared the `sampling`
   * capability; on the tasks extension the requests of the calls it answers declare it.
   */
  readonly onSampling?: SamplingCallback | undefined;
}

/** Receives a call's progress notifications for the task's whole life. */
export type ProgressCallback = (progress: TaskProgress, context: ProgressContext) => void;

/** What a progress callback learns: the task (once created), its handle and the tool. */
export type ProgressContext = Pick<InputContext, 'taskId' | 'handle' | 'toolName'>;
