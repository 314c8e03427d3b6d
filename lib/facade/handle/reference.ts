/**
 * Resume references: the small, versioned, JSON-safe value that finds a task again in this
 * process or another (`handle.toJSON()`, `handle.detach()` → `TaskClient.resume`), and its checks.
 */
import type { TaskReference } from '../../api/index.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskOptionError } from '../../errors.js';
import { MAX_TASK_ID_LENGTH } from '../../wire/decode.js';
import type { TaskWire } from '../../wire/wire.js';
import type { Task } from '../../types.js';

/** What `TaskClient.resume` accepts, reduced to what it needs. */
export interface ResumeTarget {
  /** The task to resume. */
  readonly taskId: string;
  /** The tool that created it, when the reference says. */
  readonly toolName?: string | undefined;
  /** Server-side creation time, when the reference says. */
  readonly createdAt?: string | undefined;
  /** Retention in ms from creation, when known. */
  readonly ttl?: number | null | undefined;
  /**
   * Task capabilities to assume, from a reference resumed on a session that skipped the handshake
   * (`TaskClient.resume` applies them only once the whole call is accepted).
   */
  readonly assume?: { readonly cancel: boolean; readonly list: boolean } | undefined;
  /** The server identity the reference names, on a session that skipped the handshake. */
  readonly server?: string | undefined;
}

/**
 * The server identity a session that skipped the handshake took from the references resumed on
 * it: the references it makes in turn carry it on ('' only when no reference said).
 */
const assumedServers = new WeakMap<TaskWire, string>();

/** Refuses an empty task id, or one longer than any the library accepts from a server. */
function checkTaskId(taskId: string, bad: (why: string) => TaskOptionError): void {
  if (taskId === '') throw bad('the task id is empty');
  if (taskId.length > MAX_TASK_ID_LENGTH) {
    throw bad(`the task id is longer than ${MAX_TASK_ID_LENGTH} characters, the most this library accepts`);
  }
}

/** The server name of a `name@version` identity (a name may hold `@` itself: `@scope/server@1.0.0`). */
function nameOf(identity: string): string {
  const at = identity.lastIndexOf('@');
  return at <= 0 ? identity : identity.slice(0, at);
}

/**
 * Whether a reference made on the server `made` may be resumed on the server `connected`: the same
 * name, whatever the version. A server redeployed in another version (a rolling upgrade) may well
 * still hold the task; if it does not, it says so (`TaskNotFoundError`), whereas a refusal would
 * leave the task running unwatched. Another name is another server, which is never told the id.
 */
function sameServer(made: unknown, connected: string): boolean {
  return typeof made === 'string' && nameOf(made) === nameOf(connected);
}

/**
 * Validates a task id or a {@link TaskReference} for `TaskClient.resume` on `wire`. A session that
 * skipped the handshake (a resumed HTTP session) knows no server identity: the reference's is
 * trusted then, and its task capabilities are taken.
 * @throws TaskOptionError for a malformed reference, or one made on another server (another name) or wire.
 */
export function checkReference(target: unknown, wire: TaskWire): ResumeTarget {
  const bad = (why: string): TaskOptionError => new TaskOptionError(`Cannot resume: ${why}`, { option: 'reference' });
  if (typeof target === 'string') {
    checkTaskId(target, bad);
    return { taskId: target };
  }
  if (typeof target !== 'object' || target === null) throw bad('expected a task id or a TaskReference');
  const ref = target as Partial<TaskReference> & { revision?: unknown };
  // Version 1 references named the wire `revision`, and only the 2025-11-25 wire existed.
  const kind = ref.v === 2 ? ref.wire : (ref.v as unknown) === 1 ? ref.revision : undefined;
  if (ref.v !== 2 && (ref.v as unknown) !== 1) throw bad(`unsupported reference version ${String(ref.v)}`);
  if (typeof ref.taskId !== 'string') throw bad('the reference has no taskId');
  checkTaskId(ref.taskId, bad);
  if (typeof ref.toolName !== 'string') throw bad('the reference has no toolName');
  const server = wire.serverIdentity() ?? assumedServers.get(wire);
  // '' is an identity nobody knew (a reference made on a session that skipped the handshake).
  if (server !== undefined && ref.server !== '' && !sameServer(ref.server, server)) {
    throw bad(`the task was created on server "${String(ref.server)}" but this client is connected to "${server}"`);
  }
  if (kind !== wire.kind) throw bad(`the task runs on the ${String(kind)} wire, this connection uses ${wire.kind}`);
  const handshaken = wire.serverIdentity() !== undefined;
  const assume =
    !handshaken && typeof ref.capabilities === 'object' && ref.capabilities !== null
      ? { cancel: ref.capabilities.cancel === true, list: ref.capabilities.list === true }
      : undefined;
  const ttl = typeof ref.ttl === 'number' && Number.isFinite(ref.ttl) && ref.ttl >= 0 ? ref.ttl : null;
  return {
    taskId: ref.taskId,
    toolName: ref.toolName,
    createdAt: typeof ref.createdAt === 'string' ? ref.createdAt : undefined,
    ttl,
    assume,
    ...(!handshaken && typeof ref.server === 'string' && ref.server !== '' ? { server: ref.server } : {}),
  };
}

/**
 * Takes what a reference accepted by {@link checkReference} tells a session that skipped the
 * handshake: its task capabilities and its server identity. Called once the resume is accepted.
 */
export function assumeFrom(target: ResumeTarget, wire: TaskWire): void {
  if (target.assume !== undefined) wire.assume({ ...target.assume, toolsCall: true });
  if (target.server !== undefined && !assumedServers.has(wire)) assumedServers.set(wire, target.server);
}

/**
 * The task `target` stands for until the server is first asked about it: `working`, with what the
 * reference knows.
 */
export function placeholderTask(target: ResumeTarget): Task {
  return {
    taskId: target.taskId,
    status: 'working',
    createdAt: target.createdAt ?? '',
    lastUpdatedAt: '',
    ttl: target.ttl ?? null,
  };
}

/** The resume reference of a tracked task on `wire`. */
export function referenceOf(record: TaskView, wire: TaskWire): TaskReference {
  const task = record.task;
  const features = wire.features();
  const sessionId = wire.sessionId();
  return {
    v: 2,
    taskId: record.taskId,
    toolName: record.toolName,
    createdAt: task.createdAt,
    ttl: task.ttl,
    server: wire.serverIdentity() ?? assumedServers.get(wire) ?? '',
    wire: wire.kind,
    ...(sessionId === undefined ? {} : { sessionId }),
    capabilities: { cancel: features.cancel, list: features.list },
  };
}
