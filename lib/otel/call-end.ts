/**
 * How a call's end reads on its span: the outcome an error a call ended with stands for, how that
 * error reads (a refused `tools/call` by the server's own message), and the attributes and status
 * the call's span gets at its end. The call's trace, which ends the span, is call.ts.
 */
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClosedError,
  TaskDetachedError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskRpcError,
  TaskTimeoutError,
  type CallToolResult,
  type RequestFailure,
  type TaskMetrics,
  type TaskOutcomeKind,
} from '../index.js';
import { readError, scrubbed, type ErrorReading } from './attributes.js';
import type { TraceKit } from './kit.js';
import { ATTR, TASK_ATTR } from './names.js';

/** What a call's end uses of its trace (a `CallTrace`, call.ts). */
export interface EndingCall {
  readonly kit: TraceKit;
  /** The span of the call and its task. */
  readonly span: Span;
  /** The task's id, once known. */
  readonly taskId: string | undefined;
  /** The server's JSON-RPC error to the last `tools/call`, for the span's status description. */
  readonly callError: RequestFailure | undefined;
  /** Records a completed task's result (with `recordResults`). */
  recordResult(result: CallToolResult): void;
}

/** The outcome an error a call ended with stands for (as the `settled` event names it). */
export function outcomeOfError(error: unknown): TaskOutcomeKind {
  if (error === undefined) return 'completed';
  if (error instanceof TaskTimeoutError) return 'timeout';
  if (error instanceof TaskAbortError) return 'aborted';
  if (error instanceof TaskClosedError) return 'closed';
  if (error instanceof TaskFailedError) return 'failed';
  if (error instanceof TaskCancelledError) return 'cancelled';
  if (error instanceof TaskExpiredError || error instanceof TaskNotFoundError) return 'expired';
  if (error instanceof TaskDetachedError) return 'detached';
  return 'error';
}

/** The task span's attributes and status at its end. */
export function annotate(
  call: EndingCall,
  outcome: TaskOutcomeKind,
  error: unknown,
  reading: ErrorReading | undefined,
  metrics: TaskMetrics | undefined,
  result: CallToolResult | undefined,
): void {
  const span = call.span;
  span.setAttribute(TASK_ATTR.outcome, outcome);
  if (result !== undefined && call.kit.options.recordResults) call.recordResult(result);
  if (reading !== undefined) {
    span.setAttribute(ATTR.errorType, reading.type);
    if (reading.statusCode !== undefined) span.setAttribute(ATTR.statusCode, reading.statusCode);
    if (quotesServerText(call, error)) span.setStatus({ code: SpanStatusCode.ERROR });
    else span.setStatus({ code: SpanStatusCode.ERROR, message: scrubbed(reading.description, call.taskId) });
  }
  if (metrics !== undefined) {
    span.setAttributes({
      [TASK_ATTR.status]: metrics.status,
      [TASK_ATTR.polls]: metrics.polls,
      [TASK_ATTR.notifications]: metrics.notifications,
      [TASK_ATTR.retries]: metrics.retries,
    });
  }
}

/**
 * The error's message quotes the server's free text that the options keep off the span: a failed
 * task's message is the tool result's first text (recorded only with `recordResults`) or its
 * status message, and a cancelled task's ends with its status message (both recorded only with
 * `recordStatusMessages`). Such a span gets status ERROR and no description, as a request span
 * answered with a tool error does (request.ts). A JSON-RPC error's message stays: the conventions
 * make it the description.
 */
function quotesServerText(call: EndingCall, error: unknown): boolean {
  const { recordResults, recordStatusMessages } = call.kit.options;
  const saidSomething = (text: string | undefined): boolean => text !== undefined && text !== '';
  if (error instanceof TaskCancelledError) return !recordStatusMessages && saidSomething(error.statusMessage);
  if (!(error instanceof TaskFailedError) || error.rpcError !== undefined) return false;
  // The failed task's message is the first of these that says something (engine/failure.ts).
  const quotesResult = error.result?.content.some((block) => block.type === 'text' && saidSomething(block.text));
  if (quotesResult === true) return !recordResults;
  return !recordStatusMessages && saidSomething(error.statusMessage);
}

/** How the error the call ended with reads; a refused `tools/call` by the server's own message. */
export function readingOf(call: EndingCall, error: unknown): ErrorReading {
  const reading = readError(error);
  const refused = call.callError;
  if (
    error instanceof TaskRpcError &&
    error.kind === 'server' &&
    refused !== undefined &&
    refused.code === error.code
  ) {
    return { ...reading, description: refused.message };
  }
  return reading;
}
