/**
 * The doctor against real 2025-11-25 servers, with a client of the SDK chosen by MCP_SDK: the
 * SDK's McpServer with its in-memory task store (the example server, in process) and
 * @modelcontextprotocol/server-everything over stdio. The expected verdicts are written from the
 * spec and the measured server differences (server-differences.md), and from reading the TS SDK
 * 1.32 server code where a rule's outcome depends on it, not from a run:
 *
 * - both are TS SDK 1.32 servers: full capabilities (D18), ISO timestamps with ms (D4), ttl and
 *   pollInterval on every task (D1, D2), a notification on every change made through the
 *   request's task store (D8), a blocking tasks/result that wakes up to a poll interval late (D5)
 *   with related-task _meta ([V19], added by the SDK's protocol layer), `cancelled` on cancel
 *   (D10), -32602 for a terminal cancel and unknown ids (D11, D12), -32603 for a cancelled task's
 *   result (D7), pages of 10 with an invalid cursor refused -32602 (D13; the store throws,
 *   the SDK maps every tasks/list failure to -32602), tasks kept a ttl after they end (D9);
 * - their tools differ: the example's `flaky` stores an isError result and sets no statusMessage
 *   (the store keeps none for it), a SHOULD of [V18]; server-everything has no failing task tool
 *   and fixes every ttl at 300000 ms, too long for the expiry check.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { exitCode, runDoctor, type DoctorReport, type Verdict } from '../../lib/doctor.js';
import { exampleServerPair } from '../helpers.js';
import { makeClient, SDK, stdioTransport } from '../support/sdk.js';

const require = createRequire(import.meta.url);
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The 2025-11-25 rows as `check: verdict`, in report order. */
const verdicts = (report: DoctorReport): Array<[string, Verdict]> =>
  report.rows.filter((row) => row.wire === '2025-11-25').map((row) => [row.check, row.verdict]);

/** What the spec says of a TS SDK 1.32 task server, check by check. */
const TS_SDK_SERVER: Array<[string, Verdict]> = [
  ['offer', 'ok'],
  ['caps.toolsCall', 'ok'],
  ['caps.cancel', 'ok'],
  ['caps.list', 'ok'],
  ['tools.taskSupport', 'ok'],
  ['create.result', 'ok'],
  ['create.status', 'ok'],
  ['create.timestamps', 'ok'],
  ['create.ttl', 'ok'],
  ['create.pollInterval', 'ok'],
  ['ttl.honoured', 'ok'],
  ['notify.sent', 'ok'],
  ['poll.fast', 'ok'],
  ['result.blocks', 'ok'],
  ['result.meta', 'ok'],
  ['result.shape', 'ok'],
  ['cancel.running', 'ok'],
  ['cancel.sticky', 'ok'],
  ['cancel.twice', 'ok'],
  ['cancel.result', 'ok'],
  ['cancel.completed', 'ok'],
  ['cancel.completed.status', 'ok'],
  ['cancel.completed.result', 'ok'],
  ['unknown.id', 'ok'],
  ['list.paging', 'ok'],
  ['list.complete', 'ok'],
  ['list.badCursor', 'ok'],
  ['fail.status', 'ok'],
  ['fail.message', 'ok'],
  ['fail.result', 'ok'],
  ['input.status', 'ok'],
  ['input.tagged', 'ok'],
  ['input.resumes', 'ok'],
  ['input.unanswered', 'ok'],
  ['expiry.read', 'ok'],
];

/** `TS_SDK_SERVER` with some checks' verdicts replaced. */
function except(changes: Record<string, Verdict>): Array<[string, Verdict]> {
  return TS_SDK_SERVER.map(([check, verdict]) => [check, changes[check] ?? verdict]);
}

describe(`doctor against the SDK's McpServer with its task store (client: SDK ${SDK})`, () => {
  it('reports what the spec says: every check ok but the failed task without a statusMessage (a SHOULD); exit 0', async () => {
    const pair = await exampleServerPair({ pollInterval: 100 }, { capabilities: { elicitation: {}, sampling: {} } });
    cleanups.push(() => pair.close());
    const report = await runDoctor(pair.client, {
      tool: { name: 'analyze', arguments: { id: 1, steps: 2, stepMs: 100 } },
      failTool: { name: 'flaky', arguments: { afterMs: 100 } },
      inputTool: { name: 'confirm_delete' },
      noAnswerMs: 500,
      retentionCheckMs: 300,
      expiryBudgetMs: 5_000,
    });
    expect(verdicts(report)).toEqual(except({ 'fail.message': 'deviation' }));
    const row = (check: string) => report.rows.find((r) => r.wire === '2025-11-25' && r.check === check);
    expect(row('fail.message')).toMatchObject({
      rule: 'V18',
      severity: 'SHOULD',
      seen: 'no statusMessage on the failed task',
    });
    expect(row('offer')?.coping.quirk).toBe('D18');
    expect(row('create.timestamps')?.seen).toBe('ISO 8601, milliseconds');
    expect(row('create.ttl')?.seen).toBe('asked 300000 ms; the server applies it');
    expect(row('cancel.result')?.seen).toMatch(/^tasks\/result of the cancelled task: -32603/);
    expect(row('notify.sent')?.seen).toMatch(/^for working, completed/);
    expect(row('fail.result')?.seen).toBe("the tool's result (1 content block, isError: true)");
    expect(row('input.tagged')?.seen).toBe(
      'elicitation/create named the task (related-task _meta), delivered while tasks/result was open',
    );
    expect(report.wires.map((wire) => [wire.wire, wire.offered, wire.tool])).toEqual([
      ['2025-11-25', true, 'analyze'],
      ['io.modelcontextprotocol/tasks', false, undefined],
    ]);
    expect(report.server).toEqual({ name: 'example-task-server', version: '1.0.0' });
    expect(report.tasks).toMatchObject({ leftRunning: 0, notes: [] });
    expect(
      pair.store.getAllTasks().filter((task) => task.status === 'working' || task.status === 'input_required'),
    ).toEqual([]);
    expect(exitCode(report)).toBe(0);
  });
});

describe(`doctor against @modelcontextprotocol/server-everything over stdio (client: SDK ${SDK})`, () => {
  it(
    'reports what the spec says: every check ok; no failing tool to test, and a 5-minute ttl is too long to wait out; exit 0',
    { timeout: 120_000 },
    async () => {
      const client = makeClient({ name: 'doctor-spec', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      await client.connect(
        stdioTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' }),
      );
      cleanups.push(() => client.close());
      const report = await runDoctor(client, {
        inputTool: { name: 'simulate-research-query', arguments: { topic: 'MCP tasks', ambiguous: true } },
        noAnswerMs: 1_000,
        retentionCheckMs: 300,
      });
      expect(verdicts(report)).toEqual(
        except({
          'fail.status': 'not-testable',
          'fail.message': 'not-testable',
          'fail.result': 'not-testable',
          'expiry.read': 'not-testable',
        }),
      );
      const row = (check: string) => report.rows.find((r) => r.wire === '2025-11-25' && r.check === check);
      // Found by its taskSupport, called with arguments made up from its schema.
      expect(report.wires[0]?.tool).toBe('simulate-research-query');
      expect(report.wires[0]?.note).toBe(
        'tool simulate-research-query (the first that declares task support), called with {"topic":"mcp-task doctor"}',
      );
      expect(row('fail.status')?.seen).toBe('no failing tool named (failTool option)');
      expect(row('expiry.read')?.seen).toMatch(/the server applies 300000 ms, longer than the wait budget \(20 s\)$/);
      expect(row('create.pollInterval')?.seen).toMatch(/^1000 ms, unchanged/);
      expect(report.tasks).toMatchObject({ leftRunning: 0, notes: [] });
      expect(exitCode(report)).toBe(0);
    },
  );
});
