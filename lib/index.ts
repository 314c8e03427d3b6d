/**
 * mcp-task-client: long-running MCP tool calls (MCP 2025-11-25 tasks) made easy and safe.
 * Everything public is exported from here.
 */
export { TaskClient } from './facade/client.js';
export { TaskHandle, TaskHandleOf, type HandleKind, type ResultOptions, type UpdatesOptions } from './facade/handle.js';
export type { ResumeOptions, TaskReference } from './facade/reference.js';
export type {
  CallToolAsTaskOptions,
  CloseOptions,
  ProgressCallback,
  ProgressContext,
  RetryOptions,
  TaskClientConnectOptions,
  TaskClientOptions,
} from './facade/options.js';
export type { RetryPolicy } from './engine/timing.js';
export {
  consoleLogger,
  type ConsoleLoggerOptions,
  type LogEntry,
  type LogLevel,
  type TaskLogger,
} from './facade/logger.js';
export type {
  ElicitationCallback,
  InputCallbacks,
  InputContext,
  SamplingCallback,
} from './facade/input.js';
export type {
  TaskClientEvents,
  TaskHandleEvents,
  TaskMetrics,
  TaskOutcomeKind,
  TaskProgress,
} from './facade/events.js';
export {
  isTerminalStatus,
  type CallToolResult,
  type Clock,
  type JsonRpcErrorInfo,
  type Task,
  type TaskStatus,
  type TerminalTaskStatus,
} from './types.js';
export {
  TaskAbortError,
  TaskCancelledError,
  TaskClosedError,
  TaskDetachedError,
  TaskError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskProtocolError,
  TaskQueueFullError,
  TaskRpcError,
  TaskTimeoutError,
  isTaskError,
  type RemoteCancelOutcome,
  type TaskErrorOptions,
} from './errors.js';
