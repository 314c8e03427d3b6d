/**
 * The MCP 2025-11-25 tasks wire over an SDK v1 `Client`. Every request goes through
 * `client.request(...)` with clean options (no `task` on polls, [S2]; no SDK task helpers, which SDK
 * v2 removed) and a permissive result schema; the explicit decoders in `decode-2025.ts` do the
 * validation.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  McpError,
  ResultSchema,
  type JSONRPCNotification,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';
import { TaskProtocolError, TaskRpcError } from '../errors.js';
import { fingerprint, scrub } from '../util/fingerprint.js';
import type { Task } from '../types.js';
import {
  RELATED_TASK_KEY,
  decodeStart,
  decodeTask,
  decodeTaskPage,
  decodeTaskPayload,
  decodeToolPage,
  relatedTaskId,
} from './decode-2025.js';
import { MALFORMED_REPLY, guardResponses, onTransportClose, tapNotification, tapRequest } from './sdk-hooks.js';
import {
  PROGRESS_TOKEN_PREFIX,
  type InputHandler,
  type InputKind,
  type StartOutcome,
  type StartToolCall,
  type TaskOutcome,
  type TaskPage,
  type TaskWire,
  type ToolPage,
  type WireCapabilities,
  type WireEvents,
  type WireRequestOptions,
} from './wire.js';

/** Largest delay `setTimeout` honours; the SDK's request timer fires at once above it. */
export const MAX_TIMER_MS = 2_147_483_647;

const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;

/** JSON-RPC codes that mean "invalid task id" or a protocol mismatch; never retried. */
export const INVALID_PARAMS = -32602;

/** Turns whatever a request threw into a {@link TaskRpcError} (or passes a protocol error on). */
export function toRpcError(method: string, error: unknown, taskId?: string): TaskRpcError | TaskProtocolError {
  if (error instanceof TaskRpcError || error instanceof TaskProtocolError) return error;
  if (error instanceof McpError && (error.data as Record<string, unknown> | undefined)?.[MALFORMED_REPLY] === true) {
    return new TaskProtocolError(`Malformed ${method} reply from server`, { method, taskId, cause: error });
  }
  if (error instanceof McpError) {
    const prefix = `MCP error ${error.code}: `;
    // Servers often name the task in their messages ("Task not found: <id>"): never repeat the id.
    const message = scrub(error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message, taskId);
    // Only the SDK's own local failures are transient: its request timeout (data.timeout) and its
    // closed connection. The same codes sent by a server are the server's errors.
    const data = error.data as { timeout?: unknown } | undefined;
    const transient =
      (error.code === REQUEST_TIMEOUT && typeof data?.timeout === 'number') ||
      (error.code === CONNECTION_CLOSED && message === 'Connection closed');
    return new TaskRpcError(`${method} failed: ${message}`, {
      method,
      code: error.code,
      data: error.data,
      transient,
      taskId,
      cause: error,
    });
  }
  const status = (error as { code?: unknown } | null)?.code;
  const httpStatus = typeof status === 'number' && status >= 100 && status < 600 ? status : undefined;
  if ((error as { name?: unknown } | null)?.name === 'ZodError') {
    return new TaskProtocolError(`Malformed ${method} from server: result is not an object`, {
      method,
      taskId,
      cause: error,
    });
  }
  // Anything else is a transport failure: a closed or reset connection, or an HTTP error status.
  const transient = httpStatus === undefined || httpStatus >= 500 || httpStatus === 429 || httpStatus === 408;
  const text = error instanceof Error ? error.message : String(error);
  return new TaskRpcError(`${method} failed: ${text}`, {
    method,
    code: CONNECTION_CLOSED,
    data: httpStatus === undefined ? undefined : { httpStatus },
    transient,
    taskId,
    cause: error,
  });
}

/** A {@link TaskWire} for protocol revision 2025-11-25. */
export class Wire2025 implements TaskWire {
  readonly revision = '2025-11-25';
  readonly inputViaResult = true;

  constructor(private readonly client: Client) {
    guardResponses(client);
  }

  capabilities(): WireCapabilities {
    const tasks = this.client.getServerCapabilities()?.tasks;
    return {
      toolsCall: tasks?.requests?.tools?.call !== undefined,
      cancel: tasks?.cancel !== undefined,
      list: tasks?.list !== undefined,
    };
  }

  serverIdentity(): string {
    const info = this.client.getServerVersion();
    return info === undefined ? 'unknown' : `${info.name}@${info.version}`;
  }

  private async send(
    method: string,
    params: Record<string, unknown> | undefined,
    options: WireRequestOptions,
    taskId?: string,
  ): Promise<unknown> {
    try {
      const timeout = Math.min(Math.max(options.timeoutMs, 1), MAX_TIMER_MS);
      return await this.client.request(
        { method, params },
        ResultSchema,
        options.signal === undefined ? { timeout } : { timeout, signal: options.signal },
      );
    } catch (error) {
      throw toRpcError(method, error, taskId);
    }
  }

  async listTools(cursor: string | undefined, options: WireRequestOptions): Promise<ToolPage> {
    return decodeToolPage(await this.send('tools/list', cursor === undefined ? undefined : { cursor }, options));
  }

  async callTool(call: StartToolCall, options: WireRequestOptions): Promise<StartOutcome> {
    const params: Record<string, unknown> = { name: call.name };
    if (call.arguments !== undefined) params.arguments = call.arguments;
    // [S3]: send only {ttl} in `task`, never the SDK's extra pollInterval.
    if (call.task !== undefined) params.task = call.task.ttl === undefined ? {} : { ttl: call.task.ttl };
    if (call.meta !== undefined || call.progressToken !== undefined) {
      params._meta = call.progressToken === undefined ? { ...call.meta } : { ...call.meta, progressToken: call.progressToken };
    }
    return decodeStart(await this.send('tools/call', params, options), call.task !== undefined);
  }

  async getTask(taskId: string, options: WireRequestOptions): Promise<Task> {
    return sameTask(decodeTask(await this.send('tasks/get', { taskId }, options, taskId), 'tasks/get'), taskId, 'tasks/get');
  }

  async getOutcome(taskId: string, options: WireRequestOptions): Promise<TaskOutcome> {
    try {
      const value = await this.send('tasks/result', { taskId }, options, taskId);
      return { kind: 'result', ...decodeTaskPayload(value, taskId) };
    } catch (error) {
      // [V17]/[V18]: a JSON-RPC error the server sent for tasks/result is the task's own error,
      // except -32602 (unknown or expired task, [V26]). Local failures stay errors.
      if (error instanceof TaskRpcError && error.cause instanceof McpError && !error.transient && error.code !== INVALID_PARAMS) {
        const message = stripMethod(error);
        return {
          kind: 'error',
          error: error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data },
        };
      }
      throw error;
    }
  }

  async cancelTask(taskId: string, options: WireRequestOptions): Promise<Task> {
    const task = decodeTask(await this.send('tasks/cancel', { taskId }, options, taskId), 'tasks/cancel');
    return sameTask(task, taskId, 'tasks/cancel');
  }

  inputCapabilities(): Readonly<Record<InputKind, boolean>> {
    // The SDK delivers these requests only if the client declared the capability at connect time.
    const declared = (this.client as unknown as { _capabilities?: Record<string, unknown> })._capabilities ?? {};
    return { elicitation: declared.elicitation !== undefined, sampling: declared.sampling !== undefined };
  }

  serveInput(handler: InputHandler, owns: (taskId: string) => boolean): () => void {
    // Several TaskClients may share one SDK client: a request tagged with a task one of them owns
    // goes to that one, whatever order their taps run in.
    let owners = OWNERS.get(this.client);
    if (owners === undefined) OWNERS.set(this.client, (owners = new Set()));
    owners.add(owns);
    const registry = owners;
    const offs = INPUT_METHODS.map(([method, kind]) =>
      tapRequest(
        this.client,
        method,
        (request, extra) => {
          const params = (request.params ?? {}) as Record<string, unknown>;
          const taskId = relatedTaskId(params);
          if (taskId !== undefined && !owns(taskId) && [...registry].some((other) => other(taskId))) return undefined;
          const answer = handler({ kind, params, taskId, signal: extra.signal });
          return answer?.then(
            (result) => (result === undefined ? undefined : finishAnswer(kind, result, taskId)),
            (error: unknown) => {
              if (error instanceof McpError) throw error;
              const message = error instanceof Error ? error.message : String(error);
              throw new McpError(-32603, `The ${kind} callback failed: ${message}`);
            },
          );
        },
        // Nobody can answer: say so plainly rather than decline on the user's behalf.
        (request) => {
          const taskId = relatedTaskId(request.params);
          const about = taskId === undefined ? '' : ` for task ${fingerprint(taskId)}`;
          const option = kind === 'elicitation' ? 'onElicitation' : 'onSampling';
          return new McpError(-32601, `No ${kind} handler${about}: pass ${option} to the TaskClient or the call`);
        },
      ),
    );
    return () => {
      registry.delete(owns);
      for (const off of offs) off();
    };
  }

  async listTasks(cursor: string | undefined, options: WireRequestOptions): Promise<TaskPage> {
    const value = await this.send('tasks/list', cursor === undefined ? undefined : { cursor }, options);
    return decodeTaskPage(value, () => {});
  }

  subscribe(events: WireEvents): () => void {
    const onStatus = (notification: JSONRPCNotification): boolean => {
      try {
        events.status(decodeTask(notification.params, 'notifications/tasks/status'));
      } catch (error) {
        events.malformed(error as Error);
      }
      return false;
    };
    const offs = [
      tapNotification(this.client, 'notifications/tasks/status', onStatus),
      tapNotification(this.client, 'notifications/tools/list_changed', () => {
        events.toolsChanged();
      }),
      // Progress for our own tokens is consumed here; every other token stays with the SDK.
      tapNotification(this.client, 'notifications/progress', (notification) => {
        const params = notification.params;
        const token = params?.progressToken;
        if (typeof token !== 'string' || !token.startsWith(PROGRESS_TOKEN_PREFIX)) return false;
        const progress = typeof params?.progress === 'number' ? params.progress : Number.NaN;
        if (!Number.isFinite(progress)) return true;
        return events.progress(token, {
          progress,
          ...(typeof params?.total === 'number' ? { total: params.total } : {}),
          ...(typeof params?.message === 'string' ? { message: params.message } : {}),
        });
      }),
      onTransportClose(this.client, () => events.closed()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }
}

/** Per SDK client, who owns which tasks (one entry per TaskClient serving input on it). */
const OWNERS = new WeakMap<Client, Set<(taskId: string) => boolean>>();

const INPUT_METHODS: ReadonlyArray<readonly [string, InputKind]> = [
  ['elicitation/create', 'elicitation'],
  ['sampling/createMessage', 'sampling'],
];

/** Checks an input answer's shape with the SDK's own schema and tags it with its task ([R31]). */
function finishAnswer(kind: InputKind, answer: unknown, taskId: string | undefined): Result {
  const schema = kind === 'elicitation' ? ElicitResultSchema : CreateMessageResultSchema;
  const parsed = schema.safeParse(answer);
  if (!parsed.success) {
    throw new McpError(-32603, `The ${kind} callback returned an invalid result: ${parsed.error.message}`);
  }
  if (taskId === undefined) return parsed.data;
  return { ...parsed.data, _meta: { ...parsed.data._meta, [RELATED_TASK_KEY]: { taskId } } };
}

/** A reply about another task than the one asked for is malformed, never adopted. */
function sameTask(task: Task, taskId: string, method: string): Task {
  if (task.taskId === taskId) return task;
  throw new TaskProtocolError(`Malformed ${method} from server: the reply names another task`, { method, taskId });
}

function stripMethod(error: TaskRpcError): string {
  const prefix = `${error.method} failed: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

