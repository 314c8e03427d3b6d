/**
 * The MCP 2025-11-25 tasks wire over an SDK v1 `Client`. Every request goes through
 * `client.request(...)` with clean options (no `task` on polls, D2; no SDK task helpers, which SDK
 * v2 removed) and a permissive result schema; the explicit decoders in `decode-2025.ts` do the
 * validation.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ResultSchema, type JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import { TaskProtocolError, TaskRpcError } from '../errors.js';
import {
  decodeStart,
  decodeTask,
  decodeTaskPage,
  decodeTaskPayload,
  decodeToolPage,
} from './decode-2025.js';
import { onTransportClose, tapNotification } from './sdk-hooks.js';
import type {
  StartOutcome,
  StartToolCall,
  TaskOutcome,
  TaskPage,
  TaskWire,
  ToolPage,
  WireCapabilities,
  WireEvents,
  WireProgress,
  WireRequestOptions,
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
  if (error instanceof McpError) {
    const prefix = `MCP error ${error.code}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    const transient = error.code === REQUEST_TIMEOUT || error.code === CONNECTION_CLOSED;
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

  constructor(private readonly client: Client) {}

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
    onprogress?: (progress: WireProgress) => void,
  ): Promise<unknown> {
    try {
      return await this.client.request({ method, params }, ResultSchema, {
        timeout: Math.min(Math.max(options.timeoutMs, 1), MAX_TIMER_MS),
        signal: options.signal,
        onprogress,
      });
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
    // D3: send only {ttl} in `task`, never the SDK's extra pollInterval.
    if (call.task !== undefined) params.task = call.task.ttl === undefined ? {} : { ttl: call.task.ttl };
    if (call.meta !== undefined) params._meta = { ...call.meta };
    return decodeStart(await this.send('tools/call', params, options, undefined, call.onProgress));
  }

  async getTask(taskId: string, options: WireRequestOptions): Promise<ReturnType<typeof decodeTask>> {
    return decodeTask(await this.send('tasks/get', { taskId }, options, taskId), 'tasks/get');
  }

  async getOutcome(taskId: string, options: WireRequestOptions): Promise<TaskOutcome> {
    try {
      const value = await this.send('tasks/result', { taskId }, options, taskId);
      return { kind: 'result', result: decodeTaskPayload(value, taskId) };
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

  async cancelTask(taskId: string, options: WireRequestOptions): Promise<ReturnType<typeof decodeTask>> {
    return decodeTask(await this.send('tasks/cancel', { taskId }, options, taskId), 'tasks/cancel');
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
      onTransportClose(this.client, () => events.closed()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }
}

function stripMethod(error: TaskRpcError): string {
  const prefix = `${error.method} failed: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

