/**
 * `mcp-task-client/bullmq`: MCP tool calls as durable jobs on BullMQ and Redis. A producer
 * enqueues "call tool X on server Y"; workers call it as a task, store the task's reference in
 * the job before they wait, and return the tool's result as the job's return value. A worker that
 * dies mid-task leaves a job that another worker resumes, instead of calling the tool again.
 * Questions the task asks wait on the job until any process answers them; cancelling the job
 * cancels the task. See docs/durable.md.
 *
 * The tasks extension asks clients to keep their task ids to resume after a crash ([E21]); the
 * 2025-11-25 wire has `tasks/list`, but a session-scoped server lists only the session's tasks:
 * either way the job is where the reference is kept.
 *
 * Needs `bullmq` (an optional peer dependency of this package) and a Redis driver it supports.
 */
export {
  taskProcessor,
  type TaskProcessorOptions,
  type ToolProcessor,
  type TransientRetryOptions,
} from './processor.js';
export type { ConnectContext, ConnectServer } from './pool.js';
export type { ToolQueue } from './control.js';
export {
  answerJobInput,
  cancelToolJob,
  enqueueToolTask,
  pendingQuestions,
  type AnswerOptions,
  type ToolJob,
  type ToolJobOptions,
} from './producer.js';
export type { PendingQuestion, ToolJobData, ToolJobEvent, ToolJobProgress, ToolJobRequest } from './types.js';
