/**
 * End to end in a real pseudo-terminal against the example server over stdio: the live status
 * line, a form answered by typed keys (select, number, confirm, email), Ctrl-C cancelling the
 * remote task (checked on the server), also while a form is open, a second Ctrl-C leaving at
 * once, and the exit codes; against the tasks-extension example server, a question that arrives
 * as `inputRequests`; and the CLI as a background job of a shell, which leaves the terminal alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EXT_STDIO_SERVER, KEY, MAIN, PtyRun, ROOT, STDIO_SERVER, removeScratch, scratch } from './support/cli.js';

afterAll(removeScratch);

const runs: PtyRun[] = [];
function start(args: string[], env?: Record<string, string>): PtyRun {
  const run = new PtyRun(args, env);
  runs.push(run);
  return run;
}

afterEach(() => {
  for (const run of runs.splice(0)) run.kill();
});

describe.sequential('mcp-task in a terminal', { timeout: 60_000 }, () => {
  it('shows a live status line with status, message, elapsed time, counts and progress, then the result (exit 0)', async () => {
    const run = start(['call', 'analyze', 'id=7', 'steps=4', 'stepMs=600', '--stdio', STDIO_SERVER]);
    await run.waitFor(/⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏/);
    await run.waitFor(/working step 1\/4 · [\d.]+m?s · \d+ polls?, 1 notification · \[#+-+\] 1\/4/);
    await run.waitFor(/working step 2\/4 · [\d.]+m?s · \d+ polls?, 2 notifications · \[#+-+\] 2\/4/);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(0);
    const text = run.text;
    expect(text).toContain('✔ completed');
    expect(text).toContain('analysis of 7 done in 4 steps');
    // The line was redrawn in place: many spinner frames, and the elapsed time grew.
    const frames = new Set(text.match(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g));
    expect(frames.size).toBeGreaterThan(3);
    expect(run.raw).toContain('\r\x1b[2K');
    expect(run.raw).toContain('\x1b[36m'); // colours on a terminal
  });

  it('answers a form by typed keys: a select, a number with its bounds, a confirm and an email', async () => {
    const run = start(['call', 'order', '--stdio', STDIO_SERVER]);
    let at = await run.waitFor('Answer this form?');
    run.type(KEY.enter); // Answer
    at = await run.waitFor('Format', 15_000, at);
    run.type(KEY.down); // pdf -> html
    run.type(KEY.enter);
    at = await run.waitFor('Copies (1-5, integer)', 15_000, at);
    run.type('9');
    run.type(KEY.enter);
    at = await run.waitFor('Must be at most 5', 15_000, at);
    run.type(KEY.backspace);
    run.type('3');
    run.type(KEY.enter);
    at = await run.waitFor('Urgent', 15_000, at);
    run.type('y');
    at = await run.waitFor('Email (email, optional)', 15_000, at);
    run.type('nope');
    run.type(KEY.enter);
    at = await run.waitFor('Enter an email address', 15_000, at);
    run.type(KEY.backspace.repeat(4));
    run.type('me@example.com');
    run.type(KEY.enter);
    await run.waitFor('elicitation answered accept (by you)', 15_000, at);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(0);
    expect(run.text).toContain('ordered 3 html report');
    expect(run.text).toContain('"urgent": true');
    expect(run.text).toContain('"email": "me@example.com"');
  });

  it('io.modelcontextprotocol/tasks: the wire on the status line, and a question from inputRequests answered in a form', async () => {
    const run = start(['call', 'analyze', 'id=7', '--stdio', EXT_STDIO_SERVER], { EXT_STEP_MS: '300' });
    await run.waitFor('(analyze) on the io.modelcontextprotocol/tasks wire');
    await run.waitFor(
      /working loading dataset 7 · [\d.]+m?s · \d+ polls?, \d+ notifications? · io\.modelcontextprotocol\/tasks/,
    );
    let at = await run.waitFor('Answer this form?');
    run.type(KEY.enter); // Answer
    at = await run.waitFor('Report depth', 15_000, at);
    run.type(KEY.down); // Summary -> Full report
    run.type(KEY.enter);
    await run.waitFor('elicitation answered accept (by you)', 15_000, at);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(0);
    expect(run.text).toContain('✔ completed');
    expect(run.text).toContain('analysis of dataset 7: full report ready');
  });

  it('Ctrl-C cancels the remote task: the stdio server receives tasks/cancel, exit 130', async () => {
    const log = join(scratch(), 'cancels.log');
    const run = start(['call', 'analyze', 'steps=60', 'stepMs=250', '--stdio', STDIO_SERVER], { CANCEL_LOG: log });
    await run.waitFor('step 2/60');
    const taskId = /task ([0-9a-f]{8})…/.exec(run.text)?.[1];
    expect(taskId).toBeDefined();
    run.type(KEY.ctrlC);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(130);
    expect(run.text).toContain('cancelling the task');
    expect(run.text).toContain('was cancelled on the server');
    // Proof from the server side: it recorded the tasks/cancel it received.
    expect(existsSync(log)).toBe(true);
    expect(readFileSync(log, 'utf8')).toMatch(new RegExp(`^cancel ${taskId}[0-9a-f]+$`, 'm'));
  });

  it('Ctrl-C while a form is open cancels the task: the form answers nothing, exit 130', async () => {
    const log = join(scratch(), 'cancels.log');
    const run = start(['call', 'confirm_delete', '--stdio', STDIO_SERVER], { CANCEL_LOG: log });
    const at = await run.waitFor('Answer this form?');
    run.type(KEY.ctrlC);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(130);
    const text = run.text.slice(at);
    expect(text).toContain('was cancelled on the server');
    expect(text).not.toContain('elicitation answered');
    expect(text).not.toContain('completed');
    expect(readFileSync(log, 'utf8')).toMatch(/^cancel [0-9a-f]+$/m);
  });

  it('a second Ctrl-C leaves at once with exit 130', async () => {
    const run = start(['call', 'analyze', 'steps=60', 'stepMs=250', '--stdio', STDIO_SERVER]);
    await run.waitFor('step 1/60');
    const pressed = Date.now();
    run.type(KEY.ctrlC + KEY.ctrlC);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(130);
    expect(Date.now() - pressed).toBeLessThan(5_000);
    expect(run.text).toContain('second Ctrl-C: leaving without waiting');
    // Not "cancelled": the CLI left without knowing; the stdio server stops with it.
    expect(run.text).toMatch(
      /■ interrupted: left without waiting for the task to end; the stdio server stops with this process, and task \S+ with it/,
    );
  });

  it('a failed task exits 1 with the server message; NO_COLOR turns colours off', async () => {
    const run = start(['call', 'flaky', 'reason=quota exceeded', 'afterMs=600', '--stdio', STDIO_SERVER], {
      NO_COLOR: '1',
    });
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(1);
    expect(run.text).toContain('✖ failed: Tool "flaky" failed: quota exceeded');
    expect(run.text).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working/); // the status line still runs
    // eslint-disable-next-line no-control-regex
    expect(run.raw).not.toMatch(/\x1b\[(3\d|2|1)m/);
  });

  it('--answers - reads the terminal to its end: questions left are declined, not asked on a terminal read out', async () => {
    const run = start(['call', 'confirm_delete', '--answers', '-']);
    // End of input at the start of a line (Ctrl-D): no answers given.
    run.type('\x04');
    const ended = await Promise.race([
      run.exited,
      new Promise<undefined>((resolve) => setTimeout(resolve, 30_000, undefined)),
    ]);
    expect(ended?.exitCode, run.text).toBe(0);
    expect(run.text).not.toContain('Answer this form?');
    expect(run.text).toContain('declined a question from task');
    expect(run.text).toContain('kept /tmp/demo.txt (decline)');
  });

  it('runs as a background job of a shell with job control (`… > out &`): never stopped by SIGTTOU or SIGTTIN', async () => {
    const dir = scratch();
    const cli = `'${process.execPath}' --import tsx '${MAIN}' call analyze steps=2 stepMs=100`;
    // A stopped job is killed, so that nothing is left behind; `wait` reports it stopped (128 + 22).
    const script = `set -m; ${cli} > '${dir}/out' 2> '${dir}/err' & pid=$!; wait $pid; rc=$?; kill -KILL $pid 2>/dev/null; echo "rc=$rc"`;
    const shell = pty.spawn('/bin/bash', ['--norc', '--noprofile', '-c', script], { cwd: ROOT, cols: 120, rows: 40 });
    let text = '';
    shell.onData((data) => (text += data));
    try {
      await new Promise((resolve) => shell.onExit(resolve));
    } finally {
      shell.kill();
    }
    expect(text).toContain('rc=0');
    expect(readFileSync(join(dir, 'out'), 'utf8')).toContain('"outcome":"completed"');
  });
});
