/**
 * The data of a tool job: building it from a producer's request, and reading it back (checked)
 * in a worker. A malformed job is a clear {@link TaskOptionError}, never a crash.
 */
import { TaskOptionError, type TaskReference } from '../index.js';
import type { ToolJobData, ToolJobRequest } from './types.js';

/** The longest server key accepted: a key names a server, it does not describe one. */
const MAX_SERVER_KEY = 200;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown, option: string, max = Number.MAX_SAFE_INTEGER): string {
  if (typeof value !== 'string' || value === '') {
    throw new TaskOptionError(
      `"${option}" must be a non-empty string, got ${typeof value === 'string' ? 'an empty one' : typeof value}`,
      { option },
    );
  }
  if (value.length > max) throw new TaskOptionError(`"${option}" is longer than ${max} characters`, { option });
  return value;
}

function optionalDuration(value: unknown, option: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TaskOptionError(
      `"${option}" must be a finite number >= ${min}, got ${typeof value === 'number' ? value : typeof value}`,
      { option },
    );
  }
  return value;
}

/**
 * The job data for `request`, with its deadline counted from `now`.
 * @throws TaskOptionError for a malformed request (nothing is enqueued).
 */
export function jobDataFor(request: ToolJobRequest, now: number): ToolJobData {
  if (!isPlainObject(request))
    throw new TaskOptionError('The request must be an object { server, tool, args? }', { option: 'request' });
  const server = nonEmptyString(request.server, 'server', MAX_SERVER_KEY);
  const tool = nonEmptyString(request.tool, 'tool');
  const args = request.args ?? {};
  if (!isPlainObject(args)) throw new TaskOptionError('"args" must be an object', { option: 'args' });
  // Job data is JSON in Redis: what does not survive the trip would reach the tool changed.
  let json: string;
  try {
    json = JSON.stringify(args);
  } catch (error) {
    throw new TaskOptionError(
      `"args" cannot be stored as JSON: ${error instanceof Error ? error.message : String(error)}`,
      { option: 'args', cause: error },
    );
  }
  const timeoutMs = optionalDuration(request.timeoutMs, 'timeoutMs', 1);
  const ttlMs = optionalDuration(request.ttlMs, 'ttlMs', 0);
  return {
    mcpTask: 1,
    server,
    tool,
    args: JSON.parse(json) as Record<string, unknown>,
    ...(timeoutMs === undefined ? {} : { deadlineAt: now + timeoutMs }),
    ...(ttlMs === undefined ? {} : { ttlMs }),
  };
}

function readReference(value: unknown): TaskReference {
  const ref = isPlainObject(value) ? value : {};
  if (typeof ref.taskId !== 'string' || typeof ref.toolName !== 'string') {
    throw new TaskOptionError('The job holds a task reference without a taskId or toolName', {
      option: 'job.data.task',
    });
  }
  // The rest is checked by TaskClient.resume, which refuses what it cannot use.
  return value as TaskReference;
}

/**
 * Reads a worker's job data back.
 * @throws TaskOptionError when it is not tool job data (a job someone else enqueued on this queue).
 */
export function readJobData(data: unknown): ToolJobData {
  if (!isPlainObject(data) || data.mcpTask !== 1) {
    throw new TaskOptionError('This job was not enqueued by enqueueToolTask (its data has no "mcpTask": 1)', {
      option: 'job.data',
    });
  }
  const server = nonEmptyString(data.server, 'server', MAX_SERVER_KEY);
  const tool = nonEmptyString(data.tool, 'tool');
  if (!isPlainObject(data.args)) throw new TaskOptionError('"args" must be an object', { option: 'args' });
  const deadlineAt = optionalDuration(data.deadlineAt, 'deadlineAt', 0);
  const ttlMs = optionalDuration(data.ttlMs, 'ttlMs', 0);
  // A mark or a task that is there but cannot be read is not taken for none: that would call the
  // tool beside a task the job may hold, or beside a worker that is calling it. (A `task` array,
  // which the guarded write's Lua reads as a task, sent the run round and round for good.)
  let calling: ToolJobData['calling'];
  if (data.calling !== undefined && data.calling !== null) {
    if (!isPlainObject(data.calling) || typeof data.calling.at !== 'number') {
      throw new TaskOptionError(
        'The job holds a "calling" mark without its time: another worker may be calling the tool',
        { option: 'job.data.calling' },
      );
    }
    const by = data.calling.by;
    calling = typeof by === 'string' ? { at: data.calling.at, by } : { at: data.calling.at };
  }
  let task: ToolJobData['task'];
  if (data.task !== undefined && data.task !== null) {
    if (!isPlainObject(data.task)) {
      throw new TaskOptionError(
        'The job holds a "task" that is not an object: it may name a task the tool already started',
        { option: 'job.data.task' },
      );
    }
    task = {
      reference: readReference(data.task.reference),
      storedAt: typeof data.task.storedAt === 'number' ? data.task.storedAt : 0,
    };
  }
  return {
    mcpTask: 1,
    server,
    tool,
    args: data.args,
    ...(deadlineAt === undefined ? {} : { deadlineAt }),
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(calling === undefined ? {} : { calling }),
    ...(task === undefined ? {} : { task }),
  };
}
