/**
 * Compiled by `npm run typecheck` under `exactOptionalPropertyTypes` (spec/types/tsconfig.json):
 * a host with that setting can pass `undefined` wherever the docs say it means the default, and a
 * handle narrows on `kind`. A line that stops compiling, or an `@ts-expect-error` that is no longer
 * an error, fails the type check.
 */
import {
  type TaskClient,
  TaskHandleOf,
  type CallToolAsTaskOptions,
  type CloseOptions,
  type ResultOptions,
  type TaskClientOptions,
  type UpdatesOptions,
} from '../../lib/index.js';

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
  if (handle.kind === 'task') {
    const id: string = handle.taskId;
    return id;
  }
  const none: undefined = handle.taskId;
  void none;
  return handle instanceof TaskHandleOf ? 'immediate' : 'never';
}
