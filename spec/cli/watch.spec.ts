/**
 * `mcp-task watch --ref FILE` in a second process picks up a task that a first process started
 * against a Streamable HTTP server keeping tasks per session (the SDK's server transport with
 * one session per client, spec/support/http-server.ts); `list`, `cancel` and `get` by bare id in
 * a joined session; `tools`. And on the io.modelcontextprotocol/tasks wire (the scripted
 * extension server over sessionless Streamable HTTP): a reference alone is enough to follow a task
 * from another process.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ExtServer,
  NO_REPLY,
  startExtHttpServer,
  taskTool,
  textResult,
  type ExtHttpServer,
} from '../support/ext-server/index.js';
import { startHttpServer, type HttpTaskServer } from '../support/http-server.js';
import { allowSdkServerListeners } from '../support/sdk-server-listeners.js';
import { EXT_WIRE, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

let server: HttpTaskServer;
// The SDK's McpServer runs in this process, and a watch may hold its tasks/result for seconds.
let restoreListeners: () => void;
beforeAll(async () => {
  restoreListeners = allowSdkServerListeners();
  server = await startHttpServer({ pollInterval: 200 });
});
afterAll(async () => {
  await server.close();
  restoreListeners();
});

describe.sequential('mcp-task watch across processes', { timeout: 60_000 }, () => {
  it('follows a task started by another process, in the HTTP session that holds it', async () => {
    const file = join(scratch(), 'ref.json');
    const first = runPiped([
      'call',
      'analyze',
      'id=9',
      'steps=8',
      'stepMs=500',
      '--url',
      server.url.href,
      '--save-ref',
      file,
    ]);
    await until(
      () => existsSync(file) && first.stdout().includes('step 1/8'),
      20_000,
      'the first process to start the task',
    );
    first.kill('SIGKILL'); // the first process dies; the task runs on in its session
    await first.done;

    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      v: number;
      reference: { taskId: string; sessionId: string };
      url: string;
    };
    expect(saved.v).toBe(2);
    expect(saved.url).toBe(server.url.href);
    // The library's reference carries the HTTP session id; the file adds only the URL.
    expect(saved.reference.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(saved).sort()).toEqual(['reference', 'url', 'v']);

    // Another session does not see the task: the session id in the reference is what finds it.
    const elsewhere = await runPiped(['get', saved.reference.taskId, '--url', server.url.href]).done;
    expect(elsewhere.code).toBe(1);

    const second = await runPiped(['watch', '--ref', file]).done;
    expect(second.code).toBe(0);
    const lines = jsonLines(second.stdout);
    expect(lines[0]).toMatchObject({ type: 'task', taskId: saved.reference.taskId, toolName: 'analyze' });
    const statuses = lines.filter((l) => l.type === 'snapshot').map((l) => (l.task as { status: string }).status);
    expect(statuses.at(-1)).toBe('completed');
    expect(statuses.slice(0, -1).every((status) => status === 'working')).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      outcome: 'completed',
      result: { content: [{ text: 'analysis of 9 done in 8 steps' }] },
    });
  });

  it('lists, cancels and reads a task by bare id in a joined session (--session), through the public API', async () => {
    const file = join(scratch(), 'ref.json');
    // Long enough to still run when `cancel` gets to it on a loaded machine.
    const first = runPiped([
      'call',
      'analyze',
      'id=5',
      'steps=200',
      'stepMs=300',
      '--url',
      server.url.href,
      '--save-ref',
      file,
    ]);
    await until(
      () => existsSync(file) && first.stdout().includes('step 1/200'),
      20_000,
      'the first process to start the task',
    );
    first.kill('SIGKILL');
    await first.done;
    const { reference } = JSON.parse(readFileSync(file, 'utf8')) as {
      reference: { taskId: string; sessionId: string };
    };
    const joined = ['--url', server.url.href, '--session', reference.sessionId];

    // The joined session skipped the handshake: the library takes the server to support list and cancel.
    const listed = await runPiped(['list', ...joined]).done;
    expect(listed.code).toBe(0);
    const tasks = jsonLines(listed.stdout).filter((l) => l.type === 'snapshot');
    expect(tasks.map((l) => (l.task as { taskId: string }).taskId)).toContain(reference.taskId);

    const cancelled = await runPiped(['cancel', reference.taskId, ...joined]).done;
    expect(cancelled.code).toBe(0);
    expect(jsonLines(cancelled.stdout)).toEqual([
      expect.objectContaining({
        type: 'snapshot',
        task: expect.objectContaining({ taskId: reference.taskId, status: 'cancelled' }),
      }),
    ]);

    const got = await runPiped(['get', reference.taskId, ...joined]).done;
    expect(got.code).toBe(0);
    expect(jsonLines(got.stdout)).toEqual([
      expect.objectContaining({ task: expect.objectContaining({ status: 'cancelled' }) }),
    ]);
  });

  it('lists the tools with their task support', async () => {
    const { code, stdout } = await runPiped(['tools', '--url', server.url.href]).done;
    expect(code).toBe(0);
    const tools = jsonLines(stdout);
    expect(tools.every((l) => l.type === 'tool')).toBe(true);
    expect(tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'analyze', taskSupport: 'optional' }),
        expect.objectContaining({ name: 'batch', taskSupport: 'required' }),
        expect.objectContaining({ name: 'echo', taskSupport: 'forbidden' }),
      ]),
    );
  });
});

describe.sequential(
  'mcp-task over Streamable HTTP on the io.modelcontextprotocol/tasks wire',
  { timeout: 60_000 },
  () => {
    let ext: ExtServer;
    let endpoint: ExtHttpServer;
    let ticker: NodeJS.Timeout;
    beforeAll(async () => {
      const steps = Array.from({ length: 8 }, (_, i) => ({ statusMessage: `step ${i + 1}/8` }));
      ext = new ExtServer({
        serverInfo: { name: 'ext-http-server', version: '1.0.0' },
        pollIntervalMs: 100,
        tools: [
          taskTool('analyze', (args) => ({
            statusMessage: 'queued',
            advance: { everyMs: 300 },
            steps: [...steps, { result: textResult(`analysis of ${String(args.id)} done`), statusMessage: 'done' }],
          })),
        ],
      });
      endpoint = await startExtHttpServer(ext);
      ticker = setInterval(() => ext.tick(), 50);
    });
    afterAll(async () => {
      clearInterval(ticker);
      await endpoint.close();
    });

    it('follows a task started by another process from its reference alone: the wire is sessionless', async () => {
      const file = join(scratch(), 'ref.json');
      const first = runPiped(['call', 'analyze', 'id=4', '--url', endpoint.url.href, '--save-ref', file]);
      await until(
        () => existsSync(file) && first.stdout().includes('step 1/8'),
        20_000,
        'the first process to start the task',
      );
      first.kill('SIGKILL');
      await first.done;
      expect(JSON.parse(first.stdout().split('\n')[0]!)).toMatchObject({ type: 'task', wire: EXT_WIRE });

      const saved = JSON.parse(readFileSync(file, 'utf8')) as {
        reference: { taskId: string; wire: string; sessionId?: string };
        url: string;
      };
      expect(saved.reference.wire).toBe(EXT_WIRE);
      expect(saved.reference.sessionId).toBeUndefined();

      const second = await runPiped(['watch', '--ref', file]).done;
      expect(second.code).toBe(0);
      const lines = jsonLines(second.stdout);
      expect(lines[0]).toMatchObject({ type: 'task', taskId: saved.reference.taskId, wire: EXT_WIRE });
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        outcome: 'completed',
        wire: EXT_WIRE,
        result: { content: [{ text: 'analysis of 4 done' }] },
      });
      // [E8]: SDK v2's Streamable HTTP transport names the task in Mcp-Name (the server checks it, -32020 otherwise).
      const polls = ext.received('tasks/get');
      expect(polls.length).toBeGreaterThan(0);
      expect(polls.every((entry) => entry.headers?.['mcp-name'] === saved.reference.taskId)).toBe(true);
      expect(endpoint.rejected).toEqual([]);
    });

    it('Ctrl-C with the cancel unanswered prints a watch command whose temporary reference file has a random name, not the task id, and mode 0600', async () => {
      // From now on this server holds every tasks/cancel: the CLI leaves after the cancel grace,
      // without knowing how the task ends, and says how to follow it (a confirmed cancel has nothing to follow).
      ext.on('tasks/cancel', () => NO_REPLY);
      const run = runPiped(['call', 'analyze', 'id=6', '--url', endpoint.url.href]);
      await until(() => run.stdout().includes('step 1/8'), 20_000, 'the first step');
      run.kill('SIGINT');
      const { code, stdout, stderr } = await run.done;
      expect(code).toBe(130);
      expect(jsonLines(stdout).at(-1)).toMatchObject({
        type: 'result',
        outcome: 'interrupted',
        error: { name: 'Interrupted' },
      });
      const taskId = String(jsonLines(stdout)[0]!.taskId);
      const file = /watch --ref (\S+)/.exec(stderr)?.[1];
      expect(file, stderr).toBeDefined();
      try {
        expect(dirname(file!)).toBe(tmpdir());
        expect(basename(file!)).toMatch(
          /^mcp-task-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$/,
        );
        expect(basename(file!)).not.toContain(taskId.slice(0, 6));
        expect(statSync(file!).mode & 0o777).toBe(0o600);
        expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({ temporary: true, reference: { taskId } });
      } finally {
        rmSync(file!, { force: true });
      }
    });
  },
);
