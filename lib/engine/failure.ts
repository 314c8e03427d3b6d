/**
 * Builds the error for a tool call that failed, with the best message available: the JSON-RPC
 * error's message, else the tool result's first non-empty text, else the task's `statusMessage`
 * ([V18], D6).
 */
import { TaskFailedError } from '../errors.js';
import { scrub } from '../util/fingerprint.js';
import type { CallToolResult, JsonRpcErrorInfo, Task, TextContent } from '../types.js';

/** A {@link TaskFailedError} carrying the real payload. */
export function failedError(
  toolName: string,
  task: Task | undefined,
  payload: { readonly result?: CallToolResult | undefined; readonly rpcError?: JsonRpcErrorInfo | undefined },
): TaskFailedError {
  const { result, rpcError } = payload;
  // An empty text says nothing: the first non-empty one is taken (an image or an empty block may
  // come first), and an empty JSON-RPC message or statusMessage gives way to the next source. The
  // decoder left only objects in `content`; their fields are the server's, so `text` is checked.
  const text = result?.content.find(
    (block): block is TextContent => block.type === 'text' && typeof block.text === 'string' && block.text !== '',
  );
  const message =
    nonEmpty(rpcError?.message) ?? text?.text ?? nonEmpty(task?.statusMessage) ?? 'the task failed without a message';
  return new TaskFailedError(`Tool "${toolName}" failed: ${scrub(message, task?.taskId)}`, {
    task,
    toolName,
    ...(result === undefined ? {} : { result }),
    ...(rpcError === undefined ? {} : { rpcError }),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}
