/**
 * Builds the error for a tool call that failed, with the best message available: the JSON-RPC
 * error's message, else the tool result's first non-empty text, else the task's `statusMessage`
 * ([V18], D6).
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
  // An empty text says nothing: the first non-empty one is taken (an image or an empty block may
  // come first), and an empty JSON-RPC message or statusMessage gives way to the next source.
  // Blocks are read defensively: a result not from the decoder (an immediate one from a host's own
  // code path) may hold anything.
  const text = result?.content.find(
    (block: unknown) => isTextBlock(block) && block.text !== '',
  ) as { readonly text: string } | undefined;
  const message =
    nonEmpty(rpcError?.message) ??
    text?.text ??
    nonEmpty(task?.statusMessage) ??
    'the task failed without a message';
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

function isTextBlock(block: unknown): block is { readonly type: 'text'; readonly text: string } {
  return typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string';
}
