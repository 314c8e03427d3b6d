/**
 * Compiled by `npm run typecheck` under `exactOptionalPropertyTypes` (spec/types/tsconfig.json):
 * a host with that setting can pass `undefined` wherever the docs say it means the default, and a
 * handle narrows on `kind`. A line that stops compiling, or an `@ts-expect-error` that is no longer
 * an error, fails the type check.
 */
import {
  type ElicitationCallback,
  type SamplingCallback,
  type TaskClient,
  TaskAbortError,
  TaskFailedError,
  type TaskHandle,
  TaskTimeoutError,
  type CallToolAsTaskOptions,
  type CloseOptions,
  type ElicitRequestParams,
  type ReceiverHandle,
  type ResultOptions,
  type ServeOptions,
  type TaskClientOptions,
  type UpdatesOptions,
} from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import * as entry from '../../lib/index.js';
import type { ElicitResult as SdkV2ElicitResult } from '@modelcontextprotocol/client';
import type {
  CreateMessageResult as SdkV1CreateMessageResult,
  ElicitResult as SdkV1ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';

declare const maybe: number | undefined;
declare const maybeSignal: AbortSignal | undefined;
declare const maybeFlag: boolean | undefined;

export const clientOptions: TaskClientOptions = {
  timeoutMs: maybe,
  ttlMs: maybe,
  requestTimeoutMs: maybe,
  cancelGraceMs: maybe,
  closeTimeoutMs: maybe,
  cancelOnTimeout: maybeFlag,
  cancelOnAbort: maybeFlag,
  requireTask: maybeFlag,
  maxConcurrentTasks: maybe,
  whenFull: undefined,
  logger: undefined,
  reconnect: undefined,
  clock: undefined,
  random: undefined,
  retry: { retries: maybe, minDelayMs: maybe },
  onElicitation: undefined,
  onSampling: undefined,
  serve: undefined,
};

/** `taskReceiver()`'s options (`mcp-task-client/receiver`) take `undefined` for every default too. */
export const serveOptions: ServeOptions = {
  elicitation: undefined,
  sampling: undefined,
  ttlMs: maybe,
  maxTtlMs: maybe,
  pollIntervalMs: maybe,
  maxTasks: maybe,
  maxResultWaiters: maybe,
  pageSize: maybe,
};

/** The receiver handle: `serve()` returns one, `tasks.receiver` may be none; its members as documented. */
export async function serving(tasks: TaskClient): Promise<number> {
  const maybeHandle: ReceiverHandle | undefined = tasks.receiver;
  // @ts-expect-error tasks.receiver is undefined while nothing serves
  const handle: ReceiverHandle = tasks.receiver;
  void [maybeHandle, handle];
  await using receiver = tasks.serve(taskReceiver({ ...serveOptions, elicitation: () => ({ action: 'decline' }) }));
  const closed: boolean = receiver.closed;
  const counts: [number, number] = [receiver.size, receiver.running];
  void [closed, receiver.tasks()[0]?.taskId];
  const done: Promise<void> = receiver.close();
  await done;
  return counts[0] + counts[1];
}

/** An elicitation's params as a host forwards them: its optional fields take `undefined`. */
declare const maybeSchema: ElicitRequestParams['requestedSchema'];
export const forwarded: ElicitRequestParams = {
  mode: undefined,
  message: 'Your name?',
  requestedSchema: maybeSchema,
  url: undefined,
  elicitationId: undefined,
  _meta: undefined,
};

export const callOptions: CallToolAsTaskOptions = {
  timeoutMs: maybe,
  ttlMs: maybe,
  signal: maybeSignal,
  meta: undefined,
  onProgress: undefined,
  onElicitation: undefined,
};

export const waits: [ResultOptions, UpdatesOptions, CloseOptions] = [
  { signal: maybeSignal },
  { signal: maybeSignal, bufferSize: maybe },
  { cancelRunning: maybeFlag },
];

export async function narrowing(tasks: TaskClient): Promise<string> {
  const handle = await tasks.callToolAsTask('analyze', { id: 7 }, { timeoutMs: maybe });
  // @ts-expect-error before narrowing, taskId may be undefined
  const unknownId: string = handle.taskId;
  void unknownId;
  const either: TaskHandle = handle;
  void either;
  if (handle.kind === 'task') {
    const id: string = handle.taskId;
    const task: TaskHandle<'task'> = handle;
    // @ts-expect-error a task handle is not an immediate one
    const wrong: TaskHandle<'immediate'> = handle;
    void [task, wrong];
    return id;
  }
  const none: undefined = handle.taskId;
  void none;
  const immediate: TaskHandle<'immediate'> = handle;
  return immediate.kind;
}

/** A handle the host annotates as `TaskHandle` narrows on `kind` just as one it got from a call. */
export function annotated(handle: TaskHandle): string | undefined {
  if (handle.kind === 'task') {
    const id: string = handle.taskId;
    return id;
  }
  const none: undefined = handle.taskId;
  return none;
}

/** `TaskHandle` is the one handle name: the class behind it is not exported. */
// @ts-expect-error the handle's class is internal
export const handleClass: unknown = entry.TaskHandleOf;

/** What SDK v1 and v2 handlers produce can be returned from the input callbacks as is. */
declare const sdkV1Elicit: SdkV1ElicitResult;
declare const sdkV1Sample: SdkV1CreateMessageResult;
declare const sdkV2Elicit: SdkV2ElicitResult;
declare const maybeContent: { readonly [name: string]: string } | undefined;
declare const maybeReason: string | undefined;

export const callbacks: [
  ElicitationCallback,
  SamplingCallback,
  ElicitationCallback,
  ElicitationCallback,
  SamplingCallback,
] = [
  () => sdkV1Elicit,
  () => sdkV1Sample,
  () => sdkV2Elicit,
  () => ({ action: 'accept', content: maybeContent, _meta: undefined }),
  () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' }, stopReason: maybeReason }),
];

/** Error classes take an explicit undefined for their optional fields, as TaskErrorOptions does. */
export const errors = [
  new TaskFailedError('failed', { result: undefined, rpcError: undefined }),
  new TaskTimeoutError('timed out', { timeoutMs: 1, elapsedMs: 1, remoteCancel: 'unknown', connectionLost: maybeFlag }),
  new TaskAbortError('aborted', { reason: undefined, remoteCancel: undefined }),
];
