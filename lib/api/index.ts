/**
 * The public types of the library, in one place to import from: options, handle, references,
 * input callbacks, events, logging, retrying, the wire kind, the receiver role and the
 * instrumentation hook. This folder is
 * a floor under every layer: declarations only, each in the module of its concern, importing
 * nothing of the library but types (of lib/types.ts and lib/errors.ts). The engine, the wires,
 * the receiver and the facade take their public types from here; the code that implements them
 * (`TaskClient`, the handle, the errors) lives in its layer.
 */
export type {
  CallToolAsTaskOptions,
  CloseOptions,
  ResumeOptions,
  TaskClientConnectOptions,
  TaskClientOptions,
  ToolTaskSupport,
} from './client.js';
export type { RetryOptions, RetryPolicy } from './retry.js';
export type { WireKind } from './wire.js';
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
} from './events.js';
export type { HandleKind, ResultOptions, TaskHandle, TaskReference, UpdatesOptions } from './handle.js';
export type {
  ElicitationCallback,
  InputCallbacks,
  InputContext,
  InputDelivery,
  ProgressCallback,
  ProgressContext,
  SamplingCallback,
} from './input.js';
export type { ConsoleLoggerOptions, LogEntry, LogLevel, TaskLogger } from './logging.js';
export type { ReceiverHandle, ServeOptions, TaskReceiver } from './receiver.js';
export type {
  CallInstrument,
  ClientInstrument,
  InputInstrument,
  InputOutcome,
  InstrumentedCall,
  InstrumentedClient,
  InstrumentedConnection,
  InstrumentedInput,
  InstrumentedList,
  InstrumentedResume,
  NotificationInstrument,
  OutgoingNotification,
  OutgoingRequest,
  RequestFailure,
  RequestInstrument,
  RequestResult,
  TaskInstrumentation,
} from './instrumentation.js';
