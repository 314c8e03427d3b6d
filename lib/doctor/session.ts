/**
 * One session the doctor probes, on the library's session port: raw requests with the doctor's
 * own bounds (every reply kept as sent, errors by JSON-RPC code), the status notifications and
 * input requests the server sends, and the blocking `tasks/result` requests it holds open.
 *
 * The doctor talks to the server through the same port as the library ([R27] holds: a request
 * given up while open is cancelled with `notifications/cancelled`, an answered one is not; [R24]
 * too: a call that may create a task is never cancelled that way, see {@link Session.call}), but
 * without a wire: it needs to see what the server sends, not what the library makes of it.
 */
import { paramHeaders, scanParamHeaders, type ParamHeader } from '../port/param-headers.js';
import { localCode, type InboundRequest, type JsonObject, type SessionPort } from '../port/port.js';
import { relatedTaskId, RELATED_TASK_KEY } from '../wire/v2025/decode.js';
import type { RunBound } from './deadline.js';
import { cut, isObject, withoutIds } from './shape.js';
import type { TaskLedger } from './tasks.js';
import type { DoctorWire } from './types.js';
import { answerFor, type Note, type Question } from './inbound.js';
import { LateTasks } from './late.js';
import { EarlyNotes } from './early-notes.js';
import { stoppableSleep, TIMERS } from './timers.js';
import {
  DECLARE,
  failedReply,
  identity,
  ProbeStopped,
  type CallOptions,
  type OpenResult,
  type Reply,
  type Timing,
} from './reply.js';
import { openListen, type Listen } from './listen.js';

/** The doctor's bounds and waits, resolved. */
export interface Settings {
  readonly probeTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly expiryBudgetMs: number;
  readonly noAnswerMs: number;
  readonly retentionCheckMs: number;
  /** The run's deadline (`timeoutMs`), if any. */
  readonly deadline?: RunBound | undefined;
}

/** One probed session. */
export class Session {
  readonly notes: Note[] = [];
  readonly questions: Question[] = [];
  /** `answer`: questions are answered at once (declined); `hold`: kept open until {@link Session.release}. */
  inputMode: 'answer' | 'hold' = 'answer';
  /** The running probe's signal (the run's signal and the probe's bound). */
  signal: AbortSignal;
  private readonly results = new Map<string, OpenResult>();
  private readonly held: Array<() => void> = [];
  private readonly offs: Array<() => void> = [];
  /** `subscriptions/listen` requests of the doctor (extension), by request id. */
  private readonly listens = new Set<string>();
  /** The counter behind {@link Timing.seq}. */
  private order = 0;
  /** The `x-mcp-header` declarations of each listed tool ([E32]; none for a tool whose marks break a rule). */
  private readonly declared = new Map<string, readonly ParamHeader[]>();
  /** The calls that may create a task, and the tasks their late replies name (late.ts). */
  readonly late: LateTasks;
  /** Calls that may create a task whose reply has not come yet. */
  private creating = 0;
  /** Status notifications of tasks not known yet, held while a call may create one (2025-11-25). */
  private readonly early = new EarlyNotes();

  constructor(
    readonly port: SessionPort,
    readonly wire: DoctorWire,
    readonly settings: Settings,
    readonly ledger: TaskLedger,
    runSignal: AbortSignal,
  ) {
    this.signal = runSignal;
    this.late = new LateTasks(this, TIMERS);
    ledger.watch(this, (taskId) => this.tracked(taskId));
    this.listen();
  }

  now(): number {
    return Date.now();
  }

  /**
   * Notes the input schemas of the listed tools: a `tools/call` then carries the `Mcp-Param-*`
   * headers they declare, where the port sends headers (Streamable HTTP, 2026-07-28), as the
   * library's own calls do ([E32]); without them a server that checks would refuse every call.
   */
  knowTools(tools: ReadonlyArray<{ readonly name: string; readonly inputSchema: unknown }>): void {
    for (const tool of tools) this.declared.set(tool.name, scanParamHeaders(tool.inputSchema) ?? []);
  }

  /** The `Mcp-Param-*` headers of a request, if it is a `tools/call` of a tool that declares some. */
  private headersOf(method: string, params: JsonObject | undefined): Record<string, string> | undefined {
    if (method !== 'tools/call' || typeof params?.name !== 'string' || !this.port.sendsHeaders()) return undefined;
    const declared = this.declared.get(params.name);
    const args = params.arguments;
    return declared === undefined || !isObject(args) ? undefined : paramHeaders(declared, args);
  }

  /** Sends a request and resolves with the server's reply, whatever it is (never rejects but for a stopped probe). */
  async call(method: string, params: JsonObject | undefined, options: CallOptions = {}): Promise<Reply> {
    this.checkStopped();
    const declare = options.declare ?? this.wire === 'io.modelcontextprotocol/tasks';
    const sentAt = this.now();
    const sentSeq = this.step();
    const timing = (): Timing => ({ at: this.now(), sentAt, seq: this.step(), sentSeq });
    const timeoutMs = options.timeoutMs ?? this.settings.requestTimeoutMs;
    const headers = this.headersOf(method, params);
    const cancelled = method === 'tasks/cancel' && this.wire === '2025-11-25' ? params?.taskId : undefined;
    if (this.mayCreateTask(method, params)) return this.callCreating(params, timeoutMs, headers, declare, timing);
    try {
      const result = await this.port.request(
        method,
        params,
        identity,
        { timeoutMs, timers: TIMERS, signal: this.signal, weak: true, headers },
        undefined,
        undefined,
        declare ? DECLARE : undefined,
      );
      // [V24]: on 2025-11-25 the reply to tasks/cancel is the task, and its status counts in the task
      // account like a read's: a server may delete a cancelled task at once ([V25]), and no later
      // read then shows how it ended.
      if (typeof cancelled === 'string')
        this.ledger.seen(cancelled, typeof result.status === 'string' ? result.status : undefined);
      return { ok: true, result, ...timing() };
    } catch (error) {
      return failedReply(error, timing);
    }
  }

  /** A `tools/call` that may create a task: every one on the extension (the server decides, [E2]), a task-augmented one on 2025-11-25. */
  private mayCreateTask(method: string, params: JsonObject | undefined): params is JsonObject {
    return method === 'tools/call' && params !== undefined && (this.wire !== '2025-11-25' || params.task !== undefined);
  }

  /**
   * A call that may create a task: never cancelled with `notifications/cancelled` ([R24], [E7]), so
   * it gets neither a signal nor a timeout of the port's (either would cancel it that way when it
   * fires): it stays open while the session does (late.ts). A probe already stopped, or a session
   * the doctor is done with, sends nothing.
   */
  private callCreating(
    params: JsonObject,
    timeoutMs: number,
    headers: Record<string, string> | undefined,
    declare: boolean,
    timing: () => Timing,
  ): Promise<Reply> {
    if (this.signal.aborted || this.late.signal.aborted) return Promise.reject(new ProbeStopped('stopped'));
    // While it is open, a status notification of a task not known yet may be its task's: counted
    // before it is sent, as a server may send one before the send returns (an in-process transport).
    this.creating += 1;
    const request = this.port.request(
      'tools/call',
      params,
      identity,
      { timeoutMs: Infinity, timers: TIMERS, headers },
      undefined,
      undefined,
      declare ? DECLARE : undefined,
    );
    const settled = (): void => {
      this.creating -= 1;
    };
    request.then(settled, settled);
    return this.late.follow(request, typeof params.name === 'string' ? params.name : 'a tool', timeoutMs, timing);
  }

  /** The next position in the session's order of sends and replies. */
  step(): number {
    this.order += 1;
    return this.order;
  }

  /** A reply in a few words, task ids left out: `result`, `-32602 (Task not found)`, `no answer in 10 s`. */
  describe(reply: Reply): string {
    if (reply.ok) return 'a result';
    if (reply.kind === 'timeout') return 'no answer in time';
    if (reply.kind === 'closed') return 'the connection closed';
    const message = cut(withoutIds(reply.message.replace(/^(MCP error -?\d+: )+/, ''), this.ledger.ids()), 60);
    return reply.kind === 'server' ? `${reply.code} (${message})` : `a failed request (${reply.kind}: ${message})`;
  }

  /** Waits `ms`, or throws {@link ProbeStopped} when the probe stops first. */
  sleep(ms: number): Promise<void> {
    return stoppableSleep(ms, this.signal);
  }

  /** Throws {@link ProbeStopped} once the probe was stopped. */
  checkStopped(): void {
    if (this.signal.aborted) throw new ProbeStopped('stopped');
  }

  /** Opens (once per task) a blocking `tasks/result` bounded by the probe ([R29], [V16]). */
  openResult(taskId: string): OpenResult {
    const existing = this.results.get(taskId);
    if (existing !== undefined) return existing;
    const sentAt = this.now();
    const sentSeq = this.order + 1; // the call below takes this position as it sends
    const open: OpenResult = {
      sentAt,
      answered: undefined,
      reply: this.call(
        'tasks/result',
        { taskId },
        { timeoutMs: this.settings.probeTimeoutMs + this.settings.requestTimeoutMs },
      ).then(
        (reply) => {
          open.answered = reply;
          return reply;
        },
        (error: unknown) => {
          const reply: Reply = {
            ok: false,
            code: localCode('aborted'),
            message: String(error),
            kind: 'aborted',
            at: this.now(),
            sentAt,
            seq: this.step(),
            sentSeq,
          };
          open.answered = reply;
          return reply;
        },
      ),
    };
    this.results.set(taskId, open);
    return open;
  }

  /** The blocking `tasks/result` of a task, if one was opened. */
  openedResult(taskId: string): OpenResult | undefined {
    return this.results.get(taskId);
  }

  /** Notifications received for `taskId`. */
  notesOf(taskId: string): Note[] {
    return this.notes.filter((note) => note.taskId === taskId);
  }

  /**
   * Opens a `subscriptions/listen` for `taskIds` (extension, [E18]); {@link Listen.stop} ends it
   * (the port then sends `notifications/cancelled` for the open request), and
   * {@link Listen.reply} keeps the server's answer if one came before that ([E22], [E36]).
   */
  subscribe(taskIds: readonly string[]): Listen {
    return openListen(this, this.listens, taskIds);
  }

  /** Answers every held question (declined) and empties the hold. */
  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  /** Removes the doctor's taps from the port. */
  dispose(): void {
    this.release();
    for (const off of this.offs.splice(0)) off();
    this.early.clear();
  }

  /** Records an extension question (an `inputRequests` entry) the first time its key is seen. */
  noteInlineQuestion(taskId: string, key: string, method: string): Question {
    const known = this.questions.find((q) => q.taskId === taskId && q.key === key);
    if (known !== undefined) return known;
    const question: Question = {
      method,
      taskId,
      key,
      at: this.now(),
      answeredAt: undefined,
      withdrawn: false,
      statusAtAsk: [],
    };
    this.questions.push(question);
    return question;
  }

  private listen(): void {
    if (this.wire === '2025-11-25') {
      this.offs.push(this.port.onNotification('notifications/tasks/status', (params) => this.note(params)));
      for (const method of ['elicitation/create', 'sampling/createMessage']) {
        this.offs.push(this.port.onRequest(method, (request) => this.question(method, request)));
      }
      return;
    }
    this.offs.push(
      this.port.onNotification('notifications/tasks', (params) => {
        const subscription = isObject(params._meta)
          ? params._meta['io.modelcontextprotocol/subscriptionId']
          : undefined;
        this.note(params);
        return typeof subscription === 'string' && this.listens.has(subscription);
      }),
      this.port.onNotification('notifications/subscriptions/acknowledged', (params) => {
        const subscription = isObject(params._meta)
          ? params._meta['io.modelcontextprotocol/subscriptionId']
          : undefined;
        return typeof subscription === 'string' && this.listens.has(subscription);
      }),
    );
  }

  /**
   * Records a status notification of one of the doctor's tasks (never consumed: others may want
   * it). On 2025-11-25 one of a task not known yet is held while a call that may create a task is
   * open (early-notes.ts); it counts once its task is known ({@link Session.tracked}).
   */
  private note(params: JsonObject): false {
    const taskId = params.taskId;
    if (typeof taskId !== 'string') return false;
    const status = typeof params.status === 'string' ? params.status : undefined;
    const note: Note = { taskId, status, at: this.now(), params };
    if (this.ledger.has(taskId)) this.record(note);
    else if (this.wire === '2025-11-25' && this.creating > 0) this.early.hold(note);
    return false;
  }

  private record(note: Note): void {
    this.notes.push(note);
    this.ledger.seen(note.taskId, note.status);
  }

  /** A task of this session is known now: the notifications held for it count, oldest first. */
  private tracked(taskId: string): void {
    for (const note of this.early.take(taskId)) this.record(note);
  }

  /**
   * A question of the server (2025): one that names a task of the doctor's, or names none while
   * one of its tasks runs (D14), is answered (declined: the doctor never approves what a tool
   * asks) or held; any other is left to the SDK client's own handlers.
   */
  private question(method: string, request: InboundRequest): Promise<JsonObject | undefined> | undefined {
    const taskId = relatedTaskId(request.params);
    if (taskId !== undefined ? !this.ledger.has(taskId) : !this.ledger.anyRunning(this)) return undefined;
    const question: Question = {
      method,
      taskId,
      key: undefined,
      at: this.now(),
      answeredAt: undefined,
      withdrawn: false,
      statusAtAsk: [],
    };
    this.questions.push(question);
    request.signal.addEventListener('abort', () => (question.withdrawn = question.answeredAt === undefined), {
      once: true,
    });
    const answer = (): JsonObject => {
      question.answeredAt = this.now();
      const body = answerFor(method);
      // [R31]: the answer to a tagged question is tagged with its task; an untagged one stays untagged.
      return taskId === undefined ? body : { ...body, _meta: { [RELATED_TASK_KEY]: { taskId } } };
    };
    // [V7]: what status the task has while it asks, read before the answer can change it.
    return this.statusesNow(taskId).then((statuses) => {
      question.statusAtAsk = statuses;
      if (this.inputMode === 'answer') return answer();
      return new Promise<JsonObject>((resolve) => this.held.push(() => resolve(answer())));
    });
  }

  /** The status of `taskId` (or of every running task of the doctor's, for none), read now. */
  private async statusesNow(taskId: string | undefined): Promise<string[]> {
    const ids = taskId !== undefined ? [taskId] : this.ledger.running(this).map((task) => task.taskId);
    const statuses: string[] = [];
    for (const id of ids) {
      const reply = await this.call('tasks/get', { taskId: id }).catch(() => undefined);
      const status = reply?.ok === true && typeof reply.result.status === 'string' ? reply.result.status : undefined;
      if (status !== undefined) statuses.push(status);
    }
    return statuses;
  }
}
