/**
 * The CLI in a host with only SDK v2 (`@modelcontextprotocol/client`) installed, as the library
 * runs there: SDK v1 is hidden from the CLI's process (spec/fixtures/hide-sdk.ts; the servers
 * keep theirs). It calls and answers on the extension wire over stdio, calls on the 2025-11-25
 * wire over Streamable HTTP, and joins a task's HTTP session from another process with SDK v2's
 * transport. (Without a target it says in one line that the bundled example server needs SDK v1:
 * spec/package/install.spec.ts.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpTaskServer } from '../support/http-server.js';
import { EXT_STDIO_SERVER, EXT_WIRE, jsonLines, removeScratch, runPiped, scratch, until } from './support/cli.js';

afterAll(removeScratch);

const HIDE_V1 = { HIDE_SDK: 'v1' };
const hidden = ['--import', './spec/fixtures/hide-sdk.ts'];

describe.sequential('mcp-task with SDK v2 only', { timeout: 90_000 }, () => {
  let server: HttpTaskServer;
  beforeAll(async () => {
    server = await startHttpServer({ pollInterval: 200 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('the extension wire over stdio: a task, its question answered through tasks/update', async () => {
    const { code, stdout, stderr } = await runPiped(
      ['call', 'analyze', 'id=7', '--stdio', EXT_STDIO_SERVER, '--answer', '{"depth":"full"}'],
      { ...HIDE_V1, EXT_STEP_MS: '150' },
      hidden,
    ).done;
    expect(code, stderr).toBe(0);
    const lines = jsonLines(stdout);
    expect(lines[0]).toMatchObject({ type: 'task', toolName: 'analyze', wire: EXT_WIRE });
    expect(lines.find((l) => l.type === 'input')).toMatchObject({
      delivery: 'task-update',
      answer: { action: 'accept', content: { depth: 'full' } },
    });
    expect(lines.at(-1)).toMatchObject({ type: 'result', outcome: 'completed', wire: EXT_WIRE });
  });

  it('the 2025-11-25 wire over Streamable HTTP, and watch --ref from another process joining its HTTP session', async () => {
    const file = join(scratch(), 'ref.json');
    const first = runPiped(
      ['call', 'analyze', 'id=3', 'steps=12', 'stepMs=300', '--url', server.url.href, '--save-ref', file],
      HIDE_V1,
      hidden,
    );
    await until(
      () => existsSync(file) && first.stdout().includes('step 1/12'),
      30_000,
      'the first process to start the task',
    );
    first.kill('SIGKILL');
    await first.done;
    expect(jsonLines(first.stdout())[0]).toMatchObject({ type: 'task', wire: '2025-11-25' });
    const { reference } = JSON.parse(readFileSync(file, 'utf8')) as {
      reference: { taskId: string; sessionId: string };
    };
    expect(reference.sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const second = await runPiped(['watch', '--ref', file], HIDE_V1, hidden).done;
    expect(second.code, second.stderr).toBe(0);
    expect(jsonLines(second.stdout).at(-1)).toMatchObject({
      type: 'result',
      outcome: 'completed',
      wire: '2025-11-25',
      taskId: reference.taskId,
      result: { content: [{ text: 'analysis of 3 done in 12 steps' }] },
    });
  });
});
