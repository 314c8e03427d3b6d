/**
 * The doctor's clear, typed errors for a target it cannot hold an MCP session with (the client is
 * the SDK chosen by MCP_SDK, both majors run): a command that echoes (`cat`) or a web page does
 * not speak MCP; a missing command, one that exits, a refused port cannot be reached; a command
 * that never answers is given up at the connect bound, its process closed. Bad targets and
 * options are refused before anything is opened.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor, TaskConnectError } from '../../lib/doctor.js';
import { TaskOptionError } from '../../lib/index.js';
import { startHttpServer } from '../support/http-server.js';
import { httpTransport, makeClient, SDK, stdioTransport } from '../support/sdk.js';

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

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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
