/**
 * mcp-task-client: long-running MCP tool calls made easy and safe, on either task wire (MCP
 * 2025-11-25 tasks and the 2026 `io.modelcontextprotocol/tasks` extension) and either SDK major.
 * Everything public is exported from here; `mcp-task-client/internal` holds the seam underneath.
 */
export { TaskClient } from './facade/client.js';
export { TaskHandle, TaskHandleOf } from './facade/handle.js';
export type {
  CallToolAsTaskOptions,
  CloseOptions,
  ConsoleLoggerOptions,
  ElicitationCallback,
  HandleKind,
  InputCallbacks,
  InputContext,
  InputDelivery,
  LogEntry,
  LogLevel,
  ProgressCallback,
  ProgressContext,
  ResultOptions,
  ResumeOptions,
  RetryOptions,
  SamplingCallback,
  TaskClientConnectOptions,
  TaskClientEvents,
  TaskClientOptions,
  TaskHandleApi,
  TaskHandleEvents,
  TaskLogger,
  TaskMetrics,
  TaskOutcomeKind,
  TaskProgress,
  TaskReference,
  UpdatesOptions,
} from './facade/api.js';
export { consoleLogger } from './facade/logger.js';
export type { RetryPolicy } from './engine/timing.js';
export type { WireKind } from './wire/wire.js';
export {
  isTerminalStatus,
  type AudioContent,
  type CallToolResult,
  type Clock,
  type ContentBlock,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitRequestParams,
  type ElicitResult,
  type EmbeddedResource,
  type ImageContent,
  type JsonObject,
  type JsonRpcErrorInfo,
  type McpClient,
  type McpTransport,
  type ResourceLink,
  type SamplingContent,
  type SamplingMessage,
  type Task,
  type TaskStatus,
  type TerminalTaskStatus,
  type TextContent,
  type ToolResultContent,
  type ToolUseContent,
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
