/**
 * The CLI keeps its bounds: a server that dies mid-task ends the command (a stdio server on either
 * wire at once, an HTTP server once no request reaches it for the connect timeout), connecting is
 * bounded and says what it tried, and a Ctrl-C or SIGTERM against a server that never answers
 * `tasks/cancel` leaves after the cancel grace instead of the whole retry policy (about 66 s).
 * A stdio server that closes its stdout but keeps running ends the command at once, and is
 * stopped. `--timeout` bounds the whole run: the remote cancel and the shutdown fit in it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CANCEL_GRACE_MS } from '../../cli/src/target.js';
import { closedPort, startHttpServer } from '../support/http-server.js';
import { EXT_WIRE, FAULTY_SERVER, PtyRun, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

describe('a server that dies mid-task', { timeout: 90_000 }, () => {
  it('a stdio server that exits ends the command at once with exit 1 and why, on both wires', async () => {
    const runs = (['die', 'ext-die'] as const).map(
      (script) => runPiped(['call', 'job', '--stdio', FAULTY_SERVER], { SCRIPT: script, DIE_MS: '800' }).done,
    );
    const [legacy, ext] = await Promise.all(runs);
    for (const [run, wire] of [
      [legacy!, '2025-11-25'],
      [ext!, EXT_WIRE],
    ] as const) {
      expect(run.code, run.stderr).toBe(1);
      const lines = jsonLines(run.stdout);
      expect(lines[0]).toMatchObject({ type: 'task', wire });
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        outcome: 'error',
        exitCode: 1,
        wire,
        error: { name: 'ServerLostError' },
      });
      expect((lines.at(-1)!.error as { message: string }).message).toMatch(
        /^the stdio server `.*` exited \(its connection closed\); task .* ended with it$/,
      );
      // Its last words are shown too.
      expect(run.stderr).toContain('server: scripted server: crashing now');
    }
  });

  it('an HTTP server that goes away: exit 1 once no request reached it for --connect-timeout, naming the cause and how to follow the task', async () => {
    const server = await startHttpServer({ pollInterval: 200 });
    const run = await longCall(server.url.href);
    await server.close();
    const closedAt = Date.now();
    const { code, stdout, stderr } = await run.done;
    // 2 s of failed requests, then the exit; generous for a loaded machine, far below "forever".
    expect(Date.now() - closedAt).toBeLessThan(20_000);
    expect(code, stderr).toBe(1);
    const last = jsonLines(stdout).at(-1)!;
    expect(last).toMatchObject({ type: 'result', outcome: 'error', exitCode: 1, error: { name: 'ServerLostError' } });
    const message = (last.error as { message: string }).message;
    expect(message).toContain(`the server at ${server.url.href} stopped answering: no request has reached it for 2 s`);
    expect(message).toContain('connection refused');
    const file = /mcp-task watch --ref (\S+)/.exec(message)?.[1];
    expect(file, message).toBeDefined();
    // The reference to follow it with, once the server is back.
    expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({
      url: server.url.href,
      temporary: true,
      reference: { toolName: 'analyze' },
    });
  });
});

describe('a stdio server that closes its stdout and keeps running', { timeout: 60_000 }, () => {
  it('ends the command soon after (exit 1, why), not at --timeout, and the server is not left running', async () => {
    const log = join(scratch(), 'server.log');
    const run = runPiped(['call', 'job', '--stdio', FAULTY_SERVER, '--timeout', '40s'], {
      SCRIPT: 'close-stdout',
      DIE_MS: '800',
      LOG: log,
    });
    await until(() => run.stdout().includes('"type":"snapshot"'), 30_000, 'the task to start');
    const started = Date.now();
    const { code, stdout, stderr } = await run.done;
    // The server's stdout closes 0.8 s after the task's creation; noticed, and the server
    // stopped (it ignores SIGTERM: SIGKILL a second later), within seconds rather than 40 s.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(code, stderr).toBe(1);
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'error',
      exitCode: 1,
      error: {
        name: 'ServerLostError',
        message: expect.stringMatching(
          /^the stdio server `.*` closed its stdout but kept running: its connection is gone \(the server was stopped\); task .* ended with it$/,
        ),
      },
    });
    expect(stderr).toContain('server: scripted server: closing my stdout');
    const pid = Number(/^pid (\d+)$/m.exec(readFileSync(log, 'utf8'))?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
  });
});

/** An HTTP server on 127.0.0.1 that accepts every request and never answers any. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `call analyze` of a long task over HTTP with a 2 s `--connect-timeout`, once its task has started. */
async function longCall(url: string): Promise<ReturnType<typeof runPiped>> {
  const run = runPiped(['call', 'analyze', 'steps=200', 'stepMs=200', '--url', url, '--connect-timeout', '2s']);
  await until(() => run.stdout().includes('step 1/200'), 30_000, 'the task to start');
  return run;
}

/** True while process `pid` runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('an HTTP server that forgets the session', { timeout: 60_000 }, () => {
  it('ends the command (exit 1): the task went with the session, and no command to follow it is offered', async () => {
    const server = await startHttpServer({ pollInterval: 200 });
    try {
      const run = runPiped(['call', 'analyze', 'steps=200', 'stepMs=200', '--url', server.url.href, '--wire', '2025']);
      await until(() => run.stdout().includes('step 1/200'), 30_000, 'the task to start');
      await server.dropSessions();
      const { code, stdout, stderr } = await run.done;
      expect(code, stderr).toBe(1);
      const last = jsonLines(stdout).at(-1)!;
      expect(last).toMatchObject({ type: 'result', outcome: 'error', exitCode: 1, error: { name: 'ServerLostError' } });
      const message = (last.error as { message: string }).message;
      expect(message).toMatch(/the server no longer knows the HTTP session.*; task \S+ went with the session$/);
      expect(message + stderr).not.toContain('mcp-task watch');
    } finally {
      await server.close();
    }
  });
});

describe('a server that accepts connections and never answers', { timeout: 90_000 }, () => {
  it('mid-task: exit 1 once no request was answered for --connect-timeout, with how to follow the task', async () => {
    let silent = false;
    const server = await startHttpServer({ pollInterval: 200 }, undefined, () => (silent ? 'silent' : undefined));
    try {
      const run = await longCall(server.url.href);
      silent = true;
      const silentAt = Date.now();
      const { code, stdout, stderr } = await run.done;
      expect(Date.now() - silentAt).toBeLessThan(20_000);
      expect(code, stderr).toBe(1);
      const last = jsonLines(stdout).at(-1)!;
      expect(last).toMatchObject({ type: 'result', outcome: 'error', exitCode: 1, error: { name: 'ServerLostError' } });
      const message = (last.error as { message: string }).message;
      expect(message).toMatch(
        /stopped answering: no request has been answered for 2 s \(\d+ still waiting for an answer: it accepts connections but does not answer\)/,
      );
      expect(message).toMatch(/to follow it: mcp-task watch --ref \S+/);
    } finally {
      await server.close();
    }
  });

  it('get, cancel (joining its session), tools and list end with exit 1 after --connect-timeout (a handshake first for tools and list)', async () => {
    const silent = await silentServer();
    // Answers the handshake, then nothing.
    const server = await startHttpServer({}, undefined, (message) =>
      message.method === 'tools/list' || message.method === 'tasks/list' ? 'silent' : undefined,
    );
    try {
      const ref = join(scratch(), 'ref.json');
      writeFileSync(
        ref,
        JSON.stringify({
          v: 2,
          url: silent.url,
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
      const started = Date.now();
      const runs = await Promise.all([
        runPiped(['get', '--ref', ref, '--connect-timeout', '5s']).done,
        runPiped(['cancel', '--ref', ref, '--connect-timeout', '5s']).done,
        runPiped(['tools', '--url', server.url.href, '--connect-timeout', '5s']).done,
        runPiped(['list', '--url', server.url.href, '--connect-timeout', '5s', '--wire', '2025-11-25']).done,
      ]);
      expect(Date.now() - started).toBeLessThan(40_000);
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(1);
        expect(run.stdout).toBe('');
        // The silence is seen by the HTTP watch, or by the one-shot bound, whichever comes first.
        expect(run.stderr).toMatch(
          /stopped answering: no request has been answered for 5 s|did not answer within --connect-timeout 5s; gave up/,
        );
      }
    } finally {
      await Promise.all([silent.close(), server.close()]);
    }
  });
});

describe('connecting is bounded and says what it tried', { timeout: 60_000 }, () => {
  it('--stdio cat: "connecting to …" on the terminal, then exit 1 after --connect-timeout with what was tried', async () => {
    const run = new PtyRun(['call', 'analyze', '--stdio', 'cat', '--connect-timeout', '2s']);
    try {
      await run.waitFor('connecting to the stdio server `cat`…', 20_000);
      const { exitCode } = await run.exited;
      expect(exitCode).toBe(1);
      expect(run.text).toMatch(
        /cannot connect to the stdio server `cat`: no answer within 2 s \(tried: .*initialize.*\).*is it an MCP server on stdio\?/s,
      );
    } finally {
      run.kill();
    }
  });

  it('a dead --url says which URL and why (connection refused), on both SDK paths', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const [auto, legacy] = await Promise.all([
      runPiped(['call', 'analyze', '--url', url]).done,
      runPiped(['tools', '--url', url, '--wire', '2025-11-25']).done,
    ]);
    expect(auto.code).toBe(1);
    expect(jsonLines(auto.stdout)).toEqual([
      {
        type: 'result',
        outcome: 'error',
        exitCode: 1,
        error: {
          name: 'ConnectError',
          message: expect.stringMatching(new RegExp(`^cannot connect to ${url}: connection refused \\(`)),
        },
      },
    ]);
    expect(legacy.code).toBe(1);
    expect(legacy.stderr).toContain(`cannot connect to ${url}: connection refused`);
  });
});

describe('Ctrl-C while connecting', { timeout: 60_000 }, () => {
  it('SIGINT gives the connection up: the stdio server is stopped, and the result line says interrupted (exit 130)', async () => {
    const dir = scratch();
    const pidFile = join(dir, 'pid');
    // A "server" that never answers and says its pid.
    const run = runPiped(['call', 'echo', '--stdio', `sh -c 'echo $$ > ${pidFile}; exec sleep 101'`]);
    await until(
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '',
      20_000,
      'the server to start',
    );
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(alive(pid)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(130);
    expect(jsonLines(stdout)).toEqual([
      {
        type: 'result',
        outcome: 'interrupted',
        exitCode: 130,
        error: {
          name: 'Interrupted',
          message: expect.stringMatching(/^Ctrl-C while connecting to the stdio server `.*`: gave up connecting/),
        },
      },
    ]);
    await until(() => !alive(pid), 10_000, 'the stdio server to be stopped');
  });

  it('a server deaf to SIGTERM is killed before the CLI exits: "was stopped" is true', async () => {
    const pidFile = join(scratch(), 'pids');
    // Every process started from the command line (SDK v2 probes on one of its own) says its pid.
    const run = runPiped(['call', 'echo', '--stdio', `sh -c 'trap "" TERM; echo $$ >> ${pidFile}; exec sleep 101'`]);
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 20_000, 'the server');
    run.kill('SIGINT');
    const { code, stdout, stderr } = await run.done;
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    const left = pids.filter(alive);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(code, stderr).toBe(130);
    expect(jsonLines(stdout).at(-1)?.error).toMatchObject({
      message: expect.stringMatching(/: gave up connecting \(the server it started was stopped\)$/),
    });
    expect(left).toEqual([]);
  });
});

describe('--timeout bounds the whole run, the remote cancel and the shutdown included', { timeout: 120_000 }, () => {
  it('a cancel the server never answers, or a call it never answers, does not keep the CLI past --timeout', async () => {
    const dir = scratch();
    const logs = { cancel: join(dir, 'cancel.log'), call: join(dir, 'call.log') };
    // Long enough to connect on a loaded machine.
    const runs = {
      cancel: runPiped(['call', 'job', '--stdio', FAULTY_SERVER, '--timeout', '25s'], {
        SCRIPT: 'hang-cancel',
        LOG: logs.cancel,
      }),
      call: runPiped(['call', 'job', '--stdio', FAULTY_SERVER, '--timeout', '25s'], {
        SCRIPT: 'hang-call',
        LOG: logs.call,
      }),
    };
    const ended = { cancel: 0, call: 0 };
    const [cancel, call] = await Promise.all(
      (['cancel', 'call'] as const).map((name) =>
        runs[name].done.then((result) => {
          ended[name] = Date.now();
          return result;
        }),
      ),
    );
    // When the server process started: the CLI's run (from which --timeout counts) began before.
    const origin = (name: 'cancel' | 'call'): number =>
      Number(/^origin ([\d.]+)$/m.exec(readFileSync(logs[name], 'utf8'))?.[1]);

    // Before: about 2 s more for the cancel's answer (the library's cancelGraceMs, counted from
    // the deadline), and 5 s more for the call's answer (the CLI's close wait). Now the run ends
    // by --timeout (a little slack for the process, and the server it started, to exit on a loaded
    // machine: well under what either wait took).
    expect.soft(ended.cancel - origin('cancel'), 'the unanswered cancel').toBeLessThan(25_000 + 800);
    expect.soft(ended.call - origin('call'), 'the unanswered call').toBeLessThan(25_000 + 800);

    expect(cancel!.code, cancel!.stderr).toBe(124);
    expect(jsonLines(cancel!.stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'timeout',
      exitCode: 124,
      error: { name: 'TaskTimeoutError' },
    });
    // The remote cancel was still sent, within the time.
    expect(readFileSync(logs.cancel, 'utf8')).toContain('cancel task-1');

    expect(call!.code, call!.stderr).toBe(124);
    expect(readFileSync(logs.call, 'utf8')).toContain('call job');
    expect(jsonLines(call!.stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'timeout',
      exitCode: 124,
      error: {
        message: expect.stringMatching(
          /^--timeout 25s passed before the server answered the call to "job"; stopped waiting for its answer after [\d.]+ s \(the end of --timeout\); the stdio server stops with this process/,
        ),
      },
    });
  });
});

describe('`cancel` against a server that never answers tasks/cancel', { timeout: 60_000 }, () => {
  it('exits 1 (not 124: `cancel` takes no --timeout), saying the cancel was not confirmed and the task may still run', async () => {
    const log = join(scratch(), 'server.log');
    const { code, stderr } = await runPiped(['cancel', 'waiting-1', '--stdio', FAULTY_SERVER], {
      SCRIPT: 'hang-cancel',
      STARTING_TASK: 'waiting-1',
      LOG: log,
    }).done;
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('the server did not confirm the cancel of task waiting-1, which may still be running');
    expect(readFileSync(log, 'utf8')).toContain('cancel waiting-1');
  });
});

describe('Ctrl-C and SIGTERM respect the cancel grace', { timeout: 60_000 }, () => {
  it('against a server that never answers tasks/cancel, SIGTERM leaves about the grace later, saying the cancel went unanswered', async () => {
    const log = join(scratch(), 'server.log');
    const run = runPiped(['call', 'job', '--stdio', FAULTY_SERVER], { SCRIPT: 'hang-cancel', LOG: log });
    await until(() => run.stdout().includes('"type":"snapshot"'), 30_000, 'the task to start');
    const sent = Date.now();
    run.kill('SIGTERM');
    const { code, stdout, stderr } = await run.done;
    const took = Date.now() - sent;
    // The grace (2 s) plus the exit, not the retry policy's 66 s.
    expect(took).toBeGreaterThanOrEqual(CANCEL_GRACE_MS - 100);
    expect(took).toBeLessThan(CANCEL_GRACE_MS + 8_000);
    expect(code, stderr).toBe(143);
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'interrupted',
      exitCode: 143,
      taskId: 'task-1',
      error: {
        name: 'Interrupted',
        message:
          'the server did not answer the cancel within 2 s; the stdio server stops with this process, and task task-1 with it',
      },
    });
    // The server did get the cancel, and held it.
    expect(existsSync(log) && readFileSync(log, 'utf8')).toContain('cancel task-1');
  });
});
