/**
 * What the server sends a probed session beside its replies, as the doctor records it: the status
 * notifications of its tasks and the server's questions, and the doctor's answer to a question.
 * The session that listens for them is session.ts.
 */
import type { JsonObject } from '../port/port.js';

/** A status notification the server sent for one of the doctor's tasks. */
export interface Note {
  readonly taskId: string;
  readonly status: string | undefined;
  readonly at: number;
  readonly params: JsonObject;
  /** It came before the task's `CreateTaskResult` (2025-11-25), and was held until the task was known. */
  readonly early?: boolean | undefined;
}

/** An input request (a question) the server sent, on either wire. */
export interface Question {
  readonly method: string;
  /** The task it names (2025: related-task `_meta`; extension: the task whose `inputRequests` held it). */
  readonly taskId: string | undefined;
  /** The `inputRequests` key (extension). */
  readonly key: string | undefined;
  readonly at: number;
  answeredAt: number | undefined;
  /** The server withdrew it (`notifications/cancelled`) before it was answered. */
  withdrawn: boolean;
  /** The status of its task (of the doctor's running tasks, for an untagged one) when it came (2025). */
  statusAtAsk: readonly string[];
}

/** The doctor's answer to a question: a declined elicitation, or a fixed text for sampling. */
export function answerFor(method: string): JsonObject {
  if (method === 'sampling/createMessage') {
    return {
      role: 'assistant',
      content: { type: 'text', text: 'mcp-task doctor: no model here' },
      model: 'mcp-task-doctor',
      stopReason: 'endTurn',
    };
  }
  if (method === 'roots/list') return { roots: [] };
  return { action: 'decline' };
}
