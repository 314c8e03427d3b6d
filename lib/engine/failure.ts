/**
 * Builds the error for a tool call that failed, with the best message available: the JSON-RPC
 * error's message, else the tool result's first text, else the task's `statusMessage` ([V18], D6).
 */
import { TaskFailedError } from '../errors.js';
import { scrub } from '../util/fingerprint.js';
import type { CallToolResult, JsonRpcErrorInfo, Task } from '../types.js';

/** A {@link TaskFailedError} carrying the real payload. */
export function failedError(
  toolName: string,
  task: Task | undefined,
  payload: { readonly result?: CallToolResult | undefined; readonly rpcError?: JsonRpcErrorInfo | undefined },
): TaskFailedError {
  const { result, rpcError } = payload;
  const text = result?.content.find((block) => block.type === 'text');
  const message =
    rpcError?.message ??
    (text !== undefined && 'text' in text && typeof text.text === 'string' && text.text !== '' ? text.text : undefined) ??
    task?.statusMessage ??
    'the task failed without a message';
  return new TaskFailedError(`Tool "${toolName}" failed: ${scrub(message, task?.taskId)}`, {
    task,
    toolName,
    ...(result === undefined ? {} : { result }),
    ...(rpcError === undefined ? {} : { rpcError }),
  });
}
