/**
 * The names the OpenTelemetry integration records under. Those of the OpenTelemetry semantic
 * conventions for MCP (GenAI conventions, status Development) are used as they are written there;
 * the conventions say nothing of tasks, so the `mcp.task.*` attributes, the span events and the
 * task metrics are this library's own choices (listed in docs/observability.md).
 */

/** Attributes of the MCP conventions and of the general registry they use. */
export const ATTR = {
  method: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  toolName: 'gen_ai.tool.name',
  operation: 'gen_ai.operation.name',
  arguments: 'gen_ai.tool.call.arguments',
  result: 'gen_ai.tool.call.result',
  requestId: 'jsonrpc.request.id',
  statusCode: 'rpc.response.status_code',
  errorType: 'error.type',
  transport: 'network.transport',
  protocolName: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  clientAddress: 'client.address',
  clientPort: 'client.port',
} as const;

/** This library's attributes for what the conventions leave out (tasks). */
export const TASK_ATTR = {
  /** The task id: only with `recordTaskIds` (task ids are bearer secrets). */
  id: 'mcp.task.id',
  /** A task's status (`working`, `input_required`, …): the latest, on a status event; the last, on the task span. */
  status: 'mcp.task.status',
  /** The status message of a status event (task id replaced by its fingerprint). */
  statusMessage: 'mcp.task.status_message',
  /** How the task ended for this client (`completed`, `failed`, `cancelled`, `timeout`, …). */
  outcome: 'mcp.task.outcome',
  /** The task wire (`2025-11-25`, `io.modelcontextprotocol/tasks`). */
  wire: 'mcp.task.wire',
  /** `true` on the span and task metrics of a task observed through `TaskClient.resume`. */
  resumed: 'mcp.task.resumed',
  /** Counters of the task at its end. */
  polls: 'mcp.task.polls',
  notifications: 'mcp.task.notifications',
  retries: 'mcp.task.retries',
  /** Progress of a progress event. */
  progress: 'mcp.task.progress',
  progressTotal: 'mcp.task.progress_total',
  /** Milliseconds left before the ttl runs out, on an expiring event. */
  expiresInMs: 'mcp.task.expires_in_ms',
  /** The elicitation answer's `action` (`accept`, `decline`, `cancel`), on an input response. */
  inputAction: 'mcp.task.input_action',
  /** How an input request ended: `answered`, `failed`, `abandoned`; `detached` when its task was detached while it was open. */
  inputOutcome: 'mcp.task.input_outcome',
} as const;

/** Span events on a task's span (and on a request's, for `mcp.request.abandoned`). */
export const EVENT = {
  status: 'mcp.task.status',
  inputRequest: 'mcp.task.input.request',
  inputResponse: 'mcp.task.input.response',
  progress: 'mcp.task.progress',
  expiring: 'mcp.task.expiring',
  retry: 'mcp.task.retry',
  connectionLost: 'mcp.connection.lost',
  connectionRestored: 'mcp.connection.restored',
  /** A request recorded as an event of the task's span (`requests: 'events'`). */
  request: 'mcp.request',
  /** The library stopped waiting for a request (its task ended another way). */
  abandoned: 'mcp.request.abandoned',
} as const;

/** The metrics. */
export const METRIC = {
  /** MCP conventions: each request, from sent to answered, in seconds. */
  operationDuration: 'mcp.client.operation.duration',
  /** MCP conventions: each request of the server's this client answers (input), from received to answered, in seconds. */
  serverOperationDuration: 'mcp.server.operation.duration',
  /** Each task (or plain call), from `callToolAsTask` to settlement, in seconds. */
  taskDuration: 'mcp.client.task.duration',
  /** Tasks being tracked. */
  tasksActive: 'mcp.client.task.active',
  /** `tasks/get` requests per task, at its end. */
  taskPolls: 'mcp.client.task.polls',
  /** Status notifications per task, at its end. */
  taskNotifications: 'mcp.client.task.notifications',
  /** Retried requests per task, at its end. */
  taskRetries: 'mcp.client.task.retries',
} as const;

/**
 * The bucket boundaries the MCP conventions give for their duration histograms, in seconds: those
 * of `mcp.client.operation.duration`, and of `mcp.server.operation.duration` alike.
 */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/**
 * The bucket boundaries of `mcp.client.task.duration`, in seconds: the conventions' up to 5 minutes,
 * then 10 and 30 minutes, 1, 2, 4 and 12 hours and a day, since a task may run for hours (with the
 * per-request ones alone, every task longer than 5 minutes falls in the last bucket).
 */
export const TASK_DURATION_BUCKETS = [...DURATION_BUCKETS, 600, 1800, 3600, 7200, 14400, 43200, 86400];

/**
 * The name of a call's task span (with the tool after a space, when known): the span of the call
 * and of its task's life, above the call's `tools/call {tool}` request span. The conventions'
 * `tools/call` client span covers its request until the answer ("the time to receive the response",
 * spans.yaml, `mcp.client` note), which for a task-augmented call is the CreateTaskResult; they say
 * nothing of tasks, so the span of the task's life, and its name, are this library's.
 */
export const TASK_SPAN = 'mcp.task';

/** The instrumentation scope name of the tracer and the meter. */
export const SCOPE = 'mcp-task-client';
