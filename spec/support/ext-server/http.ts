/**
 * Streamable HTTP for {@link ExtServer}, in the sessionless 2026-07-28 shape
 * (`basic/transports/streamable-http.mdx`): one POST endpoint, one JSON-RPC message per POST, a
 * request answered with `application/json` or a request-scoped `text/event-stream`; a notification
 * answered `202`; GET/DELETE `405`; no session ids, no resumption. `subscriptions/listen` is answered
 * with an SSE stream that stays open and carries the acknowledgement and `notifications/tasks`.
 *
 * Before the core sees a modern request, the standard headers are checked against the body
 * (SEP-2243 "Server Validation"): `MCP-Protocol-Version` = `_meta` protocolVersion, `Mcp-Method` =
 * `method`, `Mcp-Name` = `params.name` (tools/call, prompts/get), `params.uri` (resources/read) or
 * `params.taskId` (tasks/get|update|cancel, SEP-2663 "Streamable HTTP: Routing Headers"); on
 * `tools/call`, each `Mcp-Param-{Name}` header the tool's current `inputSchema` declares with
 * `x-mcp-header` (SEP-2243 "Custom Headers from Tool Parameters") against the argument it mirrors,
 * Base64 sentinel decoded; a missing or different value is HTTP 400 with -32020.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExtServer } from './server.js';
import { ErrorCode, isObject, META, type Json, type RequestId } from './wire.js';

/** Options of {@link startExtHttpServer}. */
export interface ExtHttpOptions {
  /** @default 0 (ephemeral) */
  readonly port?: number;
  /** @default '/mcp' */
  readonly path?: string;
  /** How ordinary requests are answered (listen is always SSE). @default 'json' */
  readonly responseMode?: 'json' | 'sse';
  /** Validate the standard request headers. @default true */
  readonly checkHeaders?: boolean;
}

/** A request refused by the header check (it never reached the core). */
export interface RejectedRequest {
  readonly message: Json;
  readonly headers: Readonly<Record<string, string>>;
  readonly reason: string;
}

/** A running HTTP endpoint. */
export interface ExtHttpServer {
  readonly url: URL;
  readonly rejected: RejectedRequest[];
  /** Switchable at any time. */
  responseMode: 'json' | 'sse';
  /** Ends open subscription streams gracefully and closes the listener. */
  close(): Promise<void>;
}

const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);
const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/** HTTP status for a JSON-RPC error the core produced (the transport spec names 400 and 404). */
function statusFor(error: Json | undefined): number {
  const code = error?.code;
  if (code === ErrorCode.MethodNotFound) return 404;
  if (
    code === ErrorCode.HeaderMismatch ||
    code === ErrorCode.MissingRequiredClientCapability ||
    code === ErrorCode.UnsupportedProtocolVersion
  )
    return 400;
  if (code === ErrorCode.InvalidParams && String(error?.message).startsWith('Missing required _meta')) return 400;
  return 200;
}
/** Decodes the `=?base64?...?=` sentinel form of a header value. */
function decodeHeader(value: string): string {
  const match = /^=\?base64\?(.*)\?=$/.exec(value);
  return match === null ? value : Buffer.from(match[1]!, 'base64').toString('utf8');
}
/** The `Mcp-Name` source value of a request, if its method has one. */
function nameSource(method: string, params: Json): unknown {
  if (method === 'tools/call' || method === 'prompts/get') return params.name;
  if (method === 'resources/read') return params.uri;
  return TASK_METHODS.has(method) ? params.taskId : undefined;
}
/** The `x-mcp-header` names of a schema with their property paths (through `properties` only). */
function declaredParams(schema: unknown, path: readonly string[] = []): Array<[string, readonly string[]]> {
  if (!isObject(schema)) return [];
  const own: Array<[string, readonly string[]]> =
    path.length > 0 && typeof schema['x-mcp-header'] === 'string' ? [[schema['x-mcp-header'], path]] : [];
  const properties = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  return [...own, ...properties.flatMap(([name, sub]) => declaredParams(sub, [...path, name]))];
}
/** Why a tools/call's `Mcp-Param-*` headers do not match its arguments, or `undefined` when they do. */
function paramProblem(server: ExtServer, params: Json, headers: Readonly<Record<string, string>>): string | undefined {
  const tool = typeof params.name === 'string' ? server.tools.get(params.name) : undefined;
  for (const [name, path] of declaredParams(tool?.inputSchema)) {
    let value: unknown = params.arguments;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    if (value === undefined || value === null) continue; // no header expected
    const body = typeof value === 'string' ? value : JSON.stringify(value);
    const sent = headers[`mcp-param-${name.toLowerCase()}`];
    if (sent === undefined) return `Mcp-Param-${name} header is missing`;
    if (decodeHeader(sent) !== body) return `Mcp-Param-${name} header '${sent}' does not match body value '${body}'`;
  }
  return undefined;
}
/** Why the headers do not match the body, or `undefined` when they do. */
function headerProblem(method: string, params: Json, headers: Readonly<Record<string, string>>): string | undefined {
  const version = isObject(params._meta) ? params._meta[META.protocolVersion] : undefined;
  const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
  const sentVersion = headers['mcp-protocol-version'];
  if (sentVersion === undefined) return 'MCP-Protocol-Version header is missing';
  if (version !== undefined && sentVersion !== version)
    return `MCP-Protocol-Version header '${sentVersion}' does not match body '${show(version)}'`;
  const sentMethod = headers['mcp-method'];
  if (sentMethod === undefined) return 'Mcp-Method header is missing';
  if (sentMethod !== method) return `Mcp-Method header '${sentMethod}' does not match body '${method}'`;
  const name = nameSource(method, params);
  if (name === undefined) return undefined;
  const sentName = headers['mcp-name'];
  if (sentName === undefined) return 'Mcp-Name header is missing';
  if (decodeHeader(sentName) !== show(name))
    return `Mcp-Name header '${sentName}' does not match body value '${show(name)}'`;
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
function json(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
}
function sseEvent(res: ServerResponse, message: Json): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/** Starts `server` on 127.0.0.1 (ephemeral port unless given). */
export async function startExtHttpServer(server: ExtServer, options: ExtHttpOptions = {}): Promise<ExtHttpServer> {
  const path = options.path ?? '/mcp';
  const open = new Set<ServerResponse>();
  const rejected: RejectedRequest[] = [];
  const endpoint: { responseMode: 'json' | 'sse' } = { responseMode: options.responseMode ?? 'json' };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== path) return void res.writeHead(404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const origin = req.headers.origin;
    if (origin !== undefined && !LOCAL_ORIGIN.test(origin))
      return json(res, 403, { jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: 'Forbidden origin' } });
    let message: unknown;
    try {
      message = JSON.parse(await readBody(req));
    } catch {
      return json(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.ParseError, message: 'Parse error' },
      });
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
    if (!isObject(message) || typeof message.method !== 'string') {
      return json(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.InvalidRequest, message: 'Expected one JSON-RPC request or notification' },
      });
    }
    const method = message.method;
    const params = isObject(message.params) ? message.params : {};
    const id = message.id as RequestId | undefined;
    const modern =
      (isObject(params._meta) && params._meta[META.protocolVersion] !== undefined) ||
      server.supportedVersions.includes(headers['mcp-protocol-version'] ?? '');
    if (id === undefined) {
      const link = server.attach('http', () => {});
      await server.receive(message, link, headers);
      server.detach(link);
      return void res.writeHead(202).end();
    }
    if (options.checkHeaders !== false && modern && method !== 'initialize') {
      const reason =
        headerProblem(method, params, headers) ??
        (method === 'tools/call' ? paramProblem(server, params, headers) : undefined);
      if (reason !== undefined) {
        rejected.push({ message, headers, reason });
        return json(res, 400, {
          jsonrpc: '2.0',
          id,
          error: { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${reason}` },
        });
      }
    }
    const listen = method === 'subscriptions/listen';
    let streaming = false;
    let finished = false;
    const link = server.attach('http', (out) => {
      if (finished) return;
      const final = out.id === id && out.method === undefined;
      // An error answered before any stream started keeps its HTTP status (400/404), even for listen.
      if (!streaming && final && (isObject(out.error) || (endpoint.responseMode === 'json' && !listen))) {
        finished = true;
        server.detach(link);
        return json(res, isObject(out.error) ? statusFor(out.error) : 200, out);
      }
      if (!streaming && (listen || endpoint.responseMode === 'sse')) {
        streaming = true;
        open.add(res);
        startSse(res);
      }
      if (!streaming) return; // request-scoped notifications cannot ride a JSON answer
      sseEvent(res, out);
      if (final) {
        finished = true;
        server.detach(link);
        open.delete(res);
        res.end();
      }
    });
    if (server.options.legacy === true && !modern && headers['mcp-protocol-version'] !== undefined) {
      link.legacyVersion = headers['mcp-protocol-version'];
    }
    // Closing the response stream cancels the request (and ends a subscription).
    res.on('close', () => {
      open.delete(res);
      if (!finished) server.detach(link);
    });
    await server.receive(message, link, headers);
  };

  const http = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        json(res, 500, { jsonrpc: '2.0', id: null, error: { code: ErrorCode.InternalError, message: String(error) } });
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return Object.assign(endpoint, {
    url: new URL(`http://127.0.0.1:${port}${path}`),
    rejected,
    close: async () => {
      server.endSubscriptions();
      for (const res of open) res.end();
      open.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  });
}
