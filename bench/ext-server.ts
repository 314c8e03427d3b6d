/**
 * The benchmark server of the 2026-07-28 `io.modelcontextprotocol/tasks` extension wire
 * (SEP-2663): a lean raw JSON-RPC peer, written for measuring, from the scripted extension server
 * of the tests (spec/support/ext-server). That one logs and deep-copies every message and scans
 * every task on each tick, which is right for tests and too heavy to measure against; this one
 * keeps only what the measurements need, like {@link BenchServer} for the 2025-11-25 wire:
 *
 * - `server/discover` offers the extension (settings `{}`), `tools/list` one tool, `work({ms})`;
 * - `tools/call` that declares the extension creates a task (`resultType: "task"`) that completes
 *   `ms` after the gate opens; `tasks/get` carries the result inline once completed; `tasks/cancel`
 *   and `tasks/update` acknowledge;
 * - with `notify`, `subscriptions/listen` is acknowledged with the known task ids and every
 *   completion is pushed as `notifications/tasks` (the full task, result included) on each open
 *   subscription that names it; a `notifications/cancelled` naming the listen ends it. Without
 *   `notify` (polling only) the server has no subscriptions: `-32601`;
 * - it counts requests and notifications by method, records each completion time on the
 *   wall-aligned clock of `stats.ts`, and the shortest gap between the creation answer and a poll
 *   or two polls of one task.
 *
 * It is transport-agnostic: a connection is a {@link ExtLink}; `bench/transports.ts` wires it to
 * an in-memory pair, stdio or Streamable HTTP.
 */
import { randomUUID } from 'node:crypto';
import { now } from './stats.js';
import type { ServerCore, ServerStats } from './server.js';

/** The extension identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const MODERN_VERSION = '2026-07-28';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';

type Json = Record<string, unknown>;
type RequestId = string | number;

/** One connection (a stdio pipe, an in-memory pair, or one HTTP request). */
export interface ExtLink {
  send(message: Json): void;
  /** Called when a request on this link got its final answer (HTTP ends the response). */
  readonly onAnswered?: (id: RequestId) => void;
}

/** Options of the extension bench server. */
export interface ExtBenchServerOptions {
  /** `pollIntervalMs` of every task. @default 1000 */
  readonly pollInterval?: number;
  /** Serve `subscriptions/listen` and push `notifications/tasks`. @default true */
  readonly notify?: boolean;
}

interface ExtTask {
  readonly taskId: string;
  status: 'working' | 'completed' | 'cancelled';
  readonly createdAt: string;
  lastUpdatedAt: string;
  result: Json | undefined;
}

interface Subscription {
  readonly link: ExtLink;
  readonly id: RequestId;
  readonly taskIds: ReadonlySet<string>;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The lean extension server and its measurements. */
export class ExtBenchServer implements ServerCore {
  private readonly tasks = new Map<string, ExtTask>();
  private readonly subscriptions: Subscription[] = [];
  private readonly requests = new Map<string, number>();
  private readonly clientNotifications = new Map<string, number>();
  private readonly serverNotifications = new Map<string, number>();
  private readonly lastTouch = new Map<string, number>();
  private readonly completedAt = new Map<string, number>();
  private minGap = Infinity;
  private created = 0;
  private openGate: () => void = () => {};
  private gate: Promise<void> = Promise.resolve();
  private readonly pollInterval: number;
  private readonly notify: boolean;

  constructor(options: ExtBenchServerOptions = {}) {
    this.pollInterval = options.pollInterval ?? 1000;
    this.notify = options.notify ?? true;
  }

  /** Handles one message received on `link`. */
  receive(message: unknown, link: ExtLink): void {
    if (!isObject(message) || typeof message.method !== 'string') return;
    const method = message.method;
    const params = isObject(message.params) ? message.params : {};
    const id = message.id as RequestId | undefined;
    if (id === undefined) {
      bump(this.clientNotifications, method);
      if (method === 'notifications/cancelled') this.cancelSubscription(link, params.requestId as RequestId);
      return;
    }
    bump(this.requests, method);
    let result: Json | undefined;
    try {
      result = this.answer(method, params, link, id);
    } catch (error) {
      const { code, message: text } = error as { code: number; message: string };
      this.send(link, { jsonrpc: '2.0', id, error: { code: typeof code === 'number' ? code : -32603, message: text } });
      link.onAnswered?.(id);
      return;
    }
    if (result === undefined) return; // a subscription stays open
    this.send(link, { jsonrpc: '2.0', id, result });
    link.onAnswered?.(id);
  }

  private answer(method: string, params: Json, link: ExtLink, id: RequestId): Json | undefined {
    switch (method) {
      case 'server/discover':
        return {
          resultType: 'complete',
          supportedVersions: [MODERN_VERSION],
          capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
          ttlMs: 0,
          cacheScope: 'private',
          _meta: { [SERVER_INFO_KEY]: { name: 'bench-ext-server', version: '1.0.0' } },
        };
      case 'ping':
        return {};
      case 'tools/list':
        return {
          resultType: 'complete',
          tools: [
            {
              name: 'work',
              description: 'Completes after `ms` milliseconds.',
              inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
            },
          ],
          ttlMs: 0,
          cacheScope: 'private',
        };
      case 'tools/call':
        return this.call(params);
      case 'tasks/get': {
        const task = this.task(params);
        const t = now();
        const last = this.lastTouch.get(task.taskId);
        if (last !== undefined) this.minGap = Math.min(this.minGap, t - last);
        this.lastTouch.set(task.taskId, t);
        return { resultType: 'complete', ...this.detailed(task) };
      }
      case 'tasks/cancel': {
        const task = this.task(params);
        if (task.status === 'working') this.finish(task, 'cancelled', undefined);
        return { resultType: 'complete' };
      }
      case 'tasks/update':
        this.task(params);
        return { resultType: 'complete' };
      case 'subscriptions/listen':
        return this.listen(params, link, id);
      default:
        throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
    }
  }

  private call(params: Json): Json {
    const args = isObject(params.arguments) ? params.arguments : {};
    const ms = typeof args.ms === 'number' ? args.ms : 0;
    const result = { resultType: 'complete', content: [{ type: 'text', text: `worked ${ms} ms` }] };
    const meta = isObject(params._meta) ? params._meta : {};
    const capabilities = isObject(meta[CAPABILITIES_KEY]) ? meta[CAPABILITIES_KEY] : {};
    const declared = isObject(capabilities.extensions) && isObject(capabilities.extensions[TASKS_EXTENSION]);
    if (!declared) return result;
    const at = new Date().toISOString();
    const task: ExtTask = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: at,
      lastUpdatedAt: at,
      result: undefined,
    };
    this.tasks.set(task.taskId, task);
    this.created += 1;
    void (async () => {
      await this.gate;
      await sleep(ms);
      if (task.status === 'working') this.finish(task, 'completed', result);
    })();
    const answer = { resultType: 'task', ...this.detailed(task) };
    this.lastTouch.set(task.taskId, now());
    return answer;
  }

  private task(params: Json): ExtTask {
    const task = typeof params.taskId === 'string' ? this.tasks.get(params.taskId) : undefined;
    if (task === undefined) throw Object.assign(new Error('Task not found'), { code: -32602 });
    return task;
  }

  private detailed(task: ExtTask): Json {
    const body: Json = {
      taskId: task.taskId,
      status: task.status,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: 60_000,
      pollIntervalMs: this.pollInterval,
    };
    if (task.result !== undefined) body.result = task.result;
    return body;
  }

  private finish(task: ExtTask, status: 'completed' | 'cancelled', result: Json | undefined): void {
    task.status = status;
    task.result = result;
    task.lastUpdatedAt = new Date().toISOString();
    if (status === 'completed') this.completedAt.set(task.taskId, now());
    for (const s of this.subscriptions) {
      if (!s.taskIds.has(task.taskId)) continue;
      this.send(s.link, {
        jsonrpc: '2.0',
        method: 'notifications/tasks',
        params: { ...this.detailed(task), _meta: { [SUBSCRIPTION_KEY]: s.id } },
      });
    }
  }

  private listen(params: Json, link: ExtLink, id: RequestId): undefined {
    if (!this.notify) throw Object.assign(new Error('Method not found: subscriptions/listen'), { code: -32601 });
    const notifications = isObject(params.notifications) ? params.notifications : {};
    const requested = Array.isArray(notifications.taskIds) ? notifications.taskIds : [];
    const agreed = requested.filter((taskId): taskId is string => typeof taskId === 'string' && this.tasks.has(taskId));
    this.subscriptions.push({ link, id, taskIds: new Set(agreed) });
    this.send(link, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_KEY]: id }, notifications: agreed.length === 0 ? {} : { taskIds: agreed } },
    });
    return undefined;
  }

  private cancelSubscription(link: ExtLink, id: RequestId): void {
    const index = this.subscriptions.findIndex((s) => s.link === link && s.id === id);
    if (index < 0) return;
    this.subscriptions.splice(index, 1);
    link.onAnswered?.(id);
  }

  /** Drops the subscriptions of a closed connection. */
  detach(link: ExtLink): void {
    for (let i = this.subscriptions.length - 1; i >= 0; i -= 1)
      if (this.subscriptions[i]!.link === link) this.subscriptions.splice(i, 1);
  }

  private send(link: ExtLink, message: Json): void {
    if (typeof message.method === 'string' && message.id === undefined) bump(this.serverNotifications, message.method);
    link.send(message);
  }

  reset(gate: boolean): void {
    this.requests.clear();
    this.clientNotifications.clear();
    this.serverNotifications.clear();
    this.lastTouch.clear();
    this.completedAt.clear();
    for (const [taskId, task] of this.tasks) if (task.status !== 'working') this.tasks.delete(taskId);
    this.minGap = Infinity;
    this.created = 0;
    if (gate) this.gate = new Promise((resolve) => (this.openGate = resolve));
    else this.release();
  }

  release(): void {
    this.openGate();
  }

  stats(): ServerStats {
    return {
      requests: Object.fromEntries(this.requests),
      clientNotifications: Object.fromEntries(this.clientNotifications),
      serverNotifications: Object.fromEntries(this.serverNotifications),
      completedAt: Object.fromEntries(this.completedAt),
      minPollGapMs: Number.isFinite(this.minGap) ? this.minGap : null,
      created: this.created,
    };
  }

  close(): void {
    this.openGate();
    this.subscriptions.length = 0;
  }
}
