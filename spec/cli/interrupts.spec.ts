/**
 * How the CLI ends when it is stopped from outside or cannot get what it asked for: `cancel` of a
 * task the server does not know (exit 1, never a made-up snapshot); Ctrl-C (SIGINT) during
 * `result` and `watch` cancelling the remote task like `call`; SIGTERM doing the same with exit
 * 143; a closed stdout (`| head -1`, EPIPE) cancelling the task with exit 141 and no stack trace;
 * `--timeout` bounding the connection too (exit 124, the stdio server killed); and a stop while a
 * command closes its connection (no word of a task when none came of it), or before `cancel` was
 * answered (the cancel is not confirmed).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpTaskServer } from '../support/http-server.js';
import { EXT_STDIO_SERVER, STDIO_SERVER, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

/** True when process `pid` is gone (or a zombie nobody reaped yet: it no longer runs). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }
}

describe('SIGINT to the whole process group (a CI runner, a shell job)', { timeout: 60_000 }, () => {
  it('stops the stdio server too: the run is reported interrupted (exit 130), not a lost server', async () => {
    const run = runPiped(['call', 'analyze', 'steps=50', '--stdio', STDIO_SERVER], {}, [], { group: true });
    await until(() => run.stdout().includes('"type":"snapshot"'), 30_000, 'the task to start');
    run.killGroup('SIGINT');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(130);
    const last = jsonLines(stdout).at(-1)!;
    expect(last).toMatchObject({ type: 'result', outcome: 'interrupted', exitCode: 130 });
    expect(JSON.stringify(last)).not.toContain('ServerLostError');
  });
});

describe('mcp-task cancel of a task the server does not know', { timeout: 60_000 }, () => {
  it('exits 1 with the message of get, and prints no snapshot (embedded server and the extension wire)', async () => {
    for (const target of [[], ['--stdio', EXT_STDIO_SERVER]]) {
      const got = await runPiped(['get', 'nosuchid', ...target]).done;
      expect(got.code).toBe(1);
      const cancelled = await runPiped(['cancel', 'nosuchid', ...target]).done;
      expect(cancelled.code, cancelled.stderr).toBe(1);
      expect(cancelled.stdout).toBe('');
      expect(cancelled.stderr).not.toContain('still working');
      const message = got.stderr.trim().split('\n').at(-1)!;
      expect(message).toMatch(/does not know this task/);
      expect(cancelled.stderr).toContain(message);
    }
  });
});

describe.sequential('mcp-task result and watch interrupted', { timeout: 60_000 }, () => {
  let server: HttpTaskServer;
  let reads = 0;
  beforeAll(async () => {
    server = await startHttpServer({ pollInterval: 200 }, undefined, (message) => {
      if (message.method === 'tasks/get' || message.method === 'tasks/result') reads += 1;
      return undefined;
    });
  });
  afterAll(async () => {
    await server.close();
  });

  for (const command of ['result', 'watch'] as const) {
    it(`SIGINT during ${command} --ref cancels the remote task, prints the result line last, exits 130`, async () => {
      const file = join(scratch(), 'ref.json');
      const first = runPiped([
        'call',
        'analyze',
        'steps=200',
        'stepMs=200',
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
      const { reference } = JSON.parse(readFileSync(file, 'utf8')) as { reference: { taskId: string } };

      const before = reads;
      const run = runPiped([command, '--ref', file]);
      await until(() => reads > before, 20_000, `${command} to read the task`);
      run.kill('SIGINT');
      const { code, stdout, stderr } = await run.done;
      expect(code, stderr).toBe(130);
      expect(stderr).toContain('was cancelled on the server');
      // A confirmed cancel leaves nothing to follow: no "to follow it from another process" hint.
      expect(stderr).not.toContain('to follow it');
      expect(jsonLines(stdout).at(-1)).toMatchObject({
        type: 'result',
        outcome: 'cancelled',
        exitCode: 130,
        taskId: reference.taskId,
      });

      // The server agrees.
      const got = await runPiped(['get', '--ref', file]).done;
      expect(jsonLines(got.stdout)).toEqual([
        expect.objectContaining({ task: expect.objectContaining({ status: 'cancelled' }) }),
      ]);
    });
  }
});

describe.sequential('mcp-task stopped from outside', { timeout: 60_000 }, () => {
  const cancelsOf = (log: string): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');

  it('SIGTERM cancels the remote task like Ctrl-C, then exits 143', async () => {
    const log = join(scratch(), 'cancels.log');
    const run = runPiped(['call', 'analyze', 'steps=200', 'stepMs=200', '--stdio', STDIO_SERVER], { CANCEL_LOG: log });
    await until(() => run.stdout().includes('step 1/200'), 20_000, 'the first step');
    run.kill('SIGTERM');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(143);
    const lines = jsonLines(stdout);
    expect(lines.at(-1)).toMatchObject({ type: 'result', outcome: 'cancelled', exitCode: 143 });
    expect(stderr).toContain('SIGTERM: cancelling the task');
    expect(cancelsOf(log)).toContain(`cancel ${String(lines[0]!.taskId)}`);
  });

  it('stdout closed by its reader (| head -1): the remote task is cancelled, exit 141, no stack trace', async () => {
    const log = join(scratch(), 'cancels.log');
    const run = runPiped(['call', 'analyze', 'steps=200', 'stepMs=200', '--stdio', STDIO_SERVER], { CANCEL_LOG: log });
    await until(() => run.stdout().includes('\n'), 20_000, 'the first line');
    const taskId = String(jsonLines(run.stdout().split('\n')[0]!)[0]!.taskId);
    run.closeStdout();
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(141);
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(stderr).toContain('stdout closed: cancelling the task');
    expect(cancelsOf(log)).toContain(`cancel ${taskId}`);
  });

  it('-q with stdout closed before the result line: exit 141, not 0 (the line was never delivered)', async () => {
    const run = runPiped(['call', 'analyze', 'steps=1', 'stepMs=100', '-q']);
    run.closeStdout();
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(141);
    expect(stderr).toContain('stdout closed: the output was not all delivered');
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
  });

  it('SIGTERM while tools closes a slow stdio server: exit 143, and no word of a task (tools makes none)', async () => {
    // The server lingers 3 s after its stdin closes: closing the connection waits for it.
    const run = runPiped(['tools', '--stdio', `sh -c '${STDIO_SERVER}; sleep 3'`]);
    await until(() => run.stdout().includes('"name":"echo"'), 20_000, 'the tool list');
    await new Promise((resolve) => setTimeout(resolve, 500));
    run.kill('SIGTERM');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(143);
    expect(jsonLines(stdout).map((line) => line.type)).toEqual(Array(7).fill('tool'));
    expect(stderr).toContain('SIGTERM: leaving without waiting for the connection to close');
    expect(stderr.replaceAll('mcp-task:', '')).not.toMatch(/\btask\b/);
  });

  it('Ctrl-C during cancel, before the server answered: exit 130, saying the cancel is not confirmed', async () => {
    // Accepts requests and never answers them.
    let requests = 0;
    const silent = createHttpServer(() => (requests += 1));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const ref = join(scratch(), 'ref.json');
      writeFileSync(
        ref,
        JSON.stringify({
          v: 2,
          url: `http://127.0.0.1:${port}/mcp`,
          reference: {
            v: 2,
            taskId: 't-1',
            toolName: 'analyze',
            createdAt: new Date().toISOString(),
            ttl: null,
            wire: '2025-11-25',
            sessionId: 's-1',
            capabilities: { cancel: true, list: true },
          },
        }),
      );
      const run = runPiped(['cancel', '--ref', ref]);
      await until(() => requests > 0, 20_000, 'the server to receive a request');
      run.kill('SIGINT');
      const { code, stdout, stderr } = await run.done;
      expect(code, stderr).toBe(130);
      expect(stdout).toBe('');
      expect(stderr).toContain('Ctrl-C: left before the command finished; the cancel of task t-1 is not confirmed');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  for (const wire of ['2025', 'auto']) {
    it(`--timeout bounds connecting too (--wire ${wire}): exit 124 and the stdio server is killed`, async () => {
      const pidFile = join(scratch(), 'pid');
      const started = Date.now();
      // 3 s: long enough for the stdio child to start and write its pid even on a loaded machine.
      const run = runPiped([
        'call',
        'analyze',
        '--wire',
        wire,
        '--stdio',
        `sh -c 'echo $$ > ${pidFile}; exec tail -f /dev/null'`,
        '--timeout',
        '3s',
      ]);
      const { code, stdout, stderr } = await run.done;
      expect(code, stderr).toBe(124);
      // The handshake alone would hang for a minute or more.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(jsonLines(stdout).at(-1)).toMatchObject({
        type: 'result',
        outcome: 'timeout',
        exitCode: 124,
        error: { name: 'ConnectTimeoutError' },
      });
      expect(stderr).toContain('--timeout 3s passed while connecting to the stdio server');
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      await until(() => gone(pid), 10_000, `the stdio server (pid ${pid}) to end`);
    });
  }
});
