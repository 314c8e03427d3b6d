/**
 * Leaving a task and coming back to it: after a second Ctrl-C with the cancel unanswered the CLI
 * says the task may still be running and how to follow it (not "cancelled"), and the reference
 * file it wrote on its own for that is removed by the process that sees the task end. A question
 * whose first process died is answered from another process where the server allows it (the
 * extension wire: `tasks/update` on the question `tasks/get` still carries), and where it does not
 * (a 2025-11-25 server that sent it to the dead process's connection and does not send it again)
 * the CLI says so instead of showing `input_required` forever.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ExtServer,
  NO_REPLY,
  elicitation,
  startExtHttpServer,
  taskTool,
  textResult,
  type ExtHttpServer,
} from '../support/ext-server/index.js';
import { allowSdkServerListeners } from '../support/sdk-server-listeners.js';
import { startHttpServer } from '../support/http-server.js';
import { KEY, PtyRun, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

describe.sequential('on the extension wire over Streamable HTTP', { timeout: 90_000 }, () => {
  let ext: ExtServer;
  let endpoint: ExtHttpServer;
  let ticker: NodeJS.Timeout;
  const cancels: string[] = [];
  beforeAll(async () => {
    ext = new ExtServer({
      pollIntervalMs: 100,
      tools: [
        taskTool('endless', { statusMessage: 'working on it', advance: 'manual' }),
        taskTool('ask', {
          statusMessage: 'starting',
          advance: { everyMs: 300 },
          steps: [
            {
              inputRequests: { ok: elicitation('Go ahead?', { ok: { type: 'boolean', title: 'Go' } }) },
              statusMessage: 'waiting for you',
            },
            { result: ({ answers }) => textResult(`answered ${JSON.stringify(answers.ok)}`) },
          ],
        }),
      ],
    });
    // A server that never answers tasks/cancel (it holds the request).
    ext.on('tasks/cancel', (params) => {
      cancels.push(String(params.taskId));
      return NO_REPLY;
    });
    endpoint = await startExtHttpServer(ext);
    ticker = setInterval(() => ext.tick(), 50);
  });
  afterAll(async () => {
    clearInterval(ticker);
    await endpoint.close();
  });

  it('a second Ctrl-C with the cancel unanswered: "may still be running" and how to follow it; the file it wrote goes once the task ends', async () => {
    const run = new PtyRun(['call', 'endless', '--url', endpoint.url.href]);
    let file: string;
    try {
      await run.waitFor('working on it', 30_000);
      run.type(KEY.ctrlC);
      const at = await run.waitFor('cancelling the task');
      await until(() => cancels.length > 0, 10_000, 'the server to receive tasks/cancel');
      run.type(KEY.ctrlC);
      expect((await run.exited).exitCode).toBe(130);
      const tail = run.text.slice(at);
      // The second Ctrl-C, or the cancel grace (2 s) if it passed first: either way, no "cancelled".
      expect(tail).toMatch(
        /■ interrupted: (left without waiting for the task to end|the server did not answer the cancel within 2 s); task/,
      );
      expect(tail).toContain('may still be running on the server; to follow it: mcp-task watch --ref ');
      expect(tail).not.toContain('cancelled');
      file = /mcp-task watch --ref (\S+)/.exec(tail)![1]!;
    } finally {
      run.kill();
    }
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { temporary?: boolean; reference: { taskId: string } };
    expect(saved.temporary).toBe(true);
    expect(saved.reference.taskId).toBe(cancels[0]);

    // The task ends later; whoever follows it to the end removes the file.
    const watching = runPiped(['watch', '--ref', file]);
    await until(() => watching.stdout().includes('"type":"snapshot"'), 30_000, 'the watch to start');
    ext.tasks.complete(saved.reference.taskId, textResult('done at last'));
    const { code, stdout } = await watching.done;
    expect(code).toBe(0);
    expect(jsonLines(stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'completed',
      result: { content: [{ text: 'done at last' }] },
    });
    expect(existsSync(file)).toBe(false);
  });

  it('a question whose first process died is answered from another process (watch --ref --answer)', async () => {
    const file = join(scratch(), 'ref.json');
    const first = new PtyRun(['call', 'ask', '--url', endpoint.url.href, '--save-ref', file]);
    try {
      await first.waitFor('Go ahead?', 30_000);
    } finally {
      first.kill();
    }
    await first.exited;
    const { code, stdout, stderr } = await runPiped(['watch', '--ref', file, '--answer', '{"ok":true}']).done;
    expect(code, stderr).toBe(0);
    const lines = jsonLines(stdout);
    expect(lines.find((l) => l.type === 'input')).toMatchObject({
      delivery: 'task-update',
      source: 'answer',
      answer: { action: 'accept', content: { ok: true } },
    });
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      outcome: 'completed',
      result: { content: [{ text: 'answered {"action":"accept","content":{"ok":true}}' }] },
    });
    // A file asked for with --save-ref is the user's: it stays.
    expect(existsSync(file)).toBe(true);
  });
});

describe('on the 2025-11-25 wire, a question sent to a process that died', { timeout: 90_000 }, () => {
  it('watch --ref says it cannot be answered from another process, instead of input_required forever', async () => {
    // The SDK's McpServer runs in this process, and the watch holds its tasks/result for seconds.
    const restoreListeners = allowSdkServerListeners();
    const server = await startHttpServer({ pollInterval: 200 });
    try {
      const file = join(scratch(), 'ref.json');
      const first = new PtyRun(['call', 'confirm_delete', '--url', server.url.href, '--save-ref', file]);
      try {
        // The SDK's server delivered the question to this process's tasks/result, and will not again.
        await first.waitFor('Delete /tmp/demo.txt?', 30_000);
      } finally {
        first.kill();
      }
      await first.exited;
      const { code, stdout, stderr } = await runPiped([
        'watch',
        '--ref',
        file,
        '--answer',
        '{"confirm":true}',
        '--timeout',
        '20s',
      ]).done;
      expect(stderr).toMatch(
        /waits for input, but its question has not reached this process.*It cannot be answered from another process: cancel it/s,
      );
      // No answer could be given; --timeout then cancelled the task.
      expect(jsonLines(stdout).some((l) => l.type === 'input')).toBe(false);
      expect(code).toBe(124);
    } finally {
      await server.close();
      restoreListeners();
    }
  });
});
