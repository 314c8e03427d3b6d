/**
 * `ExtServer`: a scripted MCP server for the 2026-07-28 era and the `io.modelcontextprotocol/tasks`
 * extension (SEP-2663), as a raw JSON-RPC peer with no SDK on the server side. It is
 * transport-agnostic: a transport creates a {@link Link} per connection (or per HTTP request) with
 * `attach()` and feeds received messages to `receive()`.
 *
 * Every request first passes the era checks of the core spec (`basic/index.mdx`, `versioning.mdx`):
 * a modern request carries `_meta` protocolVersion + clientCapabilities (else -32602), names a served
 * version (else -32022 with `data.supported`); `initialize` selects the legacy era only when the
 * `legacy` option makes this a dual-era server. Then a `server.on(method, handler)` override or the
 * built-in method runs (see `methods.ts`).
 *
 * Like the legacy `ScriptedServer`: `log` records every received message, `count`/`params`/`received`
 * summarise it, a handler may return {@link NO_REPLY} (answer later with `ctx.reply`/`ctx.fail`, or
 * never), {@link raw}(json) (sent verbatim) or throw `rpcError(...)`. Outgoing messages are JSON
 * round-tripped.
 */
import { builtinMethods } from './methods.js';
import { NO_REPLY, rawMessage } from './reply.js';
import { TaskSubscriptions, type Link, type NotificationMode } from './subscriptions.js';
import { ExtTaskStore, type CancelMode } from './task-store.js';
import type { ExtTool } from './tools.js';
import {
  copyJson,
  errorObject,
  ErrorCode,
  isObject,
  isRpcFailure,
  LEGACY_VERSION,
  META,
  MODERN_VERSION,
  rpcError,
  TASKS_EXTENSION,
  type Json,
  type RequestId,
  type RpcFailure,
} from './wire.js';

export { NO_REPLY, raw } from './reply.js';

/** The era a request was served in. */
export type Era = 'modern' | 'legacy';
/** What a handler knows about the request it answers. */
export interface HandlerContext {
  readonly id: RequestId;
  readonly method: string;
  readonly server: ExtServer;
  readonly link: Link;
  readonly era: Era;
  /** The request's per-request `clientCapabilities` (empty in the legacy era). */
  readonly capabilities: Json;
  /** The request declared the tasks extension (never in the legacy era, SEP-2663 "Backward Compatibility"). */
  readonly declared: boolean;
  /** HTTP request headers (lower-case names) when the request came over HTTP. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  reply(result: unknown): void;
  fail(error: RpcFailure): void;
}
/** Answers one request: a result, {@link NO_REPLY}, {@link raw}(json), or throws a JSON-RPC error. */
export type Handler = (params: Json, ctx: HandlerContext) => unknown;

/** One received message; `at` is `now()` on arrival. */
export interface LoggedMessage {
  readonly at: number;
  readonly kind: 'request' | 'notification' | 'response' | 'invalid';
  readonly method?: string;
  readonly id?: RequestId;
  readonly params: Json;
  readonly message: Json;
  readonly link: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options; every one has a spec-following default. */
export interface ExtServerOptions {
  readonly tools?: readonly ExtTool[];
  /** The value advertised under `capabilities.extensions["io.modelcontextprotocol/tasks"]`; `null` advertises nothing. @default {} */
  readonly extension?: Json | null;
  /** Modern versions served. @default ['2026-07-28'] */
  readonly supportedVersions?: readonly string[];
  /** Also answer `initialize` (dual-era server, legacy semantics, extension advertised but not applied). @default false */
  readonly legacy?: boolean;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  readonly instructions?: string;
  /** Extra server capabilities merged into discover/initialize. */
  readonly capabilities?: Json;
  /** Clock for logs, timestamps, TTL and timed steps. @default Date.now */
  readonly now?: () => number;
  /** Timestamps in whole seconds. @default false */
  readonly wholeSeconds?: boolean;
  /** `resultType` of `tasks/get` results ('omit' sends none). @default 'complete' (SEP-2663 MUST) */
  readonly getResultType?: 'complete' | 'task' | 'omit';
  /** Add `resultType:"complete"` inside a completed task's `result` when missing. @default true */
  readonly stampInnerResultType?: boolean;
  /** @default 'on' */
  readonly notifications?: NotificationMode;
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number | readonly number[];
  readonly expiry?: 'keep' | 'fail' | 'delete';
  readonly cancel?: CancelMode;
  readonly taskIds?: () => string;
  /** Refuse MRTR input kinds the request did not declare (-32021), core MRTR "Server Requirements". @default false */
  readonly requireInputCapabilities?: boolean;
  readonly handlers?: Readonly<Record<string, Handler>>;
}

const LEGACY_VERSIONS = [LEGACY_VERSION, '2025-06-18', '2025-03-26'];

/** The scripted extension server core. */
export class ExtServer {
  readonly log: LoggedMessage[] = [];
  /** Every message sent, with the link it went to. */
  readonly sent: Array<{ readonly link: number; readonly message: Json }> = [];
  readonly tasks: ExtTaskStore;
  readonly subscriptions = new TaskSubscriptions();
  readonly now: () => number;
  readonly tools = new Map<string, ExtTool>();
  /** Switchable at any time (delivery is checked per change). */
  notifications: NotificationMode;
  getResultType: 'complete' | 'task' | 'omit';
  /** Called with every received message as it is logged, before any handling. */
  onReceive: ((entry: LoggedMessage) => void) | undefined;
  private readonly handlers = new Map<string, Handler>();
  private readonly builtins: Readonly<Record<string, Handler>>;
  private readonly links = new Set<Link>();
  private nextLink = 0;

  constructor(readonly options: ExtServerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.notifications = options.notifications ?? 'on';
    this.getResultType = options.getResultType ?? 'complete';
    this.tasks = new ExtTaskStore({
      now: this.now,
      ...pick(options, [
        'wholeSeconds',
        'ttlMs',
        'pollIntervalMs',
        'expiry',
        'cancel',
        'taskIds',
        'stampInnerResultType',
      ]),
    });
    this.tasks.onChange((task) => {
      if (this.notifications === 'on') this.subscriptions.deliver(task);
    });
    for (const tool of options.tools ?? []) this.addTool(tool);
    this.builtins = builtinMethods(this);
    for (const [method, handler] of Object.entries(options.handlers ?? {})) this.on(method, handler);
  }

  /** Sets (replaces) the handler of `method`; it runs after the era checks. */
  on(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }
  /** Adds or replaces a tool. */
  addTool(tool: ExtTool): this {
    this.tools.set(tool.name, tool);
    return this;
  }
  /** Modern versions this server serves. */
  get supportedVersions(): readonly string[] {
    return this.options.supportedVersions ?? [MODERN_VERSION];
  }
  /** Versions named in -32022 errors (legacy ones too on a dual-era server). */
  get advertisedVersions(): string[] {
    return [...this.supportedVersions, ...(this.options.legacy === true ? LEGACY_VERSIONS : [])];
  }
  /** Server capabilities for discover/initialize: tools plus the extension (never a legacy `tasks` slot). */
  serverCapabilities(): Json {
    const caps: Json = { tools: {}, ...copyJson(this.options.capabilities ?? {}) };
    const value = this.options.extension === undefined ? {} : this.options.extension;
    if (value !== null)
      caps.extensions = { ...(isObject(caps.extensions) ? caps.extensions : {}), [TASKS_EXTENSION]: copyJson(value) };
    return caps;
  }
  get serverInfo(): { name: string; version: string } {
    return { ...(this.options.serverInfo ?? { name: 'ext-scripted-server', version: '1.0.0' }) };
  }
  /** Legacy version `initialize` would negotiate for `requested`. */
  legacyVersionFor(requested: unknown): string {
    return typeof requested === 'string' && LEGACY_VERSIONS.includes(requested) ? requested : LEGACY_VERSION;
  }

  /** Opens a link over `sink` (one connection, or one HTTP request). */
  attach(label: string, sink: (message: Json) => void): Link {
    const sent = this.sent;
    const link: Link & { closed: boolean } = {
      id: ++this.nextLink,
      label,
      legacyVersion: undefined,
      closed: false,
      send(message: Json): void {
        if (this.closed) return;
        const copy = copyJson(message);
        sent.push({ link: this.id, message: copy });
        sink(copy);
      },
    };
    this.links.add(link);
    return link;
  }
  /** Closes a link: its subscriptions end without a response (the stream is gone). */
  detach(link: Link): void {
    (link as { closed: boolean }).closed = true;
    this.links.delete(link);
    this.subscriptions.drop(link);
  }
  /** Ends every open subscription gracefully (a `subscriptions/listen` result), as on shutdown. */
  endSubscriptions(): void {
    this.subscriptions.endAll();
  }
  /** Tears every open subscription down with a `notifications/cancelled` and no response. */
  cancelSubscriptions(reason = 'Server shutting down'): void {
    this.subscriptions.cancelAll(reason);
  }
  /** Re-evaluates timed task steps and TTLs (after moving a manual clock, or from a timer). */
  tick(): void {
    this.tasks.tick();
  }
  /** Sends a notification on `link`, or on every open link. */
  notify(method: string, params: Json = {}, link?: Link): void {
    for (const target of link === undefined ? [...this.links] : [link]) target.send({ jsonrpc: '2.0', method, params });
  }

  /** Messages received for `method` (requests and notifications). */
  received(method: string): LoggedMessage[] {
    return this.log.filter((entry) => entry.method === method);
  }
  /** The params of every received `method` message. */
  params(method: string): Json[] {
    return this.received(method).map((entry) => entry.params);
  }
  count(method: string): number {
    return this.received(method).length;
  }
  /** Counts of received messages by method. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { method } of this.log) if (method !== undefined) counts[method] = (counts[method] ?? 0) + 1;
    return counts;
  }

  /** Handles one received message; resolves once its handler returned (or chose not to reply). */
  async receive(message: unknown, link: Link, headers?: Readonly<Record<string, string>>): Promise<void> {
    const body = isObject(message) ? message : {};
    const { id, method } = body as { id?: RequestId; method?: unknown };
    const valid = isObject(message) && body.jsonrpc === '2.0' && (method === undefined || typeof method === 'string');
    const kind = !valid ? 'invalid' : method === undefined ? 'response' : id === undefined ? 'notification' : 'request';
    const params = isObject(body.params) ? body.params : {};
    const entry: LoggedMessage = {
      at: this.now(),
      kind,
      ...(typeof method === 'string' ? { method } : {}),
      ...(id === undefined ? {} : { id }),
      params,
      message: body,
      link: link.id,
      ...(headers === undefined ? {} : { headers }),
    };
    this.log.push(entry);
    this.onReceive?.(entry);
    if (kind === 'invalid')
      return void link.send({
        jsonrpc: '2.0',
        id: id ?? null,
        error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request' },
      });
    if (kind === 'notification') return this.notification(method as string, params, link);
    if (kind === 'request') await this.dispatch(id as RequestId, method as string, params, link, headers);
  }

  private notification(method: string, params: Json, link: Link): void {
    // On stdio a client ends a subscription with notifications/cancelled naming the listen request.
    if (
      method === 'notifications/cancelled' &&
      (typeof params.requestId === 'string' || typeof params.requestId === 'number')
    ) {
      this.subscriptions.cancel(link, params.requestId);
    }
  }

  private async dispatch(
    id: RequestId,
    method: string,
    params: Json,
    link: Link,
    headers: Readonly<Record<string, string>> | undefined,
  ): Promise<void> {
    let done = false;
    const answer = (body: Json): void => {
      if (done) return;
      done = true;
      link.send({ jsonrpc: '2.0', id, ...body });
    };
    const fail = (error: RpcFailure): void => answer({ error: errorObject(error) });
    try {
      const era = this.era(method, params, link);
      const capabilities = era === 'modern' ? ((params._meta as Json)[META.clientCapabilities] as Json) : {};
      const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
      const ctx: HandlerContext = {
        id,
        method,
        server: this,
        link,
        era,
        capabilities,
        declared: era === 'modern' && isObject(extensions[TASKS_EXTENSION]),
        headers,
        reply: (result) => answer({ result }),
        fail,
      };
      const handler = this.handlers.get(method) ?? this.builtins[method];
      if (handler === undefined) return fail(rpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`));
      const result = await handler(params, ctx);
      if (result === NO_REPLY) return;
      const verbatim = rawMessage(result);
      if (verbatim !== undefined) {
        done = true;
        return link.send(verbatim.message as Json);
      }
      answer({ result });
    } catch (error) {
      fail(
        isRpcFailure(error)
          ? error
          : rpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error)),
      );
    }
  }

  /** The core's per-request era rules; throws -32602 / -32022 for requests that fail them. */
  private era(method: string, params: Json, link: Link): Era {
    if (method === 'initialize') return 'legacy';
    const meta = isObject(params._meta) ? params._meta : {};
    const version = meta[META.protocolVersion];
    if (version === undefined) {
      if (link.legacyVersion !== undefined) return 'legacy';
      throw rpcError(ErrorCode.InvalidParams, `Missing required _meta field ${META.protocolVersion}`);
    }
    if (typeof version !== 'string' || !this.supportedVersions.includes(version)) {
      throw rpcError(ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
        supported: this.advertisedVersions,
        requested: version,
      });
    }
    if (!isObject(meta[META.clientCapabilities])) {
      throw rpcError(ErrorCode.InvalidParams, `Missing required _meta field ${META.clientCapabilities}`);
    }
    return 'modern';
  }
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
