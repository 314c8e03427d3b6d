/**
 * The MCP 2025-11-25 tasks wire, on a session port: `tools/call` with `params.task`,
 * `tasks/get|result|list|cancel`, `notifications/tasks/status`, progress for a task's whole life
 * ([R35]) and input as side-channel requests tagged with the task ([V7]). It runs unchanged over
 * SDK v1 and SDK v2 (legacy era): every request goes out through the port's raw dispatch with an
 * explicit decoder. Requests carry clean params: no `task` on polls and only `{ttl}` in `task`
 * ([S2], [S3]).
 */
import { TaskNotSupportedError, TaskRpcError, type TaskProtocolError } from '../../errors.js';
import type { JsonObject, PortError, ResultDecoder, SessionPort } from '../../port/port.js';
import {
  type CancelReply,
  type ErrorClass,
  type InputHandler,
  type InputRefusal,
  type StartReply,
  type StartToolCall,
  type TaskPayload,
  type TaskPage,
  type TaskWire,
  type ToolPage,
  type WireEvents,
  type WireFeatures,
  type WireRequestOptions,
  type WireSnapshot,
} from '../wire.js';
import { classifyRpc, fromServer, stripPrefix, toWireError, withMeaning } from '../errors.js';
import { missingCapability, missingExtension } from '../extension.js';
import { tapSession } from '../session-taps.js';
import { TASK_FIELDS, decodeStart, decodeTask, decodeTaskPage, decodeTaskPayload, decodeToolPage } from './decode.js';
import { malformed, omittedFields, withToolError } from '../decode.js';
import { PortWire, callParams } from '../port-wire.js';
import { serveSideChannelInput } from './input.js';
import { isObject } from '../../util/json.js';
import type { Sink } from '../../util/deliver.js';
import { rpcError } from '../../util/rpc-error.js';

const INVALID_PARAMS = -32602;

/**
 * The codes that say a task is unknown on the methods about one task: -32602 ([V26]), and MCP's
 * "resource not found", -32002, which Rust servers (rmcp) answer for an unknown task (D19).
 */
const UNKNOWN_TASK_CODES: ReadonlySet<number> = new Set([INVALID_PARAMS, -32002]);

/** Methods about one task: a code of {@link UNKNOWN_TASK_CODES} there means the server does not know it. */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/cancel']);

/** A {@link TaskWire} for protocol revision 2025-11-25. */
export class Wire2025 extends PortWire implements TaskWire {
  readonly kind = '2025-11-25' as const;
  readonly statusNotification = 'notifications/tasks/status';
  private assumed: Readonly<Partial<Record<'cancel' | 'list' | 'toolsCall', boolean>>> = {};

  constructor(
    port: SessionPort,
    /** Why tasks are unavailable, when the server offers them only in a form this session cannot use. */
    private readonly unavailable?: string,
  ) {
    super(port);
  }

  features(): WireFeatures {
    const caps = this.port.serverCapabilities();
    const tasks = isObject(caps?.tasks) ? caps.tasks : undefined;
    const requests = isObject(tasks?.requests) ? tasks.requests : undefined;
    const tools = isObject(requests?.tools) ? requests.tools : undefined;
    // A session that skipped the handshake (a resumed HTTP session) knows no capabilities: a
    // resume reference tells them, and without one the server is taken to support tasks (it
    // holds the task being resumed; a method it lacks answers -32601).
    const known = caps !== undefined;
    const toolsCall = known ? tools?.call !== undefined : this.assumed.toolsCall !== false;
    return {
      tasks: this.unavailable === undefined && toolsCall,
      tasksElsewhere: this.unavailable !== undefined,
      toolNegotiation: true,
      payloadFetch: true,
      inputViaPayload: true,
      inlineInput: false,
      cancel: known ? tasks?.cancel !== undefined : this.assumed.cancel !== false,
      cancelSnapshot: true,
      list: known ? tasks?.list !== undefined : this.assumed.list !== false,
      progress: true,
      requestTtl: true,
      ttlBackstop: false,
      sessionScoped: true,
    };
  }

  unsupportedReason(): string {
    return (
      this.unavailable ??
      'The server does not support task-augmented tools/call (no tasks.requests.tools.call capability)'
    );
  }

  sessionId(): string | undefined {
    return this.port.sessionId();
  }

  assume(capabilities: Readonly<Partial<Record<'cancel' | 'list' | 'toolsCall', boolean>>>): void {
    this.assumed = { ...this.assumed, ...capabilities };
  }

  classify(error: unknown): ErrorClass {
    if (fromServer(error)) {
      if (UNKNOWN_TASK_CODES.has(error.code) && TASK_METHODS.has(error.method)) return 'vanished';
      // [A1], [V3]: -32600 and -32601 to a task-augmented tools/call refuse task mode for the tool.
      if ((error.code === -32600 || error.code === -32601) && error.method === 'tools/call') return 'refused';
    }
    return classifyRpc(error);
  }

  private send<T>(
    method: string,
    params: JsonObject | undefined,
    decode: ResultDecoder<T>,
    options: WireRequestOptions,
    taskId?: string,
  ): Promise<T> {
    return this.port.request(method, params, decode, options, wireError, taskId);
  }

  listTools(cursor: string | undefined, options: WireRequestOptions): Promise<ToolPage> {
    return this.send('tools/list', cursor === undefined ? undefined : { cursor }, decodeToolPage, options);
  }

  startToolCall(call: StartToolCall, options: WireRequestOptions): Promise<StartReply> {
    const decode = call.task !== undefined ? decodeTaskStart : decodePlainStart;
    return this.port.request('tools/call', toolCallParams(call), decode, options, this.toolCallError, call.name);
  }

  startToolCallInto<Token>(
    call: StartToolCall,
    options: WireRequestOptions,
    sink: Sink<StartReply, Token>,
    token: Token,
  ): void {
    const decode = call.task !== undefined ? decodeTaskStart : decodePlainStart;
    this.port.requestInto(
      sink,
      token,
      'tools/call',
      toolCallParams(call),
      decode,
      options,
      this.toolCallError,
      call.name,
    );
  }

  /**
   * The library's error for a failed `tools/call` (its context is the tool's name). [E20]: a server
   * that offers tasks only through the extension may refuse a plain call of a tool it runs only as
   * a task (-32021, or the drafts' -32003, naming the extension in its data, [E11]): say what would
   * fix it. A -32021 naming another capability is not that.
   */
  private readonly toolCallError = (method: string, error: PortError, toolName: string | undefined): unknown => {
    const wired = wireError(method, error, undefined);
    const unavailable = this.unavailable;
    if (unavailable === undefined || !fromServer(wired) || !missingExtension(wired.code, wired.data)) return wired;
    return new TaskNotSupportedError(
      `The server runs "${toolName}" only as a task (${wired.code}: ${wired.message}). ${unavailable}`,
      { feature: 'tasks', toolName, cause: wired },
    );
  };

  getTask(taskId: string, options: WireRequestOptions): Promise<WireSnapshot> {
    return this.send('tasks/get', { taskId }, decodeGetReply, options, taskId);
  }

  readTask<Token>(taskId: string, options: WireRequestOptions, sink: Sink<WireSnapshot, Token>, token: Token): void {
    this.port.requestInto(sink, token, 'tasks/get', { taskId }, decodeGetReply, options, wireError, taskId);
  }

  getPayload(taskId: string, options: WireRequestOptions): Promise<TaskPayload> {
    return this.send('tasks/result', { taskId }, decodePayloadReply, options, taskId).then(undefined, payloadOfError);
  }

  async cancelTask(taskId: string, options: WireRequestOptions): Promise<CancelReply> {
    const task = await this.send(
      'tasks/cancel',
      { taskId },
      (value) => sameTask(decodeTask(value, 'tasks/cancel'), taskId, 'tasks/cancel'),
      options,
      taskId,
    );
    return { kind: 'snapshot', snapshot: { task } };
  }

  supplyInput(): Promise<void> {
    return Promise.reject(new TypeError('The 2025-11-25 wire takes input through side-channel requests'));
  }

  listTasks(
    cursor: string | undefined,
    options: WireRequestOptions,
    onSkip: (error: TaskProtocolError) => void = () => {},
  ): Promise<TaskPage> {
    return this.send(
      'tasks/list',
      cursor === undefined ? undefined : { cursor },
      (value) => decodeTaskPage(value, onSkip),
      options,
    );
  }

  watch(): void {
    // Status notifications come unasked on this wire ([V21]): nothing to subscribe to.
  }

  unwatch(): void {}

  serveInput(
    handler: InputHandler,
    owns: (taskId: string) => boolean,
    refused?: (refusal: InputRefusal) => void,
  ): () => void {
    return serveSideChannelInput(this.port, handler, owns, refused);
  }

  answerInput(): void {
    // The client's capabilities were declared once, when it connected: nothing is declared per request.
  }

  subscribe(events: WireEvents): () => void {
    const own = [
      this.port.onNotification('notifications/tasks/status', (params) => {
        try {
          const task = decodeTask(params, 'notifications/tasks/status');
          const omitted = omittedFields(params, TASK_FIELDS);
          events.status(omitted === 0 ? { task } : { task, omitted });
        } catch (error) {
          events.malformed(error as Error);
        }
      }),
    ];
    return tapSession(this.port, events, own);
  }
}

/**
 * Decodes the answer to a `tools/call` that asked for a task (one decoder for every call: no
 * closure per call); an `isError` plain result is told to the request's watcher.
 */
const decodeTaskStart = withToolError((value: unknown): StartReply => decodeStart(value, true));

/** Decodes the answer to a plain `tools/call`. */
const decodePlainStart = withToolError((value: unknown): StartReply => decodeStart(value, false));

/** Decodes the `tasks/result` payload for `taskId`; an `isError` payload is told to the request's watcher. */
const decodePayloadReply = withToolError((value: unknown, taskId: string | undefined): TaskPayload => {
  const payload = decodeTaskPayload(value, taskId!);
  return { kind: 'result', result: payload.result, tagged: payload.tagged };
});

/** Decodes the `tasks/get` reply for `taskId` (see {@link sameTask}). */
function decodeGetReply(value: unknown, taskId: string | undefined): WireSnapshot {
  return { task: sameTask(decodeTask(value, 'tasks/get'), taskId, 'tasks/get') };
}

/** A reply about another task than the one asked for is malformed, never adopted. */
function sameTask<T extends { taskId: string }>(task: T, taskId: string | undefined, method: string): T {
  if (task.taskId === taskId) return task;
  throw malformed(method, 'the reply names another task', taskId);
}

/**
 * What a failed `tasks/result` means. [V17]/[V18]: a JSON-RPC error the server sent is the task's
 * own error; local failures stay errors. -32602 (or -32002, D19) may also say that the task is unknown ([V26]),
 * which only the engine can tell (it knows whether the task was seen failed): no second read here,
 * whose own failure would otherwise decide the fate of a task already known.
 */
function payloadOfError(error: unknown): TaskPayload {
  if (!fromServer(error)) throw error;
  const { code, message, data } = error.cause;
  const info = rpcError(code, stripPrefix(message, code), data);
  return UNKNOWN_TASK_CODES.has(code) ? { kind: 'error', error: info, gone: error } : { kind: 'error', error: info };
}

/**
 * The params of a `tools/call`: [S3], only `{ttl}` in `task`, never the SDK's extra pollInterval.
 * The schema's ttl is an integer (servers with typed fields, such as mcp-go's int64, refuse the
 * whole call otherwise): a fraction of a millisecond is rounded up.
 */
function toolCallParams(call: StartToolCall): JsonObject {
  const ttl = call.task?.ttl;
  return callParams(call, call.task === undefined ? undefined : ttl === undefined ? {} : { ttl: Math.ceil(ttl) });
}

/**
 * The library's error for a failed request on this wire (see {@link toWireError}); a -32021 that
 * is not about the tasks extension says which client capability the server requires ([E11]).
 */
function wireError(method: string, error: PortError, taskId: string | undefined): Error {
  const wired = toWireError(method, error, taskId);
  if (!(wired instanceof TaskRpcError) || error.kind !== 'server') return wired;
  const meaning = missingCapability(wired.code, wired.data);
  return meaning === undefined ? wired : withMeaning(wired, meaning);
}
