/**
 * The 2026-07-28 `io.modelcontextprotocol/tasks` extension wire (SEP-2663), on a session port of
 * the modern era. The server decides which calls become tasks ([E2]); the client opts in per
 * request by declaring the extension in the request's `_meta` capabilities, rebuilt in full each
 * time ([E1]), on `tools/call` and on every `tasks/*` request, never at the `Client` level (the
 * SDK would reject the task results of the user's own calls). `tasks/get` carries the final payload and
 * the input requests ([E3]); `tasks/update` answers them ([E5]); `tasks/cancel` only acknowledges
 * ([E6]); there is no `tasks/result` or `tasks/list`, and no progress on tasks ([E10]). Over
 * Streamable HTTP the SDK v2 transport sets `Mcp-Name: <taskId>` from the request itself ([E8]).
 * Each request declares, of the input capabilities, those a callback answers for its call, and no
 * others ([E35]).
 */
import { TaskRpcError } from '../../errors.js';
import { PortError, type JsonObject, type ResultDecoder, type SessionPort, type Timers } from '../../port/port.js';
import { classifyRpc, fromServer, toWireError, withMeaning } from '../errors.js';
import { TASKS_EXTENSION, missingCapability, missingExtension } from '../extension.js';
import { tapSession } from '../session-taps.js';
import type {
  CancelReply,
  ErrorClass,
  InputAnswers,
  InputKind,
  StartReply,
  StartToolCall,
  TaskPayload,
  TaskPage,
  TaskWire,
  ToolPage,
  WireEvents,
  WireFeatures,
  WireRequestOptions,
  WireSnapshot,
} from '../wire.js';
import {
  TASK_FIELDS,
  decodeAck,
  decodeDetailedTask,
  decodeExtStart,
  decodeExtToolPage,
  decodeGetTask,
} from './decode.js';
import { malformed, omittedFields, withToolError } from '../decode.js';
import { ANSWERS_ELICITATION, ANSWERS_SAMPLING } from '../wire.js';
import { PortWire, callParams } from '../port-wire.js';
import { TaskSubscription } from './subscriptions.js';
import type { Sink } from '../../util/deliver.js';

/**
 * The per-request declarations, by {@link declarationIndex}: the extension ([E1]; settings are an
 * empty object today) or not, and the input capabilities, each declared only when a callback
 * answers that kind for the request ([E35]). An input capability declared is merged into the SDK
 * client's own (its elicitation modes, say), or declared empty when the SDK client has none (for
 * elicitation: form mode only); one not declared is set to `null`, which leaves the SDK client's
 * own out of the request's declaration. Constants, so that the port builds each envelope once.
 */
const DECLARATIONS: readonly JsonObject[] = [false, true].flatMap((extension) =>
  [0, 1, 2, 3].map((input) => ({
    ...(extension ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    elicitation: (input & ANSWERS_ELICITATION) === 0 ? null : {},
    sampling: (input & ANSWERS_SAMPLING) === 0 ? null : {},
  })),
);

/**
 * The index in {@link DECLARATIONS} of a request that declares the extension or not, answering
 * `input` (its bits, {@link ANSWERS_ELICITATION} and {@link ANSWERS_SAMPLING}, are the low two).
 */
function declarationIndex(extension: boolean, input: InputAnswers): number {
  return (extension ? 4 : 0) + input.answered();
}

/** What a client answers before it says what its callbacks answer: nothing. */
const ANSWERS_NOTHING: InputAnswers = { answered: () => 0 };

/** What some codes mean on this wire, for error messages (a missing extension: see {@link meaningOf}). */
const MEANINGS: Readonly<Record<number, string>> = {
  [-32022]: 'the server does not support this protocol version',
  [-32020]: "the server refused the request's HTTP headers and did not run it",
};

/**
 * What the server's error means on this wire, if it is one of the codes the extension gives a
 * meaning (a missing tasks extension, -32022, -32020): such an error is a protocol error.
 */
function meaningOf(error: TaskRpcError): string | undefined {
  // [E11]: -32021, or the drafts' -32003, when its data names the extension ([E29]: a -32003
  // without it is the server's own; a -32021 naming another capability is about that one).
  if (missingExtension(error.code, error.data)) {
    const draft = error.code === -32021 ? '' : " (the drafts' code for -32021)";
    return `the server says the request did not declare the io.modelcontextprotocol/tasks extension${draft}`;
  }
  return MEANINGS[error.code];
}

/** Both kinds of input, which a request may declare on this wire ({@link ExtensionWire.inputCapabilities}). */
const BOTH_KINDS: Readonly<Record<InputKind, boolean>> = Object.freeze({ elicitation: true, sampling: true });

/**
 * The status notification's name on 2025-11-25, which some extension servers still send (the C#
 * SDK's extension package): read like `notifications/tasks`, an accelerator as it is.
 */
const LEGACY_STATUS = 'notifications/tasks/status';

/** Task methods: a -32602 there means the server does not know the task ([E25]). */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** A {@link TaskWire} for the tasks extension. */
export class ExtensionWire extends PortWire implements TaskWire {
  readonly kind = 'io.modelcontextprotocol/tasks' as const;
  readonly statusNotification = 'notifications/tasks';
  private readonly subscription: TaskSubscription;
  /** The input the client answers for any call ({@link ExtensionWire.answerInput}). */
  private input: InputAnswers = ANSWERS_NOTHING;

  constructor(
    port: SessionPort,
    /** The server advertises the extension ([E20]: on the modern era only). */
    private readonly offered: boolean,
  ) {
    super(port);
    this.subscription = new TaskSubscription(port, () => DECLARATIONS[declarationIndex(true, this.input)]!);
  }

  features(): WireFeatures {
    const tasks = this.offered;
    return {
      tasks,
      tasksElsewhere: false,
      toolNegotiation: false,
      payloadFetch: false,
      inputViaPayload: false,
      inlineInput: true,
      cancel: tasks,
      cancelSnapshot: false,
      list: false,
      progress: false,
      requestTtl: false,
      ttlBackstop: true,
      sessionScoped: false,
    };
  }

  unsupportedReason(): string {
    return 'The server does not offer the io.modelcontextprotocol/tasks extension (capabilities.extensions)';
  }

  sessionId(): string | undefined {
    // The modern era is sessionless: a task id is all a resume needs.
    return undefined;
  }

  assume(): void {
    // Every modern request names its version and capabilities: nothing is left to assume.
  }

  override inputCapabilities(): Readonly<Record<InputKind, boolean>> {
    // [E35]: each request declares the input its call answers, whatever the SDK client declared
    // when it connected; a callback given for either kind is declared on its call's requests.
    return BOTH_KINDS;
  }

  answerInput(answers: InputAnswers): void {
    this.input = answers;
  }

  /** The declaration of a request that declares the extension or not, for the call `options` name ([E35]). */
  private declaration(extension: boolean, options: WireRequestOptions): JsonObject {
    return DECLARATIONS[declarationIndex(extension, options.input ?? this.input)]!;
  }

  classify(error: unknown): ErrorClass {
    if (fromServer(error)) {
      if (error.code === -32602 && TASK_METHODS.has(error.method)) return 'vanished';
      // [E33]: refused before dispatch; the tool's headers may have changed since it was listed.
      if (error.code === -32020 && error.method === 'tools/call') return 'headers';
      if (meaningOf(error) !== undefined) return 'protocol';
    }
    return classifyRpc(error);
  }

  private send<T>(
    method: string,
    params: JsonObject,
    decode: ResultDecoder<T>,
    options: WireRequestOptions,
    declare: boolean,
    taskId?: string,
  ): Promise<T> {
    // Every caller below builds `params` for this one request: the port may add the envelope to it.
    return this.port.request(
      method,
      params,
      decode,
      options,
      extensionError,
      taskId,
      this.declaration(declare, options),
      true,
    );
  }

  listTools(cursor: string | undefined, options: WireRequestOptions): Promise<ToolPage> {
    return this.send('tools/list', cursor === undefined ? {} : { cursor }, decodeExtToolPage, options, false);
  }

  startToolCall(call: StartToolCall, options: WireRequestOptions): Promise<StartReply> {
    return this.toolCall(call, options, undefined, undefined)!;
  }

  startToolCallInto<Token>(
    call: StartToolCall,
    options: WireRequestOptions,
    sink: Sink<StartReply, Token>,
    token: Token,
  ): void {
    void this.toolCall(call, options, sink, token);
  }

  /** Sends a `tools/call`: its reply a promise's, or `sink`'s with `token` when there is a sink. */
  private toolCall<Token>(
    call: StartToolCall,
    options: WireRequestOptions,
    sink: Sink<StartReply, Token> | undefined,
    token: Token,
  ): Promise<StartReply> | undefined {
    // [E1], [E2]: opt in only when a task is wanted and the server offers the extension.
    const optIn = call.task !== undefined && this.offered;
    const params = callParams(call);
    // [E17]: a retry carries the answers and the opaque state, unchanged.
    if (call.inputResponses !== undefined) params.inputResponses = call.inputResponses;
    if (call.requestState !== undefined) params.requestState = call.requestState;
    // [E32]: the headers ride in the request's options (a copy only for a call that has some).
    const sent = call.headers === undefined ? options : { ...options, headers: call.headers };
    const decode = optIn ? decodeTaskStart : decodePlainStart;
    if (sink === undefined) return this.send('tools/call', params, decode, sent, optIn);
    // As `send` sends it.
    const declare = this.declaration(optIn, options);
    this.port.requestInto(sink, token, 'tools/call', params, decode, sent, extensionError, undefined, declare, true);
    return undefined;
  }

  getTask(taskId: string, options: WireRequestOptions): Promise<WireSnapshot> {
    return this.send('tasks/get', { taskId }, decodeTaskReply, options, true, taskId);
  }

  readTask<Token>(taskId: string, options: WireRequestOptions, sink: Sink<WireSnapshot, Token>, token: Token): void {
    // As `send` sends it: the envelope may go onto these params, made for this one request.
    this.port.requestInto(
      sink,
      token,
      'tasks/get',
      { taskId },
      decodeTaskReply,
      options,
      extensionError,
      taskId,
      this.declaration(true, options),
      true,
    );
  }

  getPayload(): Promise<TaskPayload> {
    return Promise.reject(new TypeError('The tasks extension carries the final payload on tasks/get'));
  }

  async cancelTask(taskId: string, options: WireRequestOptions): Promise<CancelReply> {
    // [E6]: an acknowledgement only; the task stops when it can, or ends some other way.
    await this.send(
      'tasks/cancel',
      { taskId },
      (value) => decodeAck(value, 'tasks/cancel', taskId),
      options,
      true,
      taskId,
    );
    return { kind: 'ack' };
  }

  async supplyInput(taskId: string, responses: Record<string, JsonObject>, options: WireRequestOptions): Promise<void> {
    // [E5]: answers by key, partial sets allowed; acknowledged, applied eventually.
    await this.send(
      'tasks/update',
      { taskId, inputResponses: responses },
      (value) => decodeAck(value, 'tasks/update', taskId),
      options,
      true,
      taskId,
    );
  }

  listTasks(): Promise<TaskPage> {
    return Promise.reject(new TypeError('The tasks extension has no tasks/list'));
  }

  watch(taskId: string, timers: Timers): void {
    if (this.offered) this.subscription.watch(taskId, timers);
  }

  unwatch(taskId: string): void {
    if (this.offered) this.subscription.unwatch(taskId);
  }

  subscribe(events: WireEvents): () => void {
    // A subscription is named by its listen request's id ([E18]): only those the library opened
    // are its own. The host's own `client.listen()` (tool-list changes, its own task ids) gets
    // its acknowledgement and notifications untouched.
    const status = (method: string) => (params: JsonObject) => {
      const subscription = subscriptionOf(params);
      const tagged = subscription !== undefined;
      if (tagged && !this.port.sentRequest(subscription)) return false;
      try {
        const snapshot = decodeDetailedTask(params, method, true);
        const omitted = omittedFields(params, TASK_FIELDS);
        events.status(omitted === 0 ? snapshot : { ...snapshot, omitted });
      } catch (error) {
        events.malformed(error as Error);
      }
      // An untagged one (a server that does not name the subscription) is read, and passed on
      // too: it may answer the host's own subscription.
      return tagged;
    };
    const own = [
      this.port.onNotification('notifications/tasks', status('notifications/tasks')),
      // The C# SDK's extension names its status notification as 2025-11-25 did (D24); read alike.
      this.port.onNotification(LEGACY_STATUS, status(LEGACY_STATUS)),
      // The acknowledgement says which tasks the server agreed to; polling covers the rest. Every
      // one of the library's own is consumed, but only the current subscription's ends the one
      // it replaced ([E18]: an acknowledgement names its subscription).
      this.port.onNotification('notifications/subscriptions/acknowledged', (params) => {
        const subscription = subscriptionOf(params);
        if (!this.port.sentRequest(subscription)) return false;
        this.subscription.acknowledged(subscription);
        return true;
      }),
    ];
    // Progress only while the tools/call is open; tasks themselves get none ([E10]).
    return tapSession(this.port, events, own);
  }

  serveInput(): () => void {
    // The modern era has no server-to-client requests: input rides on tasks/get ([E3]).
    return () => {};
  }
}

/** Where a subscription's messages carry its id (the listen request's JSON-RPC id). */
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** The subscription a notification belongs to, if it names one. */
function subscriptionOf(params: JsonObject): unknown {
  const meta = params._meta;
  return typeof meta === 'object' && meta !== null ? (meta as JsonObject)[SUBSCRIPTION_ID] : undefined;
}

/** Decodes the answer to a `tools/call` that declared the extension (one decoder for every call: no closure per call). */
const decodeTaskStart = withToolError((value: unknown): StartReply => decodeExtStart(value, true));

/** Decodes the answer to a `tools/call` that did not declare the extension. */
const decodePlainStart = withToolError((value: unknown): StartReply => decodeExtStart(value, false));

/**
 * Decodes the `tasks/get` reply for `taskId`: one about another task is malformed, never adopted.
 * A final result carried inline with `isError` ([E3]) is told to the request's watcher.
 */
const decodeTaskReply = withToolError((value: unknown, taskId: string | undefined): WireSnapshot => {
  const snapshot = decodeGetTask(value);
  if (snapshot.task.taskId === taskId) return snapshot;
  throw malformed('tasks/get', 'the reply names another task', taskId);
});

/** The library's error for a failed request on this wire (see {@link toWireError}), its code explained. */
function extensionError(method: string, error: PortError, taskId: string | undefined): Error {
  return explain(toWireError(method, error, taskId));
}

/** Adds what a code means on this wire to the error's message. */
function explain<E extends Error>(error: E): E {
  if (error instanceof TaskRpcError) {
    // [E11]: a -32021 about another capability (elicitation, say) is an ordinary server error,
    // whose message says which capability the server requires.
    const meaning =
      error.cause instanceof PortError && error.cause.kind === 'server'
        ? (meaningOf(error) ?? missingCapability(error.code, error.data))
        : undefined;
    if (meaning !== undefined) return withMeaning(error, meaning) as unknown as E;
  }
  return error;
}
