/**
 * The internal entry point (`mcp-task-client/internal`): the seam under the public API, for the
 * project's own wire contract tests and benchmarks, and for those who write a wire of their own.
 * Nothing here is covered by semver; the public entry point is `mcp-task-client`.
 */
export { openPort, unusable } from './port/open.js';
export { connectClient, type ConnectSpec } from './port/connect.js';
export {
  PortError,
  type Era,
  type InboundRequest,
  type NotificationTap,
  type PortErrorKind,
  type PortRequestOptions,
  type RequestTap,
  type SdkMajor,
  type ServerIdentity,
  type SessionPort,
  type Timers,
} from './port/port.js';
export { resolveWire, offersExtension, TASKS_EXTENSION } from './wire/resolve.js';
export { OMITTED } from './wire/wire.js';
export { Wire2025 } from './wire/v2025/wire.js';
export type {
  CancelReply,
  ErrorClass,
  InlineInput,
  InputAnswers,
  InputHandler,
  InputKind,
  InputRequest,
  StartReply,
  StartToolCall,
  TaskPayload,
  TaskPage,
  TaskSupport,
  TaskWire,
  ToolPage,
  WireEvents,
  WireFeatures,
  WireProgress,
  WireRequestOptions,
  WireSnapshot,
} from './wire/wire.js';
export type { WireKind } from './api/index.js';
export { Scheduler, systemClock } from './util/scheduler.js';
