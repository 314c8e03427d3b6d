/**
 * `Mcp-Param-*` headers over Streamable HTTP on 2026-07-28 ([E32], [E33]), through the public API:
 * SDK v2's own client transport against the scripted extension server on 127.0.0.1, whose header
 * check refuses (HTTP 400, -32020) a `tools/call` whose `Mcp-Param-{Name}` headers do not match
 * the arguments its tool's current `inputSchema` declares with `x-mcp-header`. Refused requests
 * never reach the server's core (`endpoint.rejected` has them, `server.log` does not).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskClosedError,
  TaskProtocolError,
  TaskRpcError,
  TaskTimeoutError,
  type TaskClientOptions,
  type TaskError,
} from '../../lib/index.js';
import { rejection, until, within } from '../helpers.js';
import {
  ExtServer,
  NO_REPLY,
  elicitation,
  mrtrTool,
  outcome,
  startExtHttpServer,
  taskTool,
  textResult,
  type ExtHttpServer,
  type ExtTool,
  type Json,
} from '../support/ext-server/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A schema mirroring `region`, `greeting`, `verbose` and `priority` into headers. */
const ROUTED: Json = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    greeting: { type: 'string', 'x-mcp-header': 'Greeting' },
    verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
    priority: { type: 'integer', 'x-mcp-header': 'Priority' },
    query: { type: 'string' },
  },
};

/** A plain tool (answers at once) with `inputSchema`. */
function plainTool(name: string, inputSchema: Json): ExtTool {
  return { name, inputSchema, run: ({ args }) => outcome.text(`ran in ${String(args.region)}`) };
}

async function serve(
  tools: ExtTool[],
  options: TaskClientOptions = {},
): Promise<{ server: ExtServer; endpoint: ExtHttpServer; tasks: TaskClient }> {
  const server = new ExtServer({ tools, pollIntervalMs: 20 });
  const endpoint = await startExtHttpServer(server);
  cleanups.push(() => endpoint.close());
  const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), {
    sdk: 'v2',
    minPollIntervalMs: 10,
    ...options,
  });
  cleanups.push(() => tasks.close());
  return { server, endpoint, tasks };
}

/** The `Mcp-Param-*` headers of each `tools/call` the server's core received. */
function paramHeadersSeen(server: ExtServer): Array<Record<string, string>> {
  return server
    .received('tools/call')
    .map((entry) =>
      Object.fromEntries(Object.entries(entry.headers ?? {}).filter(([name]) => name.startsWith('mcp-param-'))),
    );
}

describe('Mcp-Param-* headers over Streamable HTTP ([E32])', () => {
  it('mirrors the declared arguments of a listed tool: plain, Base64 sentinel, integer; a null one omitted', async () => {
    const { server, endpoint, tasks } = await serve([
      taskTool('route', { steps: [{ result: textResult('routed') }] }, { inputSchema: ROUTED }),
    ]);
    await tasks.tools();
    const handle = await tasks.callToolAsTask('route', {
      region: 'us-west1',
      greeting: 'Hello, 世界',
      verbose: null,
      priority: 42,
      query: 'SELECT 1',
    });
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'routed' }]);
    expect(endpoint.rejected).toEqual([]);
    expect(paramHeadersSeen(server)).toEqual([
      {
        'mcp-param-region': 'us-west1',
        'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=',
        'mcp-param-priority': '42',
      },
    ]);
    expect(server.count('tools/list')).toBe(1); // the call read no listing of its own
  });

  it('sends a call of a tool not listed yet without them; refused with -32020, it lists the tools and is sent once more with them ([E33])', async () => {
    const { server, endpoint, tasks } = await serve([plainTool('lookup', ROUTED)]);
    const handle = await tasks.callToolAsTask('lookup', { region: ' padded ', verbose: true });
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'ran in  padded ' }]);
    expect(endpoint.rejected.map((r) => r.reason)).toEqual(['Mcp-Param-Region header is missing']);
    expect(server.count('tools/list')).toBe(1);
    expect(paramHeadersSeen(server)).toEqual([
      { 'mcp-param-region': '=?base64?IHBhZGRlZCA=?=', 'mcp-param-verbose': 'true' },
    ]);
  });

  it('recovers from a stale listing: the schema changed after it was listed ([E33])', async () => {
    const { server, endpoint, tasks } = await serve([
      plainTool('lookup', { type: 'object', properties: { region: { type: 'string' } } }),
    ]);
    expect((await tasks.tools()).map((tool) => tool.name)).toEqual(['lookup']);
    server.addTool(plainTool('lookup', ROUTED)); // no notifications/tools/list_changed
    const handle = await tasks.callToolAsTask('lookup', { region: 'eu-north1' });
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'ran in eu-north1' }]);
    expect(endpoint.rejected).toHaveLength(1);
    expect(server.count('tools/list')).toBe(2);
    expect(paramHeadersSeen(server)).toEqual([{ 'mcp-param-region': 'eu-north1' }]);
    // The fresh listing stays: the next call needs no recovery.
    await within(tasks.callToolAsTask('lookup', { region: 'eu-north1' }), 10_000);
    expect(endpoint.rejected).toHaveLength(1);
    expect(server.count('tools/list')).toBe(2);
  });

  it('answers input the server asks for after a recovery with the fresh headers on every retry ([E33], [E17])', async () => {
    const asking: ExtTool = {
      ...mrtrTool('lookup', {
        inputRequests: { ok: elicitation('Go on?', { ok: { type: 'boolean' } }) },
        then: (_responses, call) => outcome.text(`ran in ${String(call.args.region)}`),
      }),
      inputSchema: ROUTED,
    };
    const { server, endpoint, tasks } = await serve(
      [plainTool('lookup', { type: 'object', properties: { region: { type: 'string' } } })],
      { onElicitation: () => ({ action: 'accept', content: { ok: true } }) },
    );
    await tasks.tools();
    server.addTool(asking); // the schema changed after it was listed: no notifications/tools/list_changed
    const handle = await tasks.callToolAsTask('lookup', { region: 'eu-north1' });
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'ran in eu-north1' }]);
    // One refusal (the stale listing), then the resent call and its retry with the answer, both
    // with the header the fresh listing declares.
    expect(endpoint.rejected).toHaveLength(1);
    expect(paramHeadersSeen(server)).toEqual([
      { 'mcp-param-region': 'eu-north1' },
      { 'mcp-param-region': 'eu-north1' },
    ]);
    expect(server.received('tools/call')[1]?.params).toMatchObject({ inputResponses: { ok: { action: 'accept' } } });
  });

  it('sends the call again at most once, then fails with the server’s -32020 and its message ([E33])', async () => {
    const { server, endpoint, tasks } = await serve([plainTool('lookup', ROUTED)]);
    // The listing names another header each time it is read: the server never agrees.
    let lists = 0;
    server.on('tools/list', () => {
      lists += 1;
      const properties = { region: { type: 'string', 'x-mcp-header': `Listed${lists}` } };
      return {
        resultType: 'complete',
        tools: [{ name: 'lookup', inputSchema: { type: 'object', properties } }],
        ttlMs: 0,
        cacheScope: 'private',
      };
    });
    await tasks.tools();
    const error = await rejection(tasks.callToolAsTask('lookup', { region: 'us-west1' }), 10_000);
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32020, method: 'tools/call' });
    expect((error as Error).message).toMatch(/Mcp-Param-Region header is missing/);
    expect((error as Error).message).toMatch(/did not run it/);
    expect(endpoint.rejected.map((r) => r.headers['mcp-param-listed1'] ?? r.headers['mcp-param-listed2'])).toEqual([
      'us-west1',
      'us-west1',
    ]);
    expect(lists).toBe(2);
    expect(server.count('tools/call')).toBe(0);
  });

  it('does not send it again when the fresh listing declares no headers for it: the server’s -32020 is the error', async () => {
    const { server, endpoint, tasks } = await serve([plainTool('lookup', ROUTED)]);
    // The listing shows the tool without any annotation, while the server checks its real schema.
    let lists = 0;
    server.on('tools/list', () => {
      lists += 1;
      const properties = { region: { type: 'string' } };
      return {
        resultType: 'complete',
        tools: [{ name: 'lookup', inputSchema: { type: 'object', properties } }],
        ttlMs: 0,
        cacheScope: 'private',
      };
    });
    expect((await tasks.tools()).map((tool) => tool.name)).toEqual(['lookup']);
    const error = await rejection(tasks.callToolAsTask('lookup', { region: 'us-west1' }), 10_000);
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32020, method: 'tools/call' });
    expect((error as Error).message).toMatch(/Mcp-Param-Region header is missing/);
    expect(endpoint.rejected).toHaveLength(1);
    expect(lists).toBe(2);
    expect(server.count('tools/call')).toBe(0);
  });

  it('does not send it again when the fresh listing leaves the tool out ([E34]): the server’s -32020 is the error', async () => {
    // `number` may not be mirrored: the schema is invalid, so the listing the client reads leaves the tool out.
    const schema = { type: 'object', properties: { region: { type: 'number', 'x-mcp-header': 'Region' } } };
    const { server, endpoint, tasks } = await serve([plainTool('lookup', schema)]);
    const error = await rejection(tasks.callToolAsTask('lookup', { region: 7 }), 10_000);
    expect(error).toMatchObject({ code: -32020, method: 'tools/call' });
    expect(endpoint.rejected).toHaveLength(1);
    expect(server.count('tools/list')).toBe(1);
  });

  it('keeps the deadline over the recovery: a listing that never answers times the call out, and it is not sent again', async () => {
    const { server, endpoint, tasks } = await serve([plainTool('lookup', ROUTED)]);
    server.on('tools/list', () => NO_REPLY);
    const error = await rejection(tasks.callToolAsTask('lookup', { region: 'us-west1' }, { timeoutMs: 300 }), 10_000);
    expect(error).toBeInstanceOf(TaskTimeoutError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(endpoint.rejected).toHaveLength(1);
    expect(server.count('tools/list')).toBe(1);
  });

  it('close() during the recovery’s listing stops the call with no task made, and it is not sent again ([E33])', async () => {
    const { server, endpoint, tasks } = await serve([plainTool('lookup', ROUTED)]);
    server.on('tools/list', () => NO_REPLY);
    // The usual call (no signal, no deadline): no listing held, so it goes without headers and is refused.
    const call = rejection(tasks.callToolAsTask('lookup', { region: 'us-west1' }), 10_000);
    await until(() => server.count('tools/list') === 1, 5_000, 'the recovery’s tools/list');
    await tasks.close();
    const error = await call;
    expect(error).toBeInstanceOf(TaskClosedError);
    // No tools/call was outstanding, and none is sent: no task exists or will (not a cancel pending).
    expect((error as Error).message).toBe(
      'The TaskClient was closed during the call to "lookup"; no remote task was created',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(endpoint.rejected).toHaveLength(1);
    expect(server.count('tools/call')).toBe(0);
  });
});

describe('tools whose x-mcp-header declarations break the rules ([E34])', () => {
  it('are left out of tools(), each reported on error with its name; the valid ones stay', async () => {
    const { tasks } = await serve([
      plainTool('good', ROUTED),
      plainTool('fraction', { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } }),
      plainTool('in-array', {
        type: 'object',
        properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
      }),
      plainTool('twice', {
        type: 'object',
        properties: { a: { type: 'string', 'x-mcp-header': 'Id' }, b: { type: 'string', 'x-mcp-header': 'ID' } },
      }),
      plainTool('unmarked', { type: 'object', properties: { q: { type: 'string' } } }),
    ]);
    const reports: TaskError[] = [];
    tasks.on('error', (error) => reports.push(error));
    const names = (await tasks.tools()).map((tool) => tool.name).sort();
    expect(names).toEqual(['good', 'unmarked']);
    expect(reports.map((error) => error.toolName).sort()).toEqual(['fraction', 'in-array', 'twice']);
    for (const report of reports) {
      expect(report).toBeInstanceOf(TaskProtocolError);
      expect(report.message).toContain('left out of the tool list');
    }
  });

  it('keeps a tool whose annotation-like key is in a vendor keyword, or whose schema is deep without declarations', async () => {
    let deep: Json = { type: 'string' };
    for (let level = 0; level < 70; level += 1) deep = { type: 'object', properties: { next: deep } };
    const { tasks } = await serve([
      plainTool('vendor', { ...ROUTED, 'x-vendor': { 'x-mcp-header': 'Region' } }),
      plainTool('deep', deep),
    ]);
    const reports: TaskError[] = [];
    tasks.on('error', (error) => reports.push(error));
    expect((await tasks.tools()).map((tool) => tool.name).sort()).toEqual(['deep', 'vendor']);
    expect(reports).toEqual([]);
  });
});
