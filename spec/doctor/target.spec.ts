/**
 * The doctor's clear, typed errors for a target it cannot hold an MCP session with (the client is
 * the SDK chosen by MCP_SDK, both majors run): a command that echoes (`cat`) or a web page does
 * not speak MCP; a missing command, one that exits, a refused port cannot be reached; a command
 * that never answers is given up at the connect bound, its process closed; the run's signal stops
 * a connection under way at once (a scripted server holds the handshake), closing what it opened.
 * Bad targets and options are refused before anything is opened.
 */
import { createServer as createHttpServer } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runDoctor, TaskConnectError } from '../../lib/doctor.js';
import { TaskAbortError, TaskOptionError, type McpTransport } from '../../lib/index.js';
import { closedPort, silentHttpServer, startHttpServer } from '../support/http-server.js';
import { refusingTransport } from '../support/fake-transport.js';
import { NO_REPLY, ScriptedServer } from '../support/scripted-server.js';
import { createLinkedPair, httpTransport, makeClient, SDK, stdioTransport } from '../support/sdk.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The doctor's error for `target` (it must fail), and how long it took. */
async function failure(target: unknown, connectTimeoutMs = 4_000): Promise<{ error: TaskConnectError; ms: number }> {
  const started = Date.now();
  const error = await runDoctor(target as never, { sdk: SDK, connectTimeoutMs }).then(
    () => new Error('the doctor did not fail'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TaskConnectError);
  return { error: error as TaskConnectError, ms: Date.now() - started };
}

/** True while a process with `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe(`doctor: a target that is not MCP (SDK ${SDK})`, () => {
  it('cat, which sends every request back, does not speak MCP', async () => {
    const { error } = await failure(stdioTransport({ command: 'cat', stderr: 'ignore' }));
    expect(error.reason).toBe('not-mcp');
    expect(error.message).toBe(
      "The target does not speak MCP: it sent the client's own initialize request back (an echo, like cat)",
    );
  });

  it('a web server that answers 404 does not speak MCP', async () => {
    const web = createHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>not here</h1>');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => web.close(() => resolve())));
    const { port } = web.address() as { port: number };
    const { error } = await failure(httpTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    expect(error.reason).toBe('not-mcp');
    expect(error.message).toMatch(/^The target does not speak MCP: HTTP 404: /);
  });
});

describe(`doctor: a target that refuses the protocol version offered (SDK ${SDK})`, () => {
  it("-32022 with the versions it supports ([E12]): TaskConnectError (reason 'version'), not 'does not speak MCP'", async () => {
    const transport = refusingTransport(['2099-01-01']);
    const { error } = await failure(transport);
    expect(error.reason).toBe('version');
    expect(error.message).toMatch(
      /^The server refused the protocol version offered \(-32022\) \(it lists "2099-01-01"\)\. /,
    );
    expect(transport.closes).toBeGreaterThanOrEqual(1);
  });
});

describe(`doctor: a target that cannot be reached (SDK ${SDK})`, () => {
  it('a command that does not exist', async () => {
    const { error } = await failure(stdioTransport({ command: 'mcp-task-doctor-no-such-command', stderr: 'ignore' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toMatch(/^The server cannot be reached: ENOENT \(spawn mcp-task-doctor-no-such-command\)/);
  });

  it('a command that exits at once', async () => {
    const { error } = await failure(stdioTransport({ command: 'false', stderr: 'ignore' }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toMatch(/closed the connection \(or exited\) before it answered/);
  });

  it('a port nothing listens on', async () => {
    const port = await closedPort();
    const { error } = await failure(httpTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toMatch(/^The server cannot be reached: ECONNREFUSED/);
  });

  it('a command that never answers is given up at the connect bound, and its process is closed', async () => {
    const transport = stdioTransport({ command: 'sleep', args: ['30'], stderr: 'ignore' });
    const { error, ms } = await failure(transport, 1_500);
    expect(error.reason).toBe('no-answer');
    expect(error.message).toBe('The server did not finish the MCP handshake within 1500 ms');
    expect(ms).toBeLessThan(1_500 + 3_000); // the bound, and the SDK's own grace to stop the child
    const pid = (transport as unknown as { pid?: number | null }).pid;
    if (typeof pid === 'number') {
      const until = Date.now() + 3_000;
      while (alive(pid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(alive(pid)).toBe(false);
    }
  });
});

describe(`doctor: an HTTP server that takes requests and never answers (SDK ${SDK})`, () => {
  it('is given up as no answer (no-answer), whichever wait of the handshake runs out first', async () => {
    const silent = await silentHttpServer();
    cleanups.push(() => silent.close());
    // SDK v2's era probe gets part of the bound and times out first (its own timeout error).
    const { error } = await failure(httpTransport(silent.url), 1_000);
    expect(error.reason).toBe('no-answer');
    expect(error.message).toMatch(
      /^(The server cannot be reached: no answer to the handshake: |The server did not finish the MCP handshake within 1000 ms)/,
    );
  });
});

/** A scripted server that holds `initialize` unanswered; `held` resolves when it has it. */
async function silentHandshake(): Promise<{ server: ScriptedServer; transport: McpTransport; held: Promise<void> }> {
  let hold: () => void = () => {};
  const held = new Promise<void>((resolve) => (hold = resolve));
  const server = new ScriptedServer();
  server.on('initialize', (params) => {
    server.assertRequest('initialize', params, { clientInfo: { name: 'mcp-task-doctor', version: '0.1.0' } });
    hold();
    return NO_REPLY;
  });
  const [clientSide, serverSide] = createLinkedPair();
  await server.connect(serverSide);
  return { server, transport: clientSide, held };
}

/** Lets pending callbacks run (one turn of the event loop). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe(`doctor: a stop while connecting (SDK ${SDK})`, () => {
  it('a stop while the server holds the handshake ends the run at once: TaskAbortError, the transport closed, no task', async () => {
    const { server, transport, held } = await silentHandshake();
    const close = vi.spyOn(transport, 'close');
    const stop = new AbortController();
    const why = new Error('stop now');
    let made = 0;
    const started = Date.now();
    const run = runDoctor(
      () => {
        made += 1;
        return transport;
      },
      { sdk: SDK, signal: stop.signal, connectTimeoutMs: 5_000 },
    ).then(
      () => new Error('the doctor did not fail'),
      (error: unknown) => error,
    );
    await held;
    stop.abort(why);
    const error = await run;
    // Before the fix the stop waited for the connect bound: TaskConnectError (no-answer) after 5 s.
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error).toMatchObject({
      message: 'The doctor was stopped while connecting; no task was started',
      reason: why,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(close).toHaveBeenCalled();
    expect(made).toBe(1);
    // SDK v2 probes the 2026 era first (server/discover, answered -32601), then falls back.
    expect(server.counts()).toEqual(SDK === 'v2' ? { 'server/discover': 1, initialize: 1 } : { initialize: 1 });
  });

  it('a stop while the transport factory works: the run ends at once; the transport it gives later is closed, never started', async () => {
    let give: (transport: McpTransport) => void = () => {};
    const coming = new Promise<McpTransport>((resolve) => (give = resolve));
    const stop = new AbortController();
    let settled: unknown;
    const run = runDoctor(() => coming, { sdk: SDK, signal: stop.signal }).then(
      () => (settled = new Error('the doctor did not fail')),
      (error: unknown) => (settled = error),
    );
    await turn();
    expect(settled).toBeUndefined();
    stop.abort(new Error('stop now'));
    await turn();
    // Before the fix the run waited for the factory, then connected.
    expect(settled).toBeInstanceOf(TaskAbortError);
    const late = {
      start: vi.fn(() => Promise.resolve()),
      send: vi.fn(() => Promise.resolve()),
      close: vi.fn(() => Promise.resolve()),
    };
    give(late);
    await run;
    await turn();
    expect(late.close).toHaveBeenCalledTimes(1);
    expect(late.start).not.toHaveBeenCalled();
    expect(late.send).not.toHaveBeenCalled();
  });

  it('a transport target (one session) is stopped the same way', async () => {
    const { transport, held } = await silentHandshake();
    const close = vi.spyOn(transport, 'close');
    const stop = new AbortController();
    const run = runDoctor(transport, { sdk: SDK, signal: stop.signal, connectTimeoutMs: 5_000 }).then(
      () => new Error('the doctor did not fail'),
      (error: unknown) => error,
    );
    await held;
    stop.abort(new Error('stop now'));
    expect(await run).toBeInstanceOf(TaskAbortError);
    expect(close).toHaveBeenCalled();
  });
});

describe(`doctor: an MCP server over Streamable HTTP (SDK ${SDK})`, () => {
  it("the SDK's McpServer over HTTP is probed: SDK v2's era probe gets HTTP 400 (a JSON-RPC error body), then initialize", async () => {
    const server = await startHttpServer({ pollInterval: 100 });
    cleanups.push(() => server.close());
    const report = await runDoctor(() => httpTransport(server.url), {
      sdk: SDK,
      tool: { name: 'analyze', arguments: { id: 1, steps: 1, stepMs: 100 } },
      probeTimeoutMs: 5_000,
      noAnswerMs: 300,
      retentionCheckMs: 300,
      expiryBudgetMs: 1,
    });
    expect(report.server).toEqual({ name: 'example-task-server', version: '1.0.0' });
    expect(report.wires[0]).toMatchObject({
      wire: '2025-11-25',
      offered: true,
      sdk: SDK,
      protocolVersion: '2025-11-25',
      tool: 'analyze',
    });
    expect(report.rows.find((row) => row.check === 'cancel.completed')?.verdict).toBe('ok');
    expect(report.summary.mustViolations).toBe(0);
    expect(report.tasks.leftRunning).toBe(0);
  });
});

describe('doctor: bad targets and options are refused before anything is opened', () => {
  it('something that is neither a client, a transport nor a factory; a client that is not connected; a bad bound', async () => {
    await expect(runDoctor(42 as never)).rejects.toThrow(TaskOptionError);
    await expect(runDoctor({} as never)).rejects.toThrow(
      'The doctor needs a connected SDK Client, an MCP transport, or a function that returns one',
    );
    const client = makeClient({ name: 'doctor-spec', version: '1.0.0' });
    await expect(runDoctor(client)).rejects.toThrow('The SDK Client is not connected');
    await expect(runDoctor(() => stdioTransport({ command: 'cat' }), { probeTimeoutMs: -1 })).rejects.toMatchObject({
      name: 'TaskOptionError',
      option: 'probeTimeoutMs',
    });
  });
});
