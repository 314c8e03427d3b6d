/**
 * Without a terminal (pipes, as in CI): JSON lines on stdout in the documented schema, input
 * answered from --answer/--answers or declined with a note on stderr, and every exit code.
 * Against the embedded example server (so no target is needed), and against the tasks-extension
 * example server over stdio (`examples/ext-server.ts`) for the io.modelcontextprotocol/tasks wire
 * and `--wire`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EXT_STDIO_SERVER,
  EXT_WIRE,
  STDIO_SERVER,
  jsonLines,
  removeScratch,
  runPiped,
  scratch,
  until,
} from './support/cli.js';

afterAll(removeScratch);

const statuses = (lines: Record<string, unknown>[]): string[] =>
  lines.filter((line) => line.type === 'snapshot').map((line) => (line.task as { status: string }).status);

/** Consecutive duplicates removed. */
const transitions = (list: string[]): string[] => list.filter((status, i) => status !== list[i - 1]);

describe.sequential('mcp-task without a terminal', { timeout: 60_000 }, () => {
  it('merges repeated --args in order (pairs last), and names --timeout as typed when it passes', async () => {
    const [merged, late] = await Promise.all([
      runPiped(['call', 'analyze', '--args', '{"id":4,"stepMs":100}', '--args', '{"steps":1}']).done,
      runPiped(['call', 'analyze', 'steps=50', 'stepMs=200', '--timeout', '1.5']).done,
    ]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.stringify(jsonLines(merged.stdout).at(-1))).toContain('analysis of 4 done in 1 steps');
    expect(late.code, late.stderr).toBe(124);
    expect(jsonLines(late.stdout).at(-1)).toMatchObject({
      outcome: 'timeout',
      error: { name: 'TaskTimeoutError', message: expect.stringContaining('timed out: --timeout 1.5 passed') },
    });
  });

  // On Linux Node writes a pipe synchronously, so this holds there either way; on macOS, where the
  // pipe is written asynchronously, it needs the CLI to wait for stdout before it exits (flush.ts).
  it('a result larger than the pipe holds reaches a reader that is slow to read, whole (the CLI leaves once stdout is written out)', async () => {
    const text = 'a'.repeat(100_000);
    const { code, stdout, stderr } = await runPiped(['call', 'echo', `text=${text}`], {}, [], { readAfterMs: 1_500 })
      .done;
    expect(code, stderr).toBe(0);
    const last = jsonLines(stdout).at(-1);
    expect(last).toMatchObject({ type: 'result', outcome: 'completed' });
    expect(JSON.stringify(last)).toContain(text);
  });

  it('prints JSON lines that parse, with every status in order and the result last (exit 0)', async () => {
    const { code, stdout, stderr } = await runPiped(['call', 'analyze', 'id=3', 'steps=3', 'stepMs=150']).done;
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = jsonLines(stdout);
    // `--wire auto` (the default) reaches the embedded legacy server through SDK v2's fallback.
    expect(lines[0]).toMatchObject({ type: 'task', toolName: 'analyze', kind: 'task', wire: '2025-11-25' });
    const taskId = lines[0]!.taskId as string;
    expect(transitions(statuses(lines))).toEqual(['working', 'completed']);
    const messages = lines
      .filter((l) => l.type === 'snapshot')
      .map((l) => (l.task as { statusMessage?: string }).statusMessage);
    expect(messages).toEqual(expect.arrayContaining(['step 1/3', 'step 2/3']));
    expect(lines.filter((l) => l.type === 'progress').map((l) => l.progress)).toEqual([1, 2, 3]);
    for (const line of lines.filter((l) => l.type === 'snapshot')) {
      expect(line).toMatchObject({
        task: { taskId },
        polls: expect.any(Number),
        notifications: expect.any(Number),
        retries: 0,
        elapsedMs: expect.any(Number),
      });
    }
    // The counts are the handle's metrics: the embedded server notifies each step.
    const counted = lines.filter((l) => l.type === 'snapshot').map((l) => l.notifications as number);
    expect(counted.at(-1)).toBeGreaterThanOrEqual(2);
    expect(counted).toEqual([...counted].sort((a, b) => a - b));
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      outcome: 'completed',
      exitCode: 0,
      wire: '2025-11-25',
      taskId,
      result: { content: [{ type: 'text', text: 'analysis of 3 done in 3 steps' }] },
    });
    expect(stdout).not.toContain('\x1b['); // no colours, no spinner
  });

  it('declines a question it has no answer for, and says so on stderr', async () => {
    const { code, stdout, stderr } = await runPiped(['call', 'confirm_delete', 'path=/tmp/x']).done;
    expect(code).toBe(0);
    const lines = jsonLines(stdout);
    // The first line is the task as first seen: still `working`, or already `input_required`.
    expect([
      ['working', 'input_required', 'working', 'completed'],
      ['input_required', 'working', 'completed'],
    ]).toContainEqual(transitions(statuses(lines)));
    expect(lines.find((l) => l.type === 'input')).toMatchObject({
      kind: 'elicitation',
      delivery: 'request',
      request: { message: 'Delete /tmp/x?' },
      answer: { action: 'decline' },
      source: 'none',
    });
    expect(stderr).toContain('declined a question from task');
    expect(lines.at(-1)).toMatchObject({
      outcome: 'completed',
      result: { content: [{ text: 'kept /tmp/x (decline)' }] },
    });
  });

  it('answers questions from --answers FILE and --answer, in order', async () => {
    const dir = scratch();
    const file = join(dir, 'answers.json');
    writeFileSync(file, JSON.stringify([{ format: 'csv', copies: 2, urgent: false }]));
    const order = await runPiped(['call', 'order', '--answers', file, '--quiet']).done;
    expect(order.code).toBe(0);
    expect(jsonLines(order.stdout)).toEqual([
      expect.objectContaining({
        type: 'result',
        outcome: 'completed',
        result: expect.objectContaining({
          structuredContent: { item: 'report', format: 'csv', copies: 2, urgent: false },
        }),
      }),
    ]);
    const sampled = await runPiped(['call', 'summarize', '--answer', '"a typed summary"']).done;
    expect(sampled.code).toBe(0);
    const lines = jsonLines(sampled.stdout);
    expect(lines.find((l) => l.type === 'input')).toMatchObject({
      kind: 'sampling',
      source: 'answer',
      answer: { content: { text: 'a typed summary' } },
    });
    expect(lines.at(-1)).toMatchObject({ result: { content: [{ text: 'summary: a typed summary' }] } });
  });

  it('--answers - reads the answers from stdin (a pipe): JSON lines, used in order', async () => {
    const run = runPiped(['call', 'order', '--answers', '-'], {}, [], {
      input: `${JSON.stringify({ format: 'csv', copies: 3, urgent: true })}\n`,
    });
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const lines = jsonLines(stdout);
    expect(lines.find((l) => l.type === 'input')).toMatchObject({ kind: 'elicitation', source: 'answer' });
    expect(lines.at(-1)).toMatchObject({
      outcome: 'completed',
      result: { structuredContent: { item: 'report', format: 'csv', copies: 3, urgent: true } },
    });
  });

  it('--answers - waits for a pipe whose writer is slow (it read fd 0 and failed with EAGAIN when the pipe was still empty)', async () => {
    const run = runPiped(['call', 'order', '--answers', '-'], {}, [], {
      input: `${JSON.stringify({ format: 'pdf', copies: 1, urgent: false })}\n`,
      inputAfterMs: 1_500,
    });
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      outcome: 'completed',
      result: { structuredContent: { item: 'report', format: 'pdf', copies: 1, urgent: false } },
    });
  });

  it('exit codes: 1 failed (message on stderr), 2 usage, 124 timeout', async () => {
    const failed = await runPiped(['call', 'flaky', 'reason=disk full', 'afterMs=100']).done;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('Tool "flaky" failed: disk full');
    expect(jsonLines(failed.stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'failed',
      exitCode: 1,
      result: { isError: true },
    });

    for (const args of [
      ['call', 'analyze', '--wire', '2026-07-28'],
      ['call', 'analyze', 'oops'],
      ['call', 'analyze', '--timeout', 'soon'],
      ['nope'],
    ]) {
      const usage = await runPiped(args).done;
      expect(usage.code, args.join(' ')).toBe(2);
      expect(usage.stdout).toBe('');
    }

    const timeout = await runPiped(['call', 'analyze', 'steps=20', 'stepMs=200', '--timeout', '800ms']).done;
    expect(timeout.code).toBe(124);
    const lines = jsonLines(timeout.stdout);
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      outcome: 'timeout',
      exitCode: 124,
      error: { name: 'TaskTimeoutError' },
    });
    expect(timeout.stderr).toContain('the remote task was cancelled');
  });

  it('refuses before starting anything (exit 2): a --timeout beyond the timers, an unwritable --save-ref, a malformed header', async () => {
    const cases: [string[], string][] = [
      // Used to exit 124 at once: setTimeout ran the 600 h deadline after 1 ms.
      [['call', 'echo', 'text=hi', '--timeout', '600h'], 'is too long'],
      // Used to create the task, then fail writing the file and lose the task (exit 1, no lines).
      [
        ['call', 'analyze', 'steps=2', '--save-ref', join(scratch(), 'missing', 'ref.json')],
        '--save-ref: cannot write',
      ],
      // Used to exit 1 (cannot connect: invalid header name).
      [['tools', '--url', 'http://127.0.0.1:9/mcp', '--header', 'Bad Name: x'], 'is not a valid header name'],
    ];
    for (const [args, message] of cases) {
      const run = await runPiped(args).done;
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr, args.join(' ')).toContain(message);
    }
  });

  it('a server it cannot reach ends call with a result line (outcome error, exit 1), as a connect timeout does (124)', async () => {
    const run = await runPiped(['call', 'echo', 'text=hi', '--url', 'http://127.0.0.1:9/mcp']).done;
    expect(run.code).toBe(1);
    expect(jsonLines(run.stdout)).toEqual([
      {
        type: 'result',
        outcome: 'error',
        exitCode: 1,
        error: {
          name: 'ConnectError',
          message: expect.stringMatching(/^cannot connect to http:\/\/127\.0\.0\.1:9\/mcp: /),
        },
      },
    ]);
    expect(run.stderr).toContain('cannot connect to http://127.0.0.1:9/mcp: ');
  });

  it("an explicit --stdio overrides the reference's url (and its HTTP session)", async () => {
    const dir = scratch();
    const file = join(dir, 'ref.json');
    const reference = {
      v: 2,
      taskId: 'not-a-task',
      toolName: 'analyze',
      createdAt: new Date().toISOString(),
      ttl: null,
      server: 'example-task-server@1.0.0',
      wire: '2025-11-25',
      sessionId: 'sid',
      capabilities: { cancel: true, list: true },
    };
    writeFileSync(file, JSON.stringify({ v: 2, reference, url: 'http://127.0.0.1:9/mcp' }));
    const run = await runPiped(['get', '--ref', file, '--stdio', STDIO_SERVER]).done;
    // Used to exit 2: "Give either --stdio or --url, not both". The stdio server does not know the task.
    expect(run.stderr).not.toContain('Give either');
    expect(run.stderr).not.toContain('cannot connect');
    expect(run.stderr).toContain('does not know this task');
    expect(run.code).toBe(1);
  });

  it('exit 130 when interrupted (SIGINT): the remote task is cancelled first', async () => {
    const run = runPiped(['call', 'analyze', 'steps=40', 'stepMs=200']);
    await until(() => run.stdout().includes('step 1/40'), 20_000, 'the first step');
    run.kill('SIGINT');
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(130);
    const lines = jsonLines(stdout);
    expect(statuses(lines).at(-1)).toBe('cancelled');
    expect(lines.at(-1)).toMatchObject({ type: 'result', outcome: 'cancelled', exitCode: 130 });
    expect(stderr).toContain('was cancelled on the server');
  });
});

describe.sequential(
  'mcp-task on the io.modelcontextprotocol/tasks wire, without a terminal',
  { timeout: 60_000 },
  () => {
    const env = { EXT_STEP_MS: '150' };

    it('follows an extension task over stdio: the wire in the lines, every status in order, the question answered through tasks/update', async () => {
      const { code, stdout, stderr } = await runPiped(
        ['call', 'analyze', 'id=7', '--stdio', EXT_STDIO_SERVER, '--answer', '{"depth":"full"}'],
        env,
      ).done;
      expect(code).toBe(0);
      expect(stderr).toBe('');
      const lines = jsonLines(stdout);
      // `--wire auto`: SDK v2 probes the server, which speaks only 2026-07-28 and offers the extension.
      expect(lines[0]).toMatchObject({ type: 'task', toolName: 'analyze', kind: 'task', wire: EXT_WIRE });
      const taskId = lines[0]!.taskId as string;
      expect(transitions(statuses(lines))).toEqual(['working', 'input_required', 'working', 'completed']);
      const messages = lines
        .filter((l) => l.type === 'snapshot')
        .map((l) => (l.task as { statusMessage?: string }).statusMessage);
      expect(messages).toEqual(
        expect.arrayContaining([
          'loading dataset 7',
          'computing statistics',
          'waiting for your choice of report depth',
          'writing the report',
        ]),
      );
      for (const line of lines.filter((l) => l.type === 'snapshot')) {
        expect(line).toMatchObject({
          task: { taskId, ttl: 600_000, pollInterval: 75 },
          polls: expect.any(Number),
          notifications: expect.any(Number),
        });
      }
      // [E18]: the example server streams notifications/tasks to the subscription the library opens.
      expect(lines.filter((l) => l.type === 'snapshot').at(-1)!.notifications).toBeGreaterThanOrEqual(1);
      expect(lines.filter((l) => l.type === 'input')).toEqual([
        expect.objectContaining({
          taskId,
          kind: 'elicitation',
          delivery: 'task-update',
          request: expect.objectContaining({ message: 'How detailed should the report be?' }),
          answer: { action: 'accept', content: { depth: 'full' } },
          source: 'answer',
        }),
      ]);
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        outcome: 'completed',
        exitCode: 0,
        wire: EXT_WIRE,
        taskId,
        result: {
          content: [{ type: 'text', text: 'analysis of dataset 7: full report ready' }],
          structuredContent: { id: 7, depth: 'full' },
        },
      });
    });

    it('--wire io.modelcontextprotocol/tasks pins the wire; a plain tool answers at once; --ttl is ignored with a note', async () => {
      const { code, stdout, stderr } = await runPiped(
        [
          'call',
          'echo',
          'text=hi',
          '--wire',
          'io.modelcontextprotocol/tasks',
          '--ttl',
          '5s',
          '--stdio',
          EXT_STDIO_SERVER,
        ],
        env,
      ).done;
      expect(code).toBe(0);
      expect(jsonLines(stdout)).toEqual([
        { type: 'task', toolName: 'echo', kind: 'immediate', wire: EXT_WIRE },
        expect.objectContaining({
          type: 'result',
          outcome: 'completed',
          wire: EXT_WIRE,
          result: expect.objectContaining({ content: [{ type: 'text', text: 'hi' }] }),
        }),
      ]);
      expect(stderr).toContain('--ttl is ignored on the io.modelcontextprotocol/tasks wire');
    });

    it('--wire refuses what the server cannot do (exit 1) and what makes no sense (exit 2); list is not part of this wire', async () => {
      // The embedded example server speaks 2025-11-25 only.
      const legacy = await runPiped(['call', 'analyze', '--wire', 'ext']).done;
      expect(legacy.code).toBe(1);
      // A failure to connect ends `call` with a result line, like a connect timeout (it printed nothing before).
      expect(jsonLines(legacy.stdout)).toEqual([
        {
          type: 'result',
          outcome: 'error',
          exitCode: 1,
          error: {
            name: 'WireUnavailableError',
            message: expect.stringContaining('does not speak the 2026-07-28 protocol'),
          },
        },
      ]);
      expect(legacy.stderr).toContain(
        '--wire io.modelcontextprotocol/tasks: the server does not speak the 2026-07-28 protocol',
      );
      // The extension example server speaks 2026-07-28 only: SDK v1's initialize is refused.
      const modern = await runPiped(['call', 'analyze', '--wire', '2025-11-25', '--stdio', EXT_STDIO_SERVER], env).done;
      expect(modern.code).toBe(1);
      expect(modern.stderr).toMatch(/cannot connect to the stdio server `.*`: .*-32022/);
      // What to change, as the CLI's own options say it.
      expect(modern.stderr).toContain('(--wire 2025-11-25 was asked for: this server needs --wire auto)');
      // The pinned legacy wire still works where it exists.
      const pinned = await runPiped(['call', 'echo', 'text=hi', '--wire', '2025']).done;
      expect(pinned.code).toBe(0);
      expect(jsonLines(pinned.stdout)[0]).toMatchObject({ type: 'task', kind: 'immediate', wire: '2025-11-25' });
      // An HTTP session belongs to the 2025-11-25 wire: refused before connecting.
      const session = await runPiped([
        'get',
        'abc',
        '--wire',
        'ext',
        '--url',
        'http://127.0.0.1:9/mcp',
        '--session',
        'sid',
      ]).done;
      expect(session.code).toBe(2);
      expect(session.stderr).toContain('is sessionless');
      const list = await runPiped(['list', '--stdio', EXT_STDIO_SERVER], env).done;
      expect(list.code).toBe(1);
      expect(list.stderr).toContain('the io.modelcontextprotocol/tasks wire has no tasks/list');
    });
  },
);
