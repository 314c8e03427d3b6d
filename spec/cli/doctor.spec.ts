/**
 * `mcp-task doctor`: the real CLI against real servers (server-everything and the extension example
 * server over stdio, the SDK's McpServer example over Streamable HTTP on 127.0.0.1) and against the
 * doctor's scripted 2025-11-25 server (spec/doctor/model-server.ts over stdio,
 * spec/fixtures/doctor-model-server.ts) with one deviation switched on. The expected verdicts are
 * the ones the library's doctor specs derive from the specs (spec/doctor/reference.spec.ts,
 * ext.spec.ts, deviants.spec.ts): this suite checks what the command adds (the target's sessions,
 * the options, the table on a terminal, the JSON document, exit codes, bounds, clean-up, sanitized
 * output). Usage errors and unreachable targets run in process.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { DoctorReport } from 'mcp-task-client/doctor';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { doctorCommand } from '../../cli/src/commands/doctor.js';
import { reportDocument, reportTable } from '../../cli/src/doctor-output.js';
import type { Io } from '../../cli/src/io.js';
import { main } from '../../cli/src/program.js';
import { createExampleServer } from '../../examples/server.js';
import { allowSdkServerListeners } from '../support/sdk-server-listeners.js';
import { closedPort, silentHttpServer, startHttpServer } from '../support/http-server.js';
import {
  EXT_STDIO_SERVER,
  EXT_WIRE,
  KEY,
  PtyRun,
  ROOT,
  removeScratch,
  runPiped,
  scratch,
  until,
} from './support/cli.js';

const require = createRequire(import.meta.url);
const EVERYTHING = `${process.execPath} ${require.resolve('@modelcontextprotocol/server-everything/dist/index.js')} stdio`;
const MODEL_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../fixtures/doctor-model-server.ts', import.meta.url))}`;
/** A stdio server that answers nothing, not even the handshake (spec/fixtures/mute-server.ts). */
const MUTE_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../fixtures/mute-server.ts', import.meta.url))}`;
/** The document of `doctor --timeout 1s` against the mute server: stopped while connecting. */
const TIMED_OUT_CONNECTING = {
  error: {
    name: 'TimeoutError',
    message: `--timeout passed (1s): the doctor stopped while connecting to the stdio server \`${MUTE_SERVER}\`; no task was started; no report`,
  },
  exitCode: 124,
};

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});
afterAll(removeScratch);

/** The 2025-11-25 battery, in report order (lib/doctor/run.ts). */
const BATTERY_2025 = [
  'offer',
  'caps.toolsCall',
  'caps.cancel',
  'caps.list',
  'tools.taskSupport',
  'create.result',
  'create.status',
  'create.timestamps',
  'create.ttl',
  'create.pollInterval',
  'ttl.honoured',
  'notify.sent',
  'poll.fast',
  'result.blocks',
  'result.meta',
  'result.shape',
  'cancel.running',
  'cancel.sticky',
  'cancel.twice',
  'cancel.result',
  'cancel.completed',
  'cancel.completed.status',
  'cancel.completed.result',
  'unknown.id',
  'list.paging',
  'list.complete',
  'list.badCursor',
  'fail.status',
  'fail.message',
  'fail.result',
  'input.status',
  'input.tagged',
  'input.resumes',
  'input.unanswered',
  'expiry.read',
];

/** `[check, verdict]` of one wire's rows. */
const verdicts = (report: DoctorReport, wire: string): Array<[string, string]> =>
  report.rows.filter((row) => row.wire === wire).map((row) => [row.check, row.verdict]);

/** The checks that deviate, with their rule and strength. */
const deviations = (report: DoctorReport): string[] =>
  report.rows.filter((row) => row.verdict === 'deviation').map((row) => `${row.check} ${row.rule} ${row.severity}`);

/** What the model server saw, written by the fixture after every message. */
const modelState = (file: string): { running: number; failures: string[] } =>
  JSON.parse(readFileSync(file, 'utf8')) as { running: number; failures: string[] };

/** The scripted server with `model` options, a state file, and the CLI's doctor run against it (extra args). */
function doctorOnModel(
  model: Record<string, unknown>,
  args: readonly string[],
): { state: string; done: ReturnType<typeof runPiped>['done'] } {
  const state = join(scratch(), 'state.json');
  const run = runPiped(['doctor', '--stdio', MODEL_SERVER, '--fail-tool', 'fail', '--input-tool', 'ask', ...args], {
    MODEL: JSON.stringify(model),
    STATE: state,
    COLUMNS: '120',
  });
  return { state, done: run.done };
}

describe('mcp-task doctor against real servers', { timeout: 150_000 }, () => {
  it('over stdio probes each wire the server speaks: server-everything (2025-11-25) and the extension example server; JSON when stdout is not a terminal; exit 0', async () => {
    const [everything, ext] = await Promise.all([
      runPiped([
        'doctor',
        '--stdio',
        EVERYTHING,
        '--input-tool',
        'simulate-research-query',
        '--input-args',
        'topic=MCP tasks',
        '--input-args',
        '{"ambiguous":true}',
      ]).done,
      runPiped(
        [
          'doctor',
          '--stdio',
          EXT_STDIO_SERVER,
          '--tool',
          'analyze',
          '--args',
          'id=7',
          '--fail-tool',
          'flaky',
          '--input-tool',
          'analyze',
          '--json',
        ],
        { EXT_STEP_MS: '150' },
      ).done,
    ]);

    expect(everything.code, everything.stderr).toBe(0);
    const a = JSON.parse(everything.stdout) as DoctorReport;
    expect(a).toMatchObject({
      reportVersion: 1,
      server: { name: 'mcp-servers/everything' },
      summary: { deviations: 0, mustViolations: 0 },
    });
    expect(a.wires.map((wire) => [wire.wire, wire.offered, wire.tool])).toEqual([
      ['2025-11-25', true, 'simulate-research-query'],
      [EXT_WIRE, false, undefined],
    ]);
    // A TS SDK 1.32 server: every check ok, but no failing tool to test and a 5-minute ttl, too long to wait out.
    const untestable = new Set(['fail.status', 'fail.message', 'fail.result', 'expiry.read']);
    expect(verdicts(a, '2025-11-25')).toEqual(
      BATTERY_2025.map((check) => [check, untestable.has(check) ? 'not-testable' : 'ok']),
    );
    // The input tool ran with the arguments given: the question came, tagged with its task.
    expect(a.rows.find((row) => row.check === 'input.tagged')?.seen).toMatch(/^elicitation\/create named the task/);
    expect(a.tasks).toMatchObject({ leftRunning: 0, notes: [] });
    // The server's own stderr (its log, with task ids) is not shown when the doctor could run.
    expect(everything.stderr).not.toContain('server:');

    expect(ext.code, ext.stderr).toBe(0);
    const b = JSON.parse(ext.stdout) as DoctorReport;
    expect(b.wires.map((wire) => [wire.wire, wire.offered, wire.sdk, wire.protocolVersion])).toEqual([
      ['2025-11-25', false, undefined, undefined],
      [EXT_WIRE, true, 'v2', '2026-07-28'],
    ]);
    expect(b.wires[0]?.note).toMatch(/-32022/);
    // Every check of the extension ok but the expiry (ttlMs 10 min).
    expect(verdicts(b, EXT_WIRE).filter(([, verdict]) => verdict !== 'ok')).toEqual([['expiry.read', 'not-testable']]);
    expect(verdicts(b, EXT_WIRE).length).toBeGreaterThan(15);
    expect(b.tasks.leftRunning).toBe(0);
  });

  it("the SDK's McpServer over Streamable HTTP on 127.0.0.1, on a terminal: progress on stderr, the table with coloured verdicts; exit 0, no task left running", async () => {
    // The McpServer runs in this process, and the doctor's early tasks/result is held for seconds.
    const restoreListeners = allowSdkServerListeners();
    cleanups.push(async () => restoreListeners());
    const stores: Array<ReturnType<typeof createExampleServer>['store']> = [];
    const server = await startHttpServer({}, () => {
      const { server: mcp, store } = createExampleServer({ pollInterval: 200 });
      stores.push(store);
      return { server: mcp, cleanup: () => store.cleanup() };
    });
    cleanups.push(() => server.close());
    const run = new PtyRun([
      'doctor',
      '--url',
      server.url.href,
      '--header',
      'X-Doctor: yes',
      '--tool',
      'analyze',
      '--args',
      'id=1',
      '--args',
      '{"steps":2,"stepMs":200}',
      '--fail-tool',
      'flaky',
      '--fail-args',
      'afterMs=200',
      '--input-tool',
      'confirm_delete',
    ]);
    cleanups.push(async () => run.kill());
    const { exitCode } = await run.exited;
    const text = run.text;
    expect(exitCode, text).toBe(0);
    expect(text).toContain('probing 2025-11-25: lifecycle');
    // What the spec says of this server (spec/doctor/reference.spec.ts): every check ok but a failed
    // task without a statusMessage (a SHOULD of V18); the extension is not offered.
    expect(text).toMatch(
      /mcp-task doctor: example-task-server 1\.0\.0, 34 ok, 1 deviation, 1 not testable, in \d+\.\d s/,
    );
    expect(text).toMatch(/2025-11-25 \(SDK v2, protocol 2025-11-25\): tool analyze, as named/);
    expect(text).toMatch(/VERDICT\s+SEV\s+RULE\s+CHECK\s+SEEN\s+LIBRARY/);
    expect(text).toMatch(/✘ deviation\s+SHOULD\s+V18\s+a failed task says why\s+no statusMessage on/);
    for (const check of [
      'offer',
      'create.result',
      'notify.sent',
      'result.blocks',
      'cancel.running',
      'unknown.id',
      'list.paging',
      'fail.status',
      'input.tagged',
      'expiry.read',
    ]) {
      expect(text).toContain(`(${check})`);
    }
    expect(text).toMatch(/io\.modelcontextprotocol\/tasks: not probed/);
    expect(text).toMatch(/Tasks: \d+ started, \d+ ended on their own, \d+ cancelled, 0 left running\./);
    expect(run.raw).toContain('\u001b[32m✔ ok');
    expect(run.raw).toContain('\u001b[31m✘ deviation');
    const live = stores
      .flatMap((store) => store.getAllTasks())
      .filter((task) => task.status === 'working' || task.status === 'input_required');
    expect(stores.flatMap((store) => store.getAllTasks()).length).toBeGreaterThan(3);
    expect(live).toEqual([]);
  });
});

describe('mcp-task doctor against a scripted deviant server', { timeout: 120_000 }, () => {
  it('a cancel that rewrites a completed task to cancelled (and drops its result), and -32603 for unknown and expired ids: exit 1, the MUST rules named, nothing else', async () => {
    const rewrites = doctorOnModel({ cancelRewrites: true }, ['--json']);
    const unknown = doctorOnModel({ unknownCode: -32603 }, ['--table']);
    const [a, b] = await Promise.all([rewrites.done, unknown.done]);

    expect(a.code, a.stderr).toBe(1);
    const report = JSON.parse(a.stdout) as DoctorReport;
    expect(deviations(report)).toEqual([
      'cancel.completed V23 MUST',
      'cancel.completed.status V5 MUST',
      'cancel.completed.result V15 MUST',
    ]);
    expect(report.summary.mustViolations).toBe(3);
    expect(report.rows.find((row) => row.check === 'cancel.completed.status')?.seen).toBe(
      'completed before the cancel, cancelled after it',
    );
    expect(report.tasks.leftRunning).toBe(0);
    expect(modelState(rewrites.state)).toEqual({ running: 0, failures: [] });

    expect(b.code, b.stderr).toBe(1);
    // The wrong code shows twice, both times against V26: for a made-up id, and for the task read
    // after its ttl (the CLI lets the expiry check wait; the library's deviants spec does not).
    expect(b.stdout).toMatch(/^mcp-task doctor: scripted-server 1\.0\.0, \d+ ok, 2 deviations \(2 of a MUST rule\), /);
    expect(b.stdout).toMatch(/✘ deviation\s+MUST\s+V26\s+an unknown task id is\s+tasks\/get -32603,\s/);
    expect(b.stdout).toMatch(/✘ deviation\s+MUST\s+V26\s+after its ttl a task may\s+tasks\/get answered -32603/);
    expect(b.stdout).toContain('(unknown.id)');
    expect(b.stdout).toContain('(expiry.read)');
    expect(b.stdout.match(/✘ deviation/g)).toHaveLength(2);
    // Not a terminal: no colours, no progress line.
    expect(b.stdout + b.stderr).not.toContain('\u001b');
    expect(modelState(unknown.state)).toEqual({ running: 0, failures: [] });
  });

  it('--timeout bounds the whole run, cancels included: a task that never ends is cancelled before the end, exit 124, the report says which checks were cut short', async () => {
    // Long enough for the connection (two tsx starts: SDK v2's era probe runs on a process of its
    // own) to be over on a loaded machine; a stop while connecting is the next describe's.
    const started = Date.now();
    const { state, done } = doctorOnModel({ neverEnds: true }, ['--timeout', '12s']);
    const run = await done;
    const tookMs = Date.now() - started;
    expect(run.code, run.stderr).toBe(124);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.cutShort?.length).toBeGreaterThan(0);
    for (const { wire, check } of report.cutShort ?? [])
      expect(report.rows.find((row) => row.wire === wire && row.check === check)?.seen).toMatch(
        /^cut short by the run's deadline \(timeoutMs 1\d s\)$/,
      );
    expect(report.tasks).toMatchObject({ leftRunning: 0 });
    expect(report.tasks.cancelled).toBe(report.tasks.started);
    expect(run.stderr).toMatch(
      /--timeout passed \(12s\): \d+ checks were cut short \(not testable, the report says which\); of the \d+ tasks? it started, \d+ cancelled, 0 ended on their own, 0 left running/,
    );
    // Before the fix: 12 s, then up to 10 s more for the cancels. Now within 12 s of the CLI's
    // start (plus its process start under tsx, and its exit).
    expect(tookMs).toBeLessThan(12_000 + 4_000);
    expect(modelState(state)).toEqual({ running: 0, failures: [] });
  });
});

describe('mcp-task doctor: stopped runs say what became of their tasks', { timeout: 90_000 }, () => {
  it('a server without tasks.cancel: --timeout says the task was left running, as the ledger has it', async () => {
    const { done } = doctorOnModel({ neverEnds: true, noCancel: true }, ['--timeout', '12s']);
    const run = await done;
    expect(run.code, run.stderr).toBe(124);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.cutShort?.length).toBeGreaterThan(0);
    expect(report.tasks.leftRunning).toBeGreaterThan(0);
    expect(report.tasks.notes.join('\n')).toMatch(/a task of work: the server declared no tasks\.cancel/);
    expect(run.stderr).toMatch(/--timeout passed \(12s\): .* [1-9]\d* left running/);
  });

  it('--json: leaving without waiting (a second SIGINT) still prints the error document', async () => {
    const p = pipes();
    const listening = process.listenerCount('SIGINT');
    const running = doctorCommand({ json: true }, p.io);
    // The bundled example server, in process: stopped as soon as the CLI reads interruptions.
    await until(() => process.listenerCount('SIGINT') > listening, 20_000, 'the doctor to read interruptions');
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(await running).toBe(130);
    expect(JSON.parse(p.stdout())).toEqual({
      error: {
        name: 'Interrupted',
        message: 'Ctrl-C: left at once, without waiting for the tasks the doctor started; no report',
      },
      exitCode: 130,
    });
  });
});

describe('mcp-task doctor: stdout closed by its reader', { timeout: 90_000 }, () => {
  /** What the doctor's end says once its report could not be written. */
  const unwritten = (code: number | null, stderr: string): void => {
    expect(code, stderr).toBe(141);
    expect(stderr).toContain('mcp-task: stdout closed: the report was not written');
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(stderr).not.toContain('stopping the doctor');
  };

  it('the report cannot be written: exit 141 (not 0 or 1), saying so, without a stack trace', async () => {
    // The reader is gone before the doctor starts; it writes nothing before its report.
    const run = runPiped(['doctor', '--quiet']);
    run.closeStdout();
    const { code, stderr } = await run.done;
    unwritten(code, stderr);
  });

  it('no report, and the error document cannot be written either (a refused connection): exit 141, not 1', async () => {
    const port = await closedPort();
    const run = runPiped(['doctor', '--json', '--url', `http://127.0.0.1:${port}/mcp`, '--connect-timeout', '10s']);
    run.closeStdout();
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(141);
    // The failure is still told, on stderr, then why its document is missing.
    expect(stderr).toContain(`mcp-task: cannot connect to http://127.0.0.1:${port}/mcp: connection refused`);
    expect(stderr).toContain('mcp-task: stdout closed: the error document was not written');
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
  });

  it('`| head -c0` in a shell (a pipe, not a socket), with --timeout: exit 141 (not 124 or 0)', async () => {
    const cli = `'${process.execPath}' --import tsx '${join(ROOT, 'cli/src/main.ts')}' doctor --quiet --timeout 8s`;
    const shell = spawn('bash', ['-o', 'pipefail', '-c', `${cli} | head -c0`], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => shell.on('close', resolve));
    unwritten(code, stderr);
  });
});

describe('mcp-task doctor: Ctrl-C', { timeout: 90_000 }, () => {
  it('on a terminal, Ctrl-C stops the run and cancels the tasks it started (the stdio server gets no SIGINT): exit 130', async () => {
    const state = join(scratch(), 'state.json');
    const run = new PtyRun(['doctor', '--stdio', MODEL_SERVER], {
      MODEL: JSON.stringify({ neverEnds: true }),
      STATE: state,
    });
    cleanups.push(async () => run.kill());
    await run.waitFor('probing 2025-11-25: lifecycle', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.type(KEY.ctrlC);
    const { exitCode } = await run.exited;
    expect(exitCode, run.text).toBe(130);
    expect(run.text).toContain('Ctrl-C: stopping the doctor and cancelling the tasks it started');
    expect(run.text).toContain('Ctrl-C: the doctor stopped; the task it started was cancelled; no report');
    expect(modelState(state)).toEqual({ running: 0, failures: [] });
  });
});

/** The mute server's log: its processes' pids and the requests they got. */
function muteLog(file: string): { pids: number[]; requests: string[] } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
  return {
    pids: lines.filter((line) => line.startsWith('pid ')).map((line) => Number(line.slice(4))),
    requests: lines.filter((line) => line.startsWith('request ')).map((line) => line.slice(8)),
  };
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

describe('mcp-task doctor: a stop while connecting to a server that never answers', { timeout: 60_000 }, () => {
  // The old behaviour: the stop waited for the CLI's 10 s grace (the connection ignored it), then
  // left without a document. Now the connection is given up at once and its process closed.
  it('--timeout 1s: exit 124 within seconds (not the 10 s grace), the honest document, no server process left', async () => {
    const log = join(scratch(), 'mute.log');
    const started = Date.now();
    const run = await runPiped(['doctor', '--stdio', MUTE_SERVER, '--timeout', '1s'], { LOG: log }).done;
    const took = Date.now() - started;
    expect(run.code, run.stderr).toBe(124);
    expect(JSON.parse(run.stdout)).toEqual(TIMED_OUT_CONNECTING);
    expect(run.stderr).toContain('--timeout passed: stopping the doctor (no task started yet)');
    expect(run.stderr).not.toContain('did not stop within');
    // The CLI's start through tsx, the 1 s, the server's teardown: well under the old 10 s grace.
    expect(took).toBeLessThan(8_000);
    // Only the handshake reached the server, if anything did (on a loaded machine the second may
    // pass before its process, started through tsx, reads a line; the SIGINT case below waits).
    const { requests } = muteLog(log);
    expect(requests.every((method) => method === 'initialize' || method === 'server/discover')).toBe(true);
    // Every server process that started (its pid line may come late) ends.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await until(() => !muteLog(log).pids.some(alive), 5_000, 'the server processes to end');
  });

  it('--timeout 1s against a server slow to go: the CLI leaves at its deadline with the same honest document (no task was started)', async () => {
    // The doctor's own stop waits for the server to close, so the CLI's end of --timeout comes first.
    const log = join(scratch(), 'mute.log');
    const run = await runPiped(['doctor', '--stdio', MUTE_SERVER, '--timeout', '1s'], { LOG: log, STUBBORN: '1' }).done;
    expect(run.code, run.stderr).toBe(124);
    expect(JSON.parse(run.stdout)).toEqual(TIMED_OUT_CONNECTING);
    await until(() => !muteLog(log).pids.some(alive), 10_000, 'the server processes to end');
  });

  it('a second Ctrl-C against a server deaf to SIGTERM that never reads its stdin: killed before the CLI exits', async () => {
    const pidFile = join(scratch(), 'pids');
    const deaf = `sh -c 'trap "" TERM; echo $$ >> ${pidFile}; exec sleep 101'`;
    const run = runPiped(['doctor', '--stdio', deaf]);
    cleanups.push(async () => run.kill('SIGKILL'));
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 30_000, 'the server');
    run.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    run.kill('SIGINT');
    const result = await run.done;
    const left = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number).filter(alive);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(result.code, result.stderr).toBe(130);
    expect(left).toEqual([]);
  });

  it('a --timeout that ends the handshake is the bound named (not --connect-timeout): exit 124, a TimeoutError document', async () => {
    // Takes every request and never answers it. The doctor's connect bound is at most its
    // timeoutMs, which the CLI sets from --timeout: that bound, not --connect-timeout, ends the wait.
    const silent = await silentHttpServer();
    cleanups.push(() => silent.close());
    const url = silent.url.href;
    // 200ms: the doctor's connect bound is 1 ms. 3s: SDK v2's version probe gets part of it.
    for (const timeout of ['200ms', '3s']) {
      const run = pipes();
      expect(await doctorCommand({ url, timeout }, run.io), run.stderr()).toBe(124);
      // 200ms: the deadline passed, as when the CLI stops the connecting itself. 3s: the probe's
      // share of it ran out first.
      const message =
        timeout === '200ms'
          ? `--timeout passed (${timeout}): the doctor stopped while connecting to ${url}; no task was started; no report`
          : `--timeout ${timeout} ended connecting: ${url} had not answered the handshake in the time it left; no task was started; no report`;
      expect(JSON.parse(run.stdout()), timeout).toEqual({ error: { name: 'TimeoutError', message }, exitCode: 124 });
      expect(run.stderr()).not.toContain('--connect-timeout');
    }
  });

  it('SIGINT (Ctrl-C off a terminal) while connecting: exit 130 at once, the same document', async () => {
    const log = join(scratch(), 'mute.log');
    const run = runPiped(['doctor', '--stdio', MUTE_SERVER], { LOG: log });
    cleanups.push(async () => run.kill('SIGKILL'));
    await until(() => muteLog(log).requests.length > 0, 30_000, 'the handshake to reach the server');
    const stopped = Date.now();
    run.kill('SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(Date.now() - stopped).toBeLessThan(5_000);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        name: 'Interrupted',
        message: `Ctrl-C: the doctor stopped while connecting to the stdio server \`${MUTE_SERVER}\`; no task was started; no report`,
      },
      exitCode: 130,
    });
    await until(() => !muteLog(log).pids.some(alive), 3_000, 'the server processes to end');
  });
});

/** Control characters but the line feed. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** Streams for an in-process run: nothing is a terminal. */
function pipes(): { io: Io; stdout: () => string; stderr: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const io = { stdin: new PassThrough(), stdout: out, stderr: err, env: {} } as unknown as Io;
  return { io, stdout: () => stdout, stderr: () => stderr };
}

describe('mcp-task doctor: usage errors and targets that are not MCP servers', () => {
  it('usage errors exit 2 before anything is started, saying what is wrong', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const cases: Array<[string[], RegExp]> = [
        [['--stdio', 'cat', '--url', 'http://127.0.0.1:9/mcp'], /Give either --stdio or --url, not both/],
        [['--args', 'id=1'], /--args needs --tool/],
        [['--fail-args', '{"afterMs":1}'], /--fail-args needs --fail-tool/],
        [['--tool', 'analyze', '--args', 'id'], /key=value pairs, got "id"/],
        [['--tool', 'analyze', '--args', '{"id":'], /--args is not valid JSON/],
        [['--input-tool', 'ask', '--input-args', '{"a":1', '--input-args', 'b=2'], /--input-args is not valid JSON/],
        [['--json', '--table'], /Give either --json or --table, not both/],
        [['--probe-timeout', '0'], /--probe-timeout must be at least 1ms, got "0"/],
        [['--timeout', '0'], /--timeout must be at least 1ms, got "0"/],
        [['--connect-timeout', '0.4ms'], /--connect-timeout must be at least 1ms, got "0.4ms"/],
        [['--timeout', 'soon'], /--timeout expects a duration/],
        [['--connect-timeout', '30d'], /--connect-timeout expects a duration/],
        [['--url', 'not a url'], /--url: not a URL/],
        [['--url', 'http://127.0.0.1:9/mcp', '--header', 'Bad Name: x'], /not a valid header name/],
        [['--stdio', '"node server.js'], /unterminated " quote/],
        [['--wire', 'ext'], /unknown option '--wire'/],
        [['--tool'], /argument missing/],
      ];
      for (const [args, message] of cases) {
        written.length = 0;
        expect(await main(['doctor', ...args]), args.join(' ')).toBe(2);
        expect(written.join(''), args.join(' ')).toMatch(message);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('a command that is not an MCP server (cat) and a port nothing listens on: exit 1 with a clear reason, in the JSON document too', async () => {
    const port = await closedPort();

    const cat = pipes();
    expect(await doctorCommand({ stdio: 'cat', connectTimeout: '10s' }, cat.io)).toBe(1);
    expect(JSON.parse(cat.stdout())).toEqual({
      error: {
        name: 'ConnectError',
        reason: 'not-mcp',
        message:
          "cannot connect to the stdio server `cat`: the target does not speak MCP: it sent the client's own initialize request back (an echo, like cat)",
      },
      exitCode: 1,
    });
    expect(cat.stderr()).toContain('mcp-task: cannot connect to the stdio server `cat`');

    const closed = pipes();
    expect(await doctorCommand({ url: `http://127.0.0.1:${port}/mcp`, connectTimeout: '10s' }, closed.io)).toBe(1);
    expect(JSON.parse(closed.stdout())).toEqual({
      error: {
        name: 'ConnectError',
        reason: 'unreachable',
        message: `cannot connect to http://127.0.0.1:${port}/mcp: connection refused`,
      },
      exitCode: 1,
    });
  });

  it('server text cannot drive the terminal: the table shows control characters as visible stand-ins, the JSON escapes them', () => {
    const evil = 'x\u001b]0;owned\u0007\u001b[2J\u009b31m\r';
    const report: DoctorReport = {
      reportVersion: 1,
      server: { name: `srv${evil}`, version: '1' },
      startedAt: '2026-12-01T00:00:00.000Z',
      durationMs: 10,
      wires: [
        {
          wire: '2025-11-25',
          offered: true,
          sdk: 'v2',
          protocolVersion: '2025-11-25',
          tool: `t${evil}`,
          note: `tool t${evil}`,
        },
      ],
      rows: [
        {
          check: 'unknown.id',
          wire: '2025-11-25',
          rule: 'V26',
          quote: 'an unknown task id is refused with -32602',
          severity: 'MUST',
          seen: `tasks/get -32603 (${evil})`,
          verdict: 'deviation',
          coping: { quirk: 'D12', does: 'reads only -32602 as gone', handled: true },
        },
      ],
      tasks: { started: 0, finished: 0, cancelled: 0, leftRunning: 0, notes: [`note${evil}`] },
      summary: { ok: 0, deviations: 1, mustViolations: 1, notTestable: 0 },
    };
    const table = reportTable(report, { width: 200, color: false });
    expect(table).not.toMatch(CONTROLS);
    expect(table).toContain('srvx␛]0;owned␇␛[2J�31m␍');
    const coloured = reportTable(report, { width: 200, color: true });
    // The only escape sequences are the verdict's colour and its reset.
    expect(coloured.split('\u001b')).toHaveLength(3);
    const json = reportDocument(report);
    expect(json).not.toMatch(CONTROLS);
    expect((JSON.parse(json) as DoctorReport).rows[0]?.seen).toBe(`tasks/get -32603 (${evil})`);
  });
});
