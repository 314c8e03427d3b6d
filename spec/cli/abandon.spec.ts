/**
 * `mcp-task call` given up before the server answered `tools/call` (Ctrl-C or `--timeout`): the
 * CLI keeps the connection open until the answer arrives and the task it created anyway is
 * cancelled, bounded by CLOSE_WAIT_MS (and the end of `--timeout`) and by a second Ctrl-C ([R24]: the task-creating request is
 * never withdrawn, so the only way to stop its task is the cancel once its id is known). The wait
 * is the library's: `close()` of a client made by `TaskClient.connect` waits, within
 * `closeTimeoutMs`, for such an answer and the task's `tasks/cancel`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE_WAIT_MS } from '../../cli/src/target.js';
import { ExtServer, outcome, startExtHttpServer, type ExtHttpServer } from '../support/ext-server/index.js';
import { EXT_WIRE, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

/** `text` as a regular expression that matches it literally. */
const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `--stdio` value of the 2025-11-25 server whose `tools/call` answers late (spec/fixtures/slow-create-server.ts). */
const SLOW_STDIO_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../fixtures/slow-create-server.ts', import.meta.url))}`;

describe.sequential('mcp-task call abandoned before the server answered', { timeout: 60_000 }, () => {
  let server: ExtServer;
  let endpoint: ExtHttpServer;
  /** Releases the `tools/call` the server is holding. */
  let release: () => void = () => {};
  let held = 0;
  beforeAll(async () => {
    server = new ExtServer({
      tools: [
        {
          name: 'slow',
          run: async () => {
            held += 1;
            await new Promise<void>((resolve) => (release = resolve));
            return outcome.task({ advance: 'manual' });
          },
        },
      ],
    });
    endpoint = await startExtHttpServer(server);
  });
  afterAll(async () => {
    release();
    await endpoint.close();
  });
  afterEach(() => release());

  const statuses = (): string[] => server.tasks.ids().map((id) => server.tasks.detailed(id).status);

  it('Ctrl-C before the answer: waits for it, cancels the task created anyway, then exits 130', async () => {
    const before = server.tasks.ids().length;
    const heldBefore = held;
    const run = runPiped(['call', 'slow', '--url', endpoint.url.href, '--json']);
    await until(() => held > heldBefore, 20_000, 'the server to hold the tools/call');
    let exited = false;
    void run.done.then(() => (exited = true));
    run.kill('SIGINT');
    // The CLI must still be there when the answer comes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(exited).toBe(false);
    release();
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(130);
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'cancelled',
      exitCode: 130,
      wire: EXT_WIRE,
      error: { name: 'AbortError' },
    });
    expect(stderr).toContain('waiting up to');
    expect(server.tasks.ids().length).toBe(before + 1);
    expect(statuses().at(-1)).toBe('cancelled');
  });

  it('--timeout before the answer: the same wait, until the end of --timeout, exit 124, the task cancelled', async () => {
    const heldBefore = held;
    // --timeout counts from the start, connecting included: leave the connection ample time.
    const run = runPiped(['call', 'slow', '--url', endpoint.url.href, '--json', '--timeout', '12s']);
    await until(() => held > heldBefore, 20_000, 'the server to hold the tools/call');
    let exited = false;
    void run.done.then(() => (exited = true));
    // The call is given up a reserve (2.5 s) before the end of --timeout, and the CLI stays for
    // the answer until then.
    await until(() => run.stderr().includes('waiting up to'), 20_000, 'the call to be given up');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(exited).toBe(false);
    release();
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(124);
    expect(stderr).toContain('waiting up to');
    expect(jsonLines(stdout).at(-1)).toMatchObject({ type: 'result', outcome: 'timeout', exitCode: 124 });
    expect(statuses().at(-1)).toBe('cancelled');
  });

  it('a second Ctrl-C leaves at once, without waiting for the answer', async () => {
    const heldBefore = held;
    const run = runPiped(['call', 'slow', '--url', endpoint.url.href, '--json']);
    await until(() => held > heldBefore, 20_000, 'the server to hold the tools/call');
    run.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pressed = Date.now();
    run.kill('SIGINT');
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(130);
    expect(Date.now() - pressed).toBeLessThan(CLOSE_WAIT_MS);
    expect(stderr).toContain('Ctrl-C: leaving without waiting');
    // The result line is still printed, last, and does not claim a cancel.
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'interrupted',
      exitCode: 130,
      error: {
        name: 'Interrupted',
        message: `Ctrl-C before the server answered the call to "slow"; left without waiting for its answer; a task it creates now is not cancelled: it runs on the server until it expires`,
      },
    });
  });

  it('an answer later than the wait: the result line does not say the task will be cancelled (it is not); exit 130 or 124', async () => {
    for (const [extra, code, outcome, said] of [
      [[], 130, 'interrupted', 'Ctrl-C before the server answered the call to "slow"'],
      [['--timeout', '3s'], 124, 'timeout', '--timeout 3s passed before the server answered the call to "slow"'],
    ] as const) {
      const heldBefore = held;
      const before = server.tasks.ids().length;
      const run = runPiped(['call', 'slow', '--url', endpoint.url.href, '--json', ...extra]);
      await until(() => held > heldBefore, 20_000, 'the server to hold the tools/call');
      if (extra.length === 0) run.kill('SIGINT');
      const { code: exitCode, stdout, stderr } = await run.done;
      expect(exitCode, stderr).toBe(code);
      const last = jsonLines(stdout).at(-1);
      // Under --timeout 3s, the wait ends with --timeout: the call was given up a reserve (a
      // quarter of it, 0.75 s) before; a loaded machine fires that timer late, which leaves less
      // of the wait (down to none), never more.
      const waited =
        extra.length === 0 ? `after ${CLOSE_WAIT_MS / 1000} s` : 'after 0(\\.[0-8])? s \\(the end of --timeout\\)';
      expect(last).toMatchObject({
        type: 'result',
        outcome,
        exitCode: code,
        error: {
          message: expect.stringMatching(
            new RegExp(
              `^${literally(said)}; stopped waiting for its answer ${waited}; a task it creates now is not cancelled: it runs on the server until it expires$`,
            ),
          ),
        },
      });
      expect(JSON.stringify(last)).not.toContain('will be cancelled');
      // What the line says is what happens: the answer that comes now makes a task nobody cancels.
      release();
      await until(() => server.tasks.ids().length > before, 10_000, 'the late task');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(statuses().at(-1)).toBe('working');
    }
  });
});

describe('mcp-task call abandoned before the answer, on the 2025-11-25 wire over stdio', { timeout: 60_000 }, () => {
  it('Ctrl-C before the CreateTaskResult: the stdio server gets tasks/cancel for the task it created, then exit 130', async () => {
    const log = join(scratch(), 'server.log');
    const lines = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
    const run = runPiped(['call', 'slow', '--stdio', SLOW_STDIO_SERVER, '--wire', '2025-11-25', '--json'], {
      LOG: log,
      SLOW_MS: '1500',
    });
    await until(() => lines().includes('call'), 20_000, 'the server to receive the tools/call');
    run.kill('SIGINT');
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(130);
    expect(stderr).toContain('waiting up to');
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'cancelled',
      wire: '2025-11-25',
      error: { name: 'AbortError' },
    });
    const created = lines()
      .find((line) => line.startsWith('created '))
      ?.slice('created '.length);
    expect(created).toBeDefined();
    expect(lines()).toContain(`cancel ${created}`);
  });
});
