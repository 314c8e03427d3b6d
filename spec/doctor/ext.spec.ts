/**
 * The doctor given a transport factory, so that it opens a session per era (SDK v2, which alone
 * reaches the 2026-07-28 era: this suite is in the sdk-free list of vitest.config.ts and picks
 * SDK v2 itself). Against the extension example server (examples/ext-server.ts) the expected
 * verdicts come from the extension spec and the behaviour that server documents in its header:
 * it refuses `initialize` with -32022 (so the 2025-11-25 wire is not offered), advertises the
 * extension in `server/discover` ([E26]), answers a declaring call with a flat CreateTaskResult
 * readable at once ([E2], [E9]) and an undeclared one with a plain result ([E2]), -32021 for an
 * undeclared tasks/get ([E11]), ttlMs 600000 and pollIntervalMs stepMs/2 ([E28], [E14]),
 * notifications with the outcome on a subscription ([E18]), the result inline ([E3]), an
 * acknowledgement for every cancel that leaves an ended task as it was ([E24], [E6], [E27]),
 * -32602 for unknown ids ([E25]), `completed` with isError for its failing tool ([E15]),
 * inputRequests answered by tasks/update ([E3], [E5]) and repeated while unanswered ([E4]).
 * Its ttl is far longer than the expiry check may wait. Against the example McpServer over
 * stdio, a 2025-11-25-only server, the extension section says why it was not probed.
 */
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { exitCode, runDoctor, type DoctorReport, type Verdict } from '../../lib/doctor.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const extServer = fileURLToPath(new URL('../../examples/ext-server.ts', import.meta.url));
const exampleServer = fileURLToPath(new URL('../../examples/server.ts', import.meta.url));

const stdio = (entry: string, env: Record<string, string>) => () =>
  new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', entry],
    cwd: root,
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: 'ignore',
  });

const verdicts = (report: DoctorReport, wire: string): Array<[string, Verdict]> =>
  report.rows.filter((row) => row.wire === wire).map((row) => [row.check, row.verdict]);

describe('doctor against the extension example server, both eras tried', () => {
  it(
    'reports what the extension spec says: every check ok, the expiry not testable (ttlMs 10 min); the 2025-11-25 wire not offered (-32022)',
    { timeout: 60_000 },
    async () => {
      const report = await runDoctor(stdio(extServer, { EXT_STEP_MS: '100' }), {
        tool: { name: 'analyze', arguments: { id: 7 } },
        failTool: { name: 'flaky' },
        inputTool: { name: 'analyze' },
        noAnswerMs: 500,
      });
      expect(report.wires.map((wire) => [wire.wire, wire.offered, wire.sdk, wire.protocolVersion])).toEqual([
        ['2025-11-25', false, undefined, undefined],
        ['io.modelcontextprotocol/tasks', true, 'v2', '2026-07-28'],
      ]);
      expect(report.wires[0]?.note).toBe(
        'the server refuses the 2025-11-25 handshake (initialize answered -32022): it speaks 2026-07-28 only',
      );
      expect(verdicts(report, '2025-11-25')).toEqual([['offer', 'not-testable']]);
      expect(verdicts(report, 'io.modelcontextprotocol/tasks')).toEqual([
        ['offer', 'ok'],
        ['create.result', 'ok'],
        ['create.undeclared', 'ok'],
        ['create.durable', 'ok'],
        ['create.fields', 'ok'],
        ['create.pollInterval', 'ok'],
        ['undeclared.get', 'ok'],
        ['notify.sent', 'ok'],
        ['listen.reply', 'ok'],
        ['poll.fast', 'ok'],
        ['result.inline', 'ok'],
        ['cancel.ack', 'ok'],
        ['cancel.running', 'ok'],
        ['cancel.twice', 'ok'],
        ['cancel.completed', 'ok'],
        ['unknown.id', 'ok'],
        ['fail.status', 'ok'],
        ['fail.result', 'ok'],
        ['input.requests', 'ok'],
        ['input.update', 'ok'],
        ['input.resumes', 'ok'],
        ['input.unanswered', 'ok'],
        ['expiry.read', 'not-testable'],
      ]);
      const row = (check: string) =>
        report.rows.find((r) => r.wire === 'io.modelcontextprotocol/tasks' && r.check === check);
      expect(row('create.fields')?.seen).toBe('ISO 8601 timestamps (milliseconds), ttlMs 600000 ms');
      expect(row('create.pollInterval')?.seen).toMatch(/^50 ms, unchanged/);
      expect(row('fail.status')?.seen).toBe('completed, with an isError result');
      expect(row('notify.sent')?.seen).toMatch(
        /^for working, input_required, completed .*; the terminal one carries the outcome$/,
      );
      expect(row('unknown.id')?.seen).toBe('tasks/get -32602, tasks/update -32602, tasks/cancel -32602');
      expect(row('input.unanswered')?.seen).toMatch(
        /^unanswered for 500 ms: input_required, the question listed again on (\d+) of \1 reads; after tasks\/cancel \(accepted\) the task is cancelled$/,
      );
      expect(row('expiry.read')?.seen).toBe(
        'the server applies ttlMs 600000 ms, longer than the wait budget (20 s, expiryBudgetMs)',
      );
      expect(report.tasks).toMatchObject({ leftRunning: 0, notes: [] });
      expect(exitCode(report)).toBe(0);
    },
  );
});

describe('doctor against a 2025-11-25-only server, both eras tried', () => {
  it(
    'probes the 2025-11-25 wire and says why the extension was not (no server/discover)',
    { timeout: 60_000 },
    async () => {
      const report = await runDoctor(stdio(exampleServer, { POLL_INTERVAL: '100' }), {
        tool: { name: 'analyze', arguments: { steps: 1, stepMs: 50 } },
        expiryBudgetMs: 1,
        noAnswerMs: 200,
      });
      expect(report.wires.map((wire) => [wire.wire, wire.offered, wire.sdk])).toEqual([
        ['2025-11-25', true, 'v2'],
        ['io.modelcontextprotocol/tasks', false, undefined],
      ]);
      expect(report.wires[1]?.note).toBe(
        'the server has no 2026-07-28 handshake (server/discover): it speaks 2025-11-25 and earlier',
      );
      // Read before the doctor closed its sessions (a closed SDK v2 client forgets it).
      expect(report.server).toEqual({ name: 'example-task-server', version: '1.0.0' });
      expect(report.rows.filter((row) => row.verdict === 'deviation').map((row) => row.check)).toEqual([]);
      expect(report.tasks.leftRunning).toBe(0);
    },
  );
});

describe('doctor with SDK v2 missing', () => {
  it(
    'loads without it, opens its sessions with SDK v1, and says the extension needs SDK v2',
    { timeout: 60_000 },
    async () => {
      const probe = [
        "const { runDoctor } = await import('./lib/doctor.ts');",
        "const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');",
        "const env = { ...process.env, POLL_INTERVAL: '100' };",
        "const report = await runDoctor(() => new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'examples/server.ts'], env, stderr: 'ignore' }), { tool: { name: 'analyze', arguments: { steps: 1, stepMs: 50 } }, expiryBudgetMs: 1, noAnswerMs: 100 });",
        'console.log(JSON.stringify({ wires: report.wires.map((w) => [w.wire, w.offered, w.sdk ?? null, w.note]), deviations: report.summary.deviations }));',
      ].join('\n');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', '--input-type=module', '-e', probe],
        {
          cwd: root,
          env: { ...process.env, HIDE_SDK: 'v2' },
          timeout: 50_000,
        },
      );
      expect(JSON.parse(stdout)).toEqual({
        wires: [
          ['2025-11-25', true, 'v1', 'tool analyze, as named'],
          [
            'io.modelcontextprotocol/tasks',
            false,
            null,
            'SDK v2 (@modelcontextprotocol/client) is needed for a 2026-07-28 session',
          ],
        ],
        deviations: 0,
      });
    },
  );
});
