/**
 * A scripted 2025-11-25 task server written from the spec, for the doctor's tests: every rule the
 * doctor reads is followed (capabilities with list and cancel, full Task objects with ttl and
 * pollInterval, a notification on every change, a blocking tasks/result with related-task _meta,
 * -32602 for unknown ids, cancelled terminal tasks refused, paged listing that ends, tagged
 * questions while input_required, tasks forgotten after their ttl), unless one switch turns ONE
 * deviation on (or, for `selfCancel`, `slowReadMs`, `unanswered`, `madeUpCursorUnanswered`, `maxTtl`, `deleteCancelled`, `serverName`, `workName` and `earlyNoteOnly`, one allowed behaviour the
 * doctor must not call a deviation). Built on spec/support/scripted-server.ts; it asserts every request it holds
 * before it answers (task methods carry exactly `{taskId}`, a task-augmented call only `{ttl}`,
 * [R33], [A15], [S3]) and records what failed in `failures`.
 *
 * Tools: `work` (optional: ends completed after `workMs`, or its `ms` argument), `fail` (required: ends failed with an
 * isError result and a statusMessage), `ask` (required: asks one elicitation, then completes).
 */
import { rpcError, ScriptedServer, type Json } from '../support/scripted-server.js';

/** One deviation at a time (all off: the server follows the spec). */

/** Lets a timer stop holding the process where it can (a test may give timers that are numbers, as a browser's). */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}

export interface ModelOptions {
  /** Send no status notification at all. */
  readonly silent?: boolean;
  /** Report the requested ttl but forget every task 300 ms after it ended. */
  readonly ttlIgnored?: boolean;
  /** A cancel of a completed or failed task turns it cancelled, drops its result and answers with it. */
  readonly cancelRewrites?: boolean;
  /** No tasks.cancel capability (tasks/cancel is then refused with -32601). */
  readonly noCancel?: boolean;
  /** Questions name no task (no related-task _meta), as mcp-go's do (D14). */
  readonly untagged?: boolean;
  /** The code for an unknown task id (the spec's is -32602). */
  readonly unknownCode?: number;
  /** tasks/list always gives a nextCursor. */
  readonly endlessList?: boolean;
  /** tasks/list gives its next cursor as a number. */
  readonly numericCursor?: boolean;
  /** `work` tasks never end on their own (a cancel still stops them). */
  readonly neverEnds?: boolean;
  /** tasks/result of a running `work` task answers at once, with the result the task will end with ([V16] broken). */
  readonly earlyResult?: boolean;
  /** `work` tasks end `cancelled` on their own (mcp-go's context bug), and every cancelled task is forgotten 200 ms after it ended ([V25] allows it). */
  readonly selfCancel?: boolean;
  /** The first tasks/get sent 300 ms or more after its task ended is answered this late (once; no deviation). */
  readonly slowReadMs?: number;
  /** A method the server never answers (no deviation: the request just stays open). */
  readonly unanswered?: string;
  /** A tasks/list with a cursor the server never made is never answered (no deviation: the request just stays open). */
  readonly madeUpCursorUnanswered?: boolean;
  /** The notification of a task's end is sent this long after the end (no deviation: no rule orders it against the replies). */
  readonly lateEndNoteMs?: number;
  /** Every CreateTaskResult carries this taskId instead of the task's own (the task still runs under its own). */
  readonly createdTaskId?: string;
  /** Every CreateTaskResult carries this status instead of the task's own (`paused`: one the library cannot read). */
  readonly createdStatus?: string;
  /** Every task's `createdAt`, as sent (a broken timestamp). */
  readonly createdAt?: unknown;
  /**
   * The first task-augmented call whose arguments carry `late: true` is answered this late: its task
   * is created and runs from the call on, and the CreateTaskResult (the task as it is then) goes out
   * this much later.
   */
  readonly lateCreateMs?: number;
  /** `work` tasks end `cancelled` on their own as their CreateTaskResult (still `working`) goes out: mcp-go's context bug, where the task's context ends with the request's. */
  readonly cancelledAtOnce?: boolean;
  /** Lists a fourth tool, `plain` (taskSupport `forbidden`): called as a task it answers -32601 ([V3]) and records the client's [R7] breach in `failures`. */
  readonly forbiddenTool?: boolean;
  /** A task cancelled with tasks/cancel is forgotten at once, after the reply ([V25] allows it; no deviation). */
  readonly deleteCancelled?: boolean;
  /** The longest ttl the server applies: a longer request gets this one ([V10]: the server may choose; no deviation). */
  readonly maxTtl?: number;
  /** How long `work` runs. @default 150 */
  readonly workMs?: number;
  /** The server's name (`serverInfo.name`), as it gives it (a long or multi-line name: no deviation). */
  readonly serverName?: string;
  /** The name the `work` tool is listed and called by (a long or multi-line name: no deviation). */
  readonly workName?: string;
  /**
   * A task's only status notification is the one sent before its CreateTaskResult (the task as it
   * is then): [V21] allows it, so no deviation.
   */
  readonly earlyNoteOnly?: boolean;
}

/**
 * Every option of {@link ModelOptions}, by name: the type check keeps it whole (a new option left
 * out, or one removed, fails to compile), so that a test can check that the doctor's fuzzer
 * (spec/doctor/fuzz.spec.ts) draws each of them.
 */
export const MODEL_OPTION_KEYS: readonly (keyof ModelOptions)[] = Object.keys({
  silent: true,
  ttlIgnored: true,
  cancelRewrites: true,
  noCancel: true,
  untagged: true,
  unknownCode: true,
  endlessList: true,
  numericCursor: true,
  neverEnds: true,
  earlyResult: true,
  selfCancel: true,
  slowReadMs: true,
  unanswered: true,
  madeUpCursorUnanswered: true,
  lateEndNoteMs: true,
  createdTaskId: true,
  createdStatus: true,
  createdAt: true,
  lateCreateMs: true,
  cancelledAtOnce: true,
  forbiddenTool: true,
  deleteCancelled: true,
  maxTtl: true,
  workMs: true,
  serverName: true,
  workName: true,
  earlyNoteOnly: true,
} satisfies Record<keyof ModelOptions, true>) as (keyof ModelOptions)[];

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const RELATED = 'io.modelcontextprotocol/related-task';
const POLL_INTERVAL = 50;
const PAGE_SIZE = 1;

interface ModelTask {
  task: Json;
  outcome: { result: Json } | { error: { code: number; message: string } } | undefined;
  waiters: Array<() => void>;
  timers: Array<ReturnType<typeof setTimeout>>;
  /** The result a `work` task will end with (for `earlyResult`). */
  planned?: Json;
  /** When it reached a terminal status. */
  endedAt?: number;
}

/** The model server and what it saw. */
export interface Model {
  readonly server: ScriptedServer;
  /** Requests whose assertion failed (must stay empty). */
  readonly failures: string[];
  /** Tasks not in a terminal status (the doctor must leave none running). */
  running(): number;
  /** Stops every timer. */
  stop(): void;
}

/** Builds the model server (connect it with `connectScripted`-like code or pass `server`). */
export function modelServer(options: ModelOptions = {}): Model {
  const capabilities: Json = {
    tools: {},
    tasks:
      options.noCancel === true
        ? { list: {}, requests: { tools: { call: {} } } }
        : { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  };
  const server = new ScriptedServer({
    // The doctor sends a made-up tasks/list cursor on purpose, to see it refused ([V26]).
    madeUpCursors: true,
    capabilities,
    tools: [
      { name: options.workName ?? 'work', taskSupport: 'optional', inputSchema: { type: 'object', properties: {} } },
      { name: 'fail', taskSupport: 'required', inputSchema: { type: 'object', properties: {} } },
      { name: 'ask', taskSupport: 'required', inputSchema: { type: 'object', properties: {} } },
      ...(options.forbiddenTool === true
        ? [{ name: 'plain', taskSupport: 'forbidden' as const, inputSchema: { type: 'object', properties: {} } }]
        : []),
    ],
  });
  const failures: string[] = [];
  const tasks = new Map<string, ModelTask>();
  const order: string[] = [];
  const workMs = options.workMs ?? 150;
  let seq = 0;
  let slowed = false;
  let lateSent = false;

  const check = (ok: boolean, what: string): void => {
    if (ok) return;
    failures.push(what);
    throw rpcError(-32603, `scripted server: ${what}`);
  };
  const only = (params: Json, keys: readonly string[], method: string): void => {
    const extra = Object.keys(params).filter((key) => !keys.includes(key));
    check(extra.length === 0, `${method} carried ${extra.join(', ')}`);
  };
  const snapshot = (entry: ModelTask): Json => JSON.parse(JSON.stringify(entry.task)) as Json;
  const notify = (entry: ModelTask): void => {
    if (options.silent === true || options.earlyNoteOnly === true) return;
    const note = snapshot(entry);
    if (options.lateEndNoteMs === undefined || !TERMINAL.has(String(note.status)))
      server.notify('notifications/tasks/status', note);
    else unref(setTimeout(() => server.notify('notifications/tasks/status', note), options.lateEndNoteMs));
  };
  const find = (params: Json, method: string): ModelTask => {
    only(params, ['taskId'], method);
    check(typeof params.taskId === 'string', `${method} without a taskId`);
    const entry = tasks.get(params.taskId as string);
    if (entry === undefined) throw rpcError(options.unknownCode ?? -32602, 'Task not found');
    return entry;
  };
  const live = (entry: ModelTask): boolean => !TERMINAL.has(String(entry.task.status));
  const later = (entry: ModelTask, ms: number, run: () => void): void => {
    entry.timers.push(setTimeout(() => live(entry) && run(), ms));
  };
  const forget = (taskId: string, ms: number): void => {
    unref(setTimeout(() => tasks.delete(taskId), ms));
  };
  const update = (entry: ModelTask, patch: Json): void => {
    Object.assign(entry.task, { lastUpdatedAt: new Date().toISOString() }, patch);
    if (TERMINAL.has(String(entry.task.status))) {
      entry.endedAt ??= Date.now();
      if (options.selfCancel === true && entry.task.status === 'cancelled') forget(String(entry.task.taskId), 200);
      for (const wake of entry.waiters.splice(0)) wake();
      for (const timer of entry.timers.splice(0)) clearTimeout(timer);
      if (options.ttlIgnored === true) forget(String(entry.task.taskId), 300);
    }
    notify(entry);
  };
  const finish = (entry: ModelTask, status: 'completed' | 'failed', result: Json, statusMessage: string): void => {
    entry.outcome = { result };
    update(entry, { status, statusMessage });
  };

  if (options.serverName !== undefined) {
    const name = options.serverName;
    server.on('initialize', () => ({
      protocolVersion: '2025-11-25',
      capabilities,
      serverInfo: { name, version: '1.0.0' },
    }));
  }

  server.on('tools/call', (params) => {
    check(typeof params.name === 'string', 'tools/call without a name');
    const name = params.name === options.workName ? 'work' : (params.name as string);
    const args = (typeof params.arguments === 'object' && params.arguments !== null ? params.arguments : {}) as Json;
    if (name === 'plain') {
      if (params.task === undefined) return { content: [{ type: 'text', text: 'plain done' }] };
      failures.push('plain (taskSupport forbidden) was called as a task (R7)');
      throw rpcError(-32601, 'plain cannot run as a task');
    }
    if (params.task === undefined) {
      if (name !== 'work') throw rpcError(-32601, `${name} must run as a task`);
      return { content: [{ type: 'text', text: 'done at once' }] };
    }
    if (!['work', 'fail', 'ask'].includes(name)) throw rpcError(-32602, `Unknown tool ${name}`);
    check(typeof params.task === 'object' && params.task !== null, 'task is not an object');
    only(params.task as Json, ['ttl'], 'tools/call task');
    const asked = (params.task as Json).ttl;
    const ttl = typeof asked === 'number' && options.maxTtl !== undefined ? Math.min(asked, options.maxTtl) : asked;
    const at = new Date().toISOString();
    const taskId = `model-${++seq}-${Math.random().toString(16).slice(2, 10)}`;
    const entry: ModelTask = {
      task: {
        taskId,
        status: 'working',
        createdAt: options.createdAt === undefined ? at : options.createdAt,
        lastUpdatedAt: at,
        ttl: typeof ttl === 'number' ? ttl : null,
        pollInterval: POLL_INTERVAL,
      },
      outcome: undefined,
      waiters: [],
      timers: [],
    };
    tasks.set(taskId, entry);
    order.push(taskId);
    // [V11]: forgotten once its ttl has passed (allowed, and what the doctor's expiry check reads).
    if (typeof ttl === 'number' && options.ttlIgnored !== true) forget(taskId, ttl);
    if (name === 'work' && options.neverEnds === true) {
      for (let step = 1; step <= 400; step += 1)
        later(entry, step * 50, () => update(entry, { statusMessage: `step ${step}` }));
    } else if (name === 'work') {
      const done: Json = { content: [{ type: 'text', text: 'work done' }] };
      entry.planned = done;
      const ms = typeof args.ms === 'number' ? args.ms : workMs;
      later(entry, ms / 2, () => update(entry, { statusMessage: 'halfway' }));
      later(entry, ms, () =>
        options.selfCancel === true
          ? update(entry, { status: 'cancelled', statusMessage: 'context canceled' })
          : finish(entry, 'completed', done, 'done'),
      );
    } else if (name === 'fail') {
      later(entry, workMs, () =>
        finish(entry, 'failed', { content: [{ type: 'text', text: 'disk full' }], isError: true }, 'disk full'),
      );
    } else if (name === 'ask') {
      later(entry, 30, () => {
        update(entry, { status: 'input_required', statusMessage: 'waiting for an answer' });
        const meta = options.untagged === true ? {} : { _meta: { [RELATED]: { taskId } } };
        void server
          .request('elicitation/create', {
            message: 'Proceed?',
            requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } } },
            ...meta,
          })
          .then((reply) => {
            if (!live(entry)) return;
            const action = (reply.result as Json | undefined)?.action;
            update(entry, { status: 'working', statusMessage: `answer: ${String(action)}` });
            later(entry, workMs / 2, () =>
              finish(entry, 'completed', { content: [{ type: 'text', text: `asked: ${String(action)}` }] }, 'done'),
            );
          });
      });
    }
    if (options.earlyNoteOnly === true) server.notify('notifications/tasks/status', snapshot(entry));
    const created = (): Json => {
      const task = snapshot(entry);
      if (options.createdTaskId !== undefined) task.taskId = options.createdTaskId;
      if (options.createdStatus !== undefined) task.status = options.createdStatus;
      return { task };
    };
    if (options.cancelledAtOnce === true && name === 'work') {
      const reply = created();
      update(entry, { status: 'cancelled', statusMessage: 'context canceled' });
      return reply;
    }
    if (options.lateCreateMs === undefined || args.late !== true || lateSent) return created();
    lateSent = true;
    return new Promise<Json>((resolve) => setTimeout(() => resolve(created()), options.lateCreateMs));
  });

  server.on('tasks/get', async (params) => {
    const entry = find(params, 'tasks/get');
    const slow = options.slowReadMs;
    if (slow !== undefined && !slowed && entry.endedAt !== undefined && Date.now() - entry.endedAt >= 300) {
      slowed = true;
      await new Promise((resolve) => setTimeout(resolve, slow));
    }
    return snapshot(entry);
  });

  server.on('tasks/result', async (params) => {
    const entry = find(params, 'tasks/result');
    if (options.earlyResult === true && live(entry) && entry.planned !== undefined)
      return { ...entry.planned, _meta: { [RELATED]: { taskId: entry.task.taskId } } };
    if (live(entry)) await new Promise<void>((resolve) => entry.waiters.push(resolve));
    if (entry.outcome === undefined) throw rpcError(-32603, 'Task has no result');
    if ('error' in entry.outcome) throw rpcError(entry.outcome.error.code, entry.outcome.error.message);
    return { ...entry.outcome.result, _meta: { [RELATED]: { taskId: entry.task.taskId } } };
  });

  server.on('tasks/cancel', (params) => {
    check(options.noCancel !== true, 'tasks/cancel sent to a server without tasks.cancel');
    const entry = find(params, 'tasks/cancel');
    if (!live(entry)) {
      if (options.cancelRewrites !== true || entry.task.status === 'cancelled')
        throw rpcError(-32602, `Cannot cancel a task in terminal status ${String(entry.task.status)}`);
      entry.outcome = undefined;
      Object.assign(entry.task, {
        status: 'cancelled',
        statusMessage: 'cancelled',
        lastUpdatedAt: new Date().toISOString(),
      });
      return snapshot(entry);
    }
    update(entry, { status: 'cancelled', statusMessage: 'cancelled on request' });
    const reply = snapshot(entry);
    if (options.deleteCancelled === true) tasks.delete(String(entry.task.taskId));
    return reply;
  });

  server.on('tasks/list', (params) => {
    only(params, ['cursor'], 'tasks/list');
    const ids = order.filter((id) => tasks.has(id));
    let start = 0;
    if (params.cursor !== undefined) {
      const match = typeof params.cursor === 'string' ? /^c(\d+)$/.exec(params.cursor) : null;
      if (match === null && options.madeUpCursorUnanswered === true) return new Promise<Json>(() => {});
      if (match === null) throw rpcError(-32602, 'Invalid cursor');
      start = Number(match[1]);
    }
    const page = ids.slice(start, start + PAGE_SIZE).map((id) => snapshot(tasks.get(id) as ModelTask));
    if (options.endlessList === true)
      return {
        tasks: ids.slice(0, PAGE_SIZE).map((id) => snapshot(tasks.get(id) as ModelTask)),
        nextCursor: `c${start + PAGE_SIZE}`,
      };
    if (options.numericCursor === true) return { tasks: page, nextCursor: start + PAGE_SIZE };
    return start + PAGE_SIZE < ids.length ? { tasks: page, nextCursor: `c${start + PAGE_SIZE}` } : { tasks: page };
  });

  if (options.unanswered !== undefined) server.on(options.unanswered, () => new Promise<Json>(() => {}));

  return {
    server,
    failures,
    running: () => [...tasks.values()].filter(live).length,
    stop: () => {
      for (const entry of tasks.values()) for (const timer of entry.timers.splice(0)) clearTimeout(timer);
    },
  };
}
