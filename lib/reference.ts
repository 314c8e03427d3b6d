/**
 * Resume references: the small, versioned, JSON-safe value that finds a task again in this
 * process or another (`handle.toJSON()`, `handle.detach()` → `TaskClient.resume`), and its checks.
 */
import type { TaskRecord } from './engine/record.js';
import { TaskOptionError } from './errors.js';
import { MAX_TASK_ID_LENGTH } from './wire/decode-2025.js';
import type { CallToolAsTaskOptions } from './options.js';
import type { TaskWire } from './wire/wire.js';

/**
 * What is needed to find a task again later, in this process or another: pass it to
 * `TaskClient.resume`. Small, JSON-safe and versioned. The task id inside is a secret.
 */
export interface TaskReference {
  /** Format version. */
  readonly v: 1;
  /** The task id (a secret: whoever has it can read the task). */
  readonly taskId: string;
  /** The tool that was called. */
  readonly toolName: string;
  /** Server-side creation time (ISO 8601). */
  readonly createdAt: string;
  /** Retention from creation in ms; `null` when unlimited or unknown. */
  readonly ttl: number | null;
  /** Identity of the server that holds the task (`name@version`). */
  readonly server: string;
  /** Protocol revision of the wire that created it. */
  readonly revision: string;
}

/** Options of `TaskClient.resume`: the stop and input options of a call. */
export interface ResumeOptions
  extends Pick<
    CallToolAsTaskOptions,
    'timeoutMs' | 'signal' | 'cancelOnTimeout' | 'cancelOnAbort' | 'requestTimeoutMs' | 'onElicitation' | 'onSampling'
  > {
  /** Tool name to report when resuming by bare task id. @default 'unknown' */
  readonly toolName?: string | undefined;
}

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
}

/** Refuses an empty task id, or one longer than any the library accepts from a server. */
function checkTaskId(taskId: string, bad: (why: string) => TaskOptionError): void {
  if (taskId === '') throw bad('the task id is empty');
  if (taskId.length > MAX_TASK_ID_LENGTH) {
    throw bad(`the task id is longer than ${MAX_TASK_ID_LENGTH} characters, the most this library accepts`);
  }
}

/**
 * Validates a task id or a {@link TaskReference} for `TaskClient.resume`.
 * @throws TaskOptionError for a malformed reference, or one made on another server or wire.
 */
export function checkReference(target: unknown, server: string, revision: string): ResumeTarget {
  const bad = (why: string): TaskOptionError => new TaskOptionError(`Cannot resume: ${why}`, { option: 'reference' });
  if (typeof target === 'string') {
    checkTaskId(target, bad);
    return { taskId: target };
  }
  if (typeof target !== 'object' || target === null) throw bad('expected a task id or a TaskReference');
  const ref = target as Partial<TaskReference>;
  if (ref.v !== 1) throw bad(`unsupported reference version ${String(ref.v)}`);
  if (typeof ref.taskId !== 'string') throw bad('the reference has no taskId');
  checkTaskId(ref.taskId, bad);
  if (typeof ref.toolName !== 'string') throw bad('the reference has no toolName');
  if (ref.server !== server) {
    throw bad(`the task was created on server "${String(ref.server)}" but this client is connected to "${server}"`);
  }
  if (ref.revision !== revision) throw bad(`the task uses wire ${String(ref.revision)}, this client speaks ${revision}`);
  const ttl = typeof ref.ttl === 'number' && Number.isFinite(ref.ttl) && ref.ttl >= 0 ? ref.ttl : null;
  return {
    taskId: ref.taskId,
    toolName: ref.toolName,
    createdAt: typeof ref.createdAt === 'string' ? ref.createdAt : undefined,
    ttl,
  };
}

/** The resume reference of a tracked task on `wire`. */
export function referenceOf(record: TaskRecord, wire: Pick<TaskWire, 'serverIdentity' | 'revision'>): TaskReference {
  const task = record.task;
  return {
    v: 1,
    taskId: record.taskId,
    toolName: record.toolName,
    createdAt: task.createdAt,
    ttl: task.ttl,
    server: wire.serverIdentity(),
    revision: wire.revision,
  };
}
