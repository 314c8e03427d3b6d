/**
 * The public types of the library, in one place to import from: options, handle, references,
 * input callbacks, events, logging and the receiver role. Declarations only, each kept in the
 * api-*.ts module of its concern; the classes that implement them (`TaskClient`, `TaskHandleOf`,
 * the errors) live beside their code.
 */
export type {
  CallToolAsTaskOptions,
  CloseOptions,
  ResumeOptions,
  RetryOptions,
  TaskClientConnectOptions,
  TaskClientOptions,
  ToolTaskSupport,
} from './api-client.js';
export type {
  CompletedMetrics,
  ReceiverResult,
  TaskClientEvents,
  TaskHandleEvents,
  TaskMetrics,
  TaskOutcomeKind,
  TaskProgress,
  TaskRole,
  UnattributedInput,
  UnattributedReason,
} from './api-events.js';
export type { HandleKind, ResultOptions, TaskHandle, TaskHandleApi, TaskReference, UpdatesOptions } from './api-handle.js';
export type {
  ElicitationCallback,
  InputCallbacks,
  InputContext,
  InputDelivery,
  ProgressCallback,
  ProgressContext,
  SamplingCallback,
} from './api-input.js';
export type { ConsoleLoggerOptions, LogEntry, LogLevel, TaskLogger } from './api-logging.js';
export type { ReceiverHandle, ServeOptions } from './api-receiver.js';
