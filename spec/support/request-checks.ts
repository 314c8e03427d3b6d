/**
 * What the scripted 2025-11-25 server (spec/support/scripted-server.ts) asserts of every request
 * before any handler answers it, written from the 2025-11-25 schema and the requestor rules: the
 * shape of each method's params, and what the server told the client before (its capabilities in
 * the `initialize` reply, the tool catalogs and cursors of its `tools/list` replies). A request that
 * breaks one is refused; the server records why.
 */
export type Json = Record<string, unknown>;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the server has said to the client so far. */
export interface Told {
  /** The capabilities of the server's `initialize` reply (undefined before it). */
  capabilities: Json | undefined;
  /** Each tool name with every `taskSupport` a `tools/list` reply gave it (`forbidden` when absent). */
  readonly catalog: Map<string, Set<string>>;
  /** Every `nextCursor` of a `tools/list` or `tasks/list` reply, by method. */
  readonly cursors: Map<string, Set<string>>;
}

/** A fresh record of what was told. */
export const nothingTold = (): Told => ({ capabilities: undefined, catalog: new Map(), cursors: new Map() });

/** Notes what the server's reply to `method` told the client. */
export function noteReply(told: Told, method: string, result: unknown): void {
  if (!isObject(result)) return;
  if (method === 'initialize' && isObject(result.capabilities)) told.capabilities = result.capabilities;
  if ((method === 'tools/list' || method === 'tasks/list') && typeof result.nextCursor === 'string') {
    const given = told.cursors.get(method) ?? new Set<string>();
    given.add(result.nextCursor);
    told.cursors.set(method, given);
  }
  if (method !== 'tools/list' || !Array.isArray(result.tools)) return;
  for (const tool of result.tools as unknown[]) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    const support =
      isObject(tool.execution) && typeof tool.execution.taskSupport === 'string'
        ? tool.execution.taskSupport
        : 'forbidden';
    const supports = told.catalog.get(tool.name) ?? new Set<string>();
    supports.add(support);
    told.catalog.set(tool.name, supports);
  }
}

const tasksCaps = (told: Told): Json | undefined =>
  isObject(told.capabilities?.tasks) ? told.capabilities.tasks : undefined;
/** Whether the server declared `tasks.<path>` (undefined before its `initialize` reply). */
function declared(told: Told, ...path: string[]): boolean | undefined {
  if (told.capabilities === undefined) return undefined;
  let at: unknown = tasksCaps(told);
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return isObject(at);
}

function metaProblem(params: Json): string | undefined {
  if (params._meta === undefined) return undefined;
  if (!isObject(params._meta)) return '_meta is not an object';
  const token = params._meta.progressToken;
  if (token !== undefined && typeof token !== 'string' && typeof token !== 'number')
    return '_meta.progressToken is neither a string nor a number';
  return undefined;
}

function toolCallProblem(params: Json, told: Told): string | undefined {
  if (typeof params.name !== 'string' || params.name === '') return 'no tool name';
  if (params.arguments !== undefined && !isObject(params.arguments)) return 'arguments is not an object';
  const task = params.task;
  if (task !== undefined) {
    if (!isObject(task)) return 'task is not an object';
    if (task.ttl !== undefined && (typeof task.ttl !== 'number' || !(task.ttl >= 0)))
      return 'task.ttl is not a non-negative number';
    if (declared(told, 'requests', 'tools', 'call') === false)
      return 'a task asked of a server that did not declare tasks.requests.tools.call ([R2], [R6])';
  }
  const supports = told.catalog.get(params.name);
  if (supports === undefined) return undefined;
  if (task !== undefined && !supports.has('optional') && !supports.has('required'))
    return `a task asked for "${params.name}", listed without task support ([R7])`;
  const onlyRequired = supports.size === 1 && supports.has('required');
  if (task === undefined && onlyRequired && declared(told, 'requests', 'tools', 'call') === true)
    return `"${params.name}" is listed as required, called without a task ([R9])`;
  return undefined;
}

/** What a server lets pass that a requestor would not send. */
export interface Leniency {
  /** A cursor this server never gave (a probe's made-up one). */
  readonly madeUpCursors?: boolean;
}

/** A cursor is a string, passed back as the server gave it ([R23]). */
function cursorProblem(method: string, cursor: unknown, told: Told, leniency: Leniency): string | undefined {
  if (cursor === undefined) return undefined;
  if (typeof cursor !== 'string') return 'cursor is not a string';
  if (leniency.madeUpCursors !== true && told.cursors.get(method)?.has(cursor) !== true)
    return 'a cursor this server never gave ([R23])';
  return undefined;
}

/** Why the server refuses `method` with `params`, or undefined when the request is good. */
export function requestProblem(method: string, params: Json, told: Told, leniency: Leniency = {}): string | undefined {
  const meta = metaProblem(params);
  if (meta !== undefined) return meta;
  const related = isObject(params._meta) && RELATED_TASK in params._meta;
  switch (method) {
    case 'initialize': {
      if (typeof params.protocolVersion !== 'string') return 'no protocolVersion';
      if (!isObject(params.capabilities)) return 'capabilities is not an object';
      const info = params.clientInfo;
      if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
        return 'clientInfo without a name and a version';
      return undefined;
    }
    case 'tools/list':
      return cursorProblem(method, params.cursor, told, leniency);
    case 'tools/call':
      return toolCallProblem(params, told);
    case 'tasks/get':
    case 'tasks/result':
    case 'tasks/cancel':
      if (typeof params.taskId !== 'string' || params.taskId === '') return 'no taskId ([R33])';
      if (related) return 'related-task _meta on a tasks/* request ([R33], [R34])';
      if (method === 'tasks/cancel' && declared(told, 'cancel') === false)
        return 'tasks/cancel to a server that did not declare tasks.cancel ([R5])';
      return undefined;
    case 'tasks/list':
      if (related) return 'related-task _meta on tasks/list ([R34])';
      if (declared(told, 'list') === false) return 'tasks/list to a server that did not declare tasks.list ([R5])';
      return cursorProblem(method, params.cursor, told, leniency);
    default:
      return undefined;
  }
}
