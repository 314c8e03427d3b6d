/**
 * The doctor against scripted 2025-11-25 servers (spec/doctor/model-server.ts): one that follows
 * the spec gets no deviation at all, and each deviant server (one switch each) gets exactly the
 * deviation rows of its deviation, nothing else. The doctor also keeps the library's rules: every
 * probe bounded, every task it started cancelled or ended (or the report says why not), and a
 * stop signal that cancels what runs. The client is the SDK chosen by MCP_SDK (both majors run).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  exitCode,
  renderReport,
  reportJson,
  runDoctor,
  type DoctorOptions,
  type DoctorReport,
  type DoctorRow,
} from '../../lib/doctor.js';
import { TaskAbortError } from '../../lib/index.js';
import { createLinkedPair, makeClient } from '../support/sdk.js';
import { modelServer, type Model, type ModelOptions } from './model-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Quick bounds for a scripted server whose tools take 150 ms. */
const QUICK: DoctorOptions = {
  failTool: { name: 'fail' },
  inputTool: { name: 'ask' },
  probeTimeoutMs: 5_000,
  requestTimeoutMs: 2_000,
  noAnswerMs: 300,
  retentionCheckMs: 400,
  expiryBudgetMs: 1, // the expiry check needs seconds: it has its own test
};

/**
 * The model server with `options` and a connected client of the chosen SDK, closed after the test;
 * `tap` gets the server's side of the link once the server is on it (to cut the connection).
 */
async function modelAndClient(
  options: ModelOptions,
  tap?: (serverSide: ReturnType<typeof createLinkedPair>[1]) => void,
): Promise<{ model: Model; client: ReturnType<typeof makeClient> }> {
  const model = modelServer(options);
  const [clientSide, serverSide] = createLinkedPair();
  await model.server.connect(serverSide);
  tap?.(serverSide);
  const client = makeClient(
    { name: 'doctor-spec', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  await client.connect(clientSide);
  cleanups.push(async () => {
    model.stop();
    await client.close();
    await model.server.close();
  });
  return { model, client };
}

/** The model server with `options`, a connected client of the chosen SDK, and the doctor's report. */
async function doctorOn(
  options: ModelOptions,
  doctor: DoctorOptions = {},
): Promise<{ report: DoctorReport; model: Model }> {
  const { model, client } = await modelAndClient(options);
  const report = await runDoctor(client, { ...QUICK, ...doctor });
  return { report, model };
}

const deviations = (report: DoctorReport): string[] =>
  report.rows.filter((row) => row.verdict === 'deviation').map((row) => row.check);
const row = (report: DoctorReport, check: string): DoctorRow | undefined =>
  report.rows.find((r) => r.wire === '2025-11-25' && r.check === check);

/** What every run must keep: the server's assertions held, and no task runs on. */
function clean(model: Model, report: DoctorReport): void {
  expect(model.failures).toEqual([]);
  expect(model.running()).toBe(0);
  expect(report.tasks.leftRunning).toBe(0);
}

describe('doctor: a scripted server that follows the spec', () => {
  it('gets no deviation: every check of the battery ok, the tool found by its taskSupport, the expiry read after the ttl', async () => {
    const { report, model } = await doctorOn({}, { expiryBudgetMs: 5_000 });
    clean(model, report);
    expect(deviations(report)).toEqual([]);
    const battery = report.rows.filter((r) => r.wire === '2025-11-25');
    expect(battery.filter((r) => r.verdict === 'not-testable')).toEqual([]);
    expect(battery.map((r) => r.check)).toEqual(
      expect.arrayContaining([
        'offer',
        'create.result',
        'ttl.honoured',
        'cancel.completed.result',
        'unknown.id',
        'list.paging',
        'fail.result',
        'input.tagged',
        'input.unanswered',
        'expiry.read',
      ]),
    );
    expect(report.wires[0]).toMatchObject({ wire: '2025-11-25', offered: true, tool: 'work' });
    expect(row(report, 'list.paging')?.seen).toMatch(/in [2-9] pages, then no nextCursor/);
    // V29: the values of taskSupport are a schema rule of the server's (R7 is the client's rule).
    expect(row(report, 'tools.taskSupport')).toMatchObject({ rule: 'V29', severity: 'MUST' });
    expect(row(report, 'expiry.read')?.seen).toMatch(/^forgotten: tasks\/get answered -32602/);
    expect(exitCode(report)).toBe(0);
    expect(report.summary).toMatchObject({ deviations: 0, mustViolations: 0 });
    // [V4]: task ids are secrets: no row quotes one.
    expect(JSON.stringify(report.rows)).not.toMatch(/model-\d+-/);
  });
});

describe('doctor: each deviation is reported, and nothing else', () => {
  it('no status notifications: notify.sent is a MAY deviation (exit 0)', async () => {
    const { report, model } = await doctorOn({ silent: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['notify.sent']);
    expect(row(report, 'notify.sent')).toMatchObject({
      rule: 'V21',
      severity: 'MAY',
      seen: 'none, for any status, until the task ended',
    });
    expect(exitCode(report)).toBe(0);
  });

  it('[V21] the only notification of a task sent before its CreateTaskResult: notify.sent counts it, ok', async () => {
    const { report, model } = await doctorOn({ earlyNoteOnly: true });
    clean(model, report);
    // Before the fix the doctor dropped it (its task was not known yet): "none", a MAY deviation.
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'notify.sent')).toMatchObject({ verdict: 'ok', rule: 'V21', severity: 'MAY' });
    expect(row(report, 'notify.sent')?.seen).toBe(
      'for working (1 in all); all before the CreateTaskResult; none for the end',
    );
  });

  it('[V21] the notification of the end sent 200 ms after the end, so after a read showed it: notify.sent ok, and it names the end', async () => {
    const { report, model } = await doctorOn({ lateEndNoteMs: 200 });
    clean(model, report);
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'notify.sent')?.verdict).toBe('ok');
    expect(row(report, 'notify.sent')?.seen).toMatch(
      /^for working, completed .*; the completed one came \d+ ms after a read showed the end/,
    );
  });

  it('ttl ignored (the requested ttl reported, the task forgotten 300 ms after it ended): ttl.honoured, a MUST (exit 1)', async () => {
    const { report, model } = await doctorOn({ ttlIgnored: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['ttl.honoured']);
    expect(row(report, 'ttl.honoured')).toMatchObject({ rule: 'V10', severity: 'MUST', coping: { handled: false } });
    expect(row(report, 'ttl.honoured')?.seen).toMatch(/^gone .* although its ttl is 300000 ms$/);
    // What depended on the task being there says why it could not run, instead of failing too.
    expect(row(report, 'cancel.completed')).toMatchObject({
      verdict: 'not-testable',
      seen: 'the task was gone before the cancel (see ttl.honoured)',
    });
    expect(exitCode(report)).toBe(1);
  });

  it('a cancel of a completed task rewrites it cancelled and drops its result: the refusal, the status and the result rows (exit 1)', async () => {
    const { report, model } = await doctorOn({ cancelRewrites: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['cancel.completed', 'cancel.completed.status', 'cancel.completed.result']);
    expect(row(report, 'cancel.completed')?.seen).toBe('accepted: the reply says "cancelled"');
    expect(row(report, 'cancel.completed.status')?.seen).toBe('completed before the cancel, cancelled after it');
    expect(row(report, 'cancel.completed.result')?.seen).toMatch(/^before the cancel 1 content block; after it -32603/);
    expect(row(report, 'cancel.completed.result')?.coping.handled).toBe(false);
    expect(exitCode(report)).toBe(1);
  });

  it('untagged input requests: input.tagged (D14), a MUST (exit 1); the question is still answered and the task goes on', async () => {
    const { report, model } = await doctorOn({ untagged: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['input.tagged']);
    expect(row(report, 'input.tagged')).toMatchObject({ rule: 'V7', severity: 'MUST', coping: { quirk: 'D14' } });
    expect(row(report, 'input.resumes')?.verdict).toBe('ok');
    expect(exitCode(report)).toBe(1);
  });

  it('-32603 for an unknown task id: unknown.id, a MUST (exit 1)', async () => {
    const { report, model } = await doctorOn({ unknownCode: -32603 });
    clean(model, report);
    expect(deviations(report)).toEqual(['unknown.id']);
    expect(row(report, 'unknown.id')?.seen).toBe('tasks/get -32603, tasks/result -32603, tasks/cancel -32603');
    expect(exitCode(report)).toBe(1);
  });

  it('a list cursor that never ends: list.paging after 50 pages that list nothing new, a MUST (exit 1)', async () => {
    const { report, model } = await doctorOn({ endlessList: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['list.paging']);
    expect(row(report, 'list.paging')?.seen).toMatch(/^the listing never ends: still a nextCursor after 50 pages/);
    expect(exitCode(report)).toBe(1);
  });

  it('a numeric nextCursor: list.paging, a MUST (exit 1), naming the type ([R23])', async () => {
    const { report, model } = await doctorOn({ numericCursor: true });
    clean(model, report);
    expect(deviations(report)).toEqual(['list.paging']);
    expect(row(report, 'list.paging')?.seen).toBe('page 1 has a nextCursor that is not a string (number)');
    expect(exitCode(report)).toBe(1);
  });

  it('[V16] tasks/result answered at once while the task still works: result.blocks, a MUST (exit 1), told by a tasks/get sent after the answer', async () => {
    const { report, model } = await doctorOn({ earlyResult: true });
    clean(model, report);
    // Before the fix the doctor read the task again only after it had ended, and passed the row.
    expect(deviations(report)).toEqual(['result.blocks']);
    expect(row(report, 'result.blocks')).toMatchObject({ rule: 'V16', severity: 'MUST' });
    expect(row(report, 'result.blocks')?.seen).toMatch(
      /^answered .* before the task ended: a tasks\/get sent after the answer still showed it working$/,
    );
    expect(exitCode(report)).toBe(1);
  });
  it.each([2_147_483_000, 1e12])(
    'a probe bound of %d ms (at or past the longest a timer waits, once a request timeout is added) waits, rather than ending every probe at once',
    async (probeTimeoutMs) => {
      const { report, model } = await doctorOn({}, { probeTimeoutMs });
      clean(model, report);
      expect(deviations(report)).toEqual([]);
      expect(report.rows.filter((r) => /ran out of time/.test(r.seen ?? ''))).toEqual([]);
      expect(row(report, 'ttl.honoured')?.verdict).not.toBe('not-testable');
    },
  );

  it('a server that goes away at its first task-augmented tools/call: the run fails (exit code 1), the report and its text say the session was lost', async () => {
    const { client } = await modelAndClient({}, (serverSide) => {
      const deliver = serverSide.onmessage!;
      serverSide.onmessage = (message, extra) => {
        const request = message as { method?: string; params?: { task?: unknown } };
        if (request.method === 'tools/call' && request.params?.task !== undefined) {
          void serverSide.close();
          return;
        }
        deliver(message, extra);
      };
    });
    const report = await runDoctor(client, QUICK);
    expect(report.summary.mustViolations).toBe(0);
    expect(report.connectionLost).toEqual(['2025-11-25']);
    expect(exitCode(report)).toBe(1);
    expect(renderReport(report)).toContain('The 2025-11-25 session closed while the doctor was probing it');
  });

  it("with a runtime whose timers are numbers (a browser's, a Worker's): every probe runs, no request fails on the timer's missing unref()", async () => {
    const real = globalThis.setTimeout;
    vi.stubGlobal('setTimeout', (run: () => void, ms?: number) => Number(real(run, ms)));
    try {
      const { report, model } = await doctorOn({}, { expiryBudgetMs: 5_000 });
      clean(model, report);
      expect(deviations(report)).toEqual([]);
      expect(JSON.stringify(report)).not.toMatch(/unref|TypeError/);
      expect(report.rows.filter((r) => r.wire === '2025-11-25' && r.verdict === 'not-testable')).toEqual([]);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a server that stays: connectionLost is empty', async () => {
    const { report } = await doctorOn({}, { expiryBudgetMs: 5_000 });
    expect(report.connectionLost).toEqual([]);
    expect(exitCode(report)).toBe(0);
  });

  it('a task that never ends: no deviation; what needs its end is not testable, bounded by the probe; the task is cancelled', async () => {
    const started = Date.now();
    const { report, model } = await doctorOn({ neverEnds: true }, { probeTimeoutMs: 1_000 });
    clean(model, report);
    expect(deviations(report)).toEqual([]);
    for (const check of ['ttl.honoured', 'cancel.completed', 'cancel.completed.status', 'cancel.completed.result']) {
      expect(row(report, check), check).toMatchObject({
        verdict: 'not-testable',
        seen: 'the task did not end within 1.0 s',
      });
    }
    // [V16]: the blocking tasks/result held the whole time: that is what the rule asks.
    expect(row(report, 'result.blocks')?.seen).toMatch(/^sent at once, still unanswered .* later while the task ran$/);
    expect(row(report, 'expiry.read')?.seen).toBe('the lifecycle probe could not time the tool');
    expect(report.tasks.cancelled).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('timeoutMs bounds the whole run: the probes are cut short a reserve before the end, the task is cancelled in it, and the report lists the checks cut short', async () => {
    const started = Date.now();
    // A probe bound far past timeoutMs: only the run's deadline can end the run in time.
    const { report, model } = await doctorOn({ neverEnds: true }, { probeTimeoutMs: 60_000, timeoutMs: 4_000 });
    const tookMs = Date.now() - started;
    // Before the fix: timeoutMs was not an option, and the run took the probes' own bounds (minutes).
    expect(tookMs).toBeLessThan(4_000 + 500);
    clean(model, report);
    expect(report.tasks.started).toBeGreaterThanOrEqual(1);
    expect(report.tasks.cancelled).toBe(report.tasks.started);
    expect(report.cutShort?.length).toBeGreaterThan(0);
    for (const { wire, check } of report.cutShort ?? []) {
      expect(report.rows.find((r) => r.wire === wire && r.check === check)).toMatchObject({
        verdict: 'not-testable',
        seen: "cut short by the run's deadline (timeoutMs 4.0 s)",
      });
    }
    // Every probe from the cut on is cut short, the last one (expiry) included.
    expect(report.cutShort).toContainEqual({ wire: '2025-11-25', check: 'expiry.read' });
    expect(deviations(report)).toEqual([]);
  });

  it('a run that ends in time reports no check cut short', async () => {
    const { report, model } = await doctorOn({}, { expiryBudgetMs: 2_000, timeoutMs: 120_000 });
    clean(model, report);
    expect(report.cutShort).toEqual([]);
    expect(report.rows.some((r) => r.seen.includes('deadline'))).toBe(false);
  });
});

describe('doctor: a named tool that does not declare task support ([R7])', () => {
  it('is never called as a task on 2025-11-25: its checks are not testable, and the server that refuses nothing breaks no rule', async () => {
    const { report, model } = await doctorOn(
      { forbiddenTool: true },
      { tool: { name: 'plain' }, failTool: { name: 'plain' }, inputTool: { name: 'plain' } },
    );
    // Before the fix: the doctor called it as a task (R7) and took the server's -32601 for a
    // create.result deviation, a MUST of V14 (exit 1).
    expect(model.failures).toEqual([]);
    expect(model.server.params('tools/call')).toEqual([]);
    expect(deviations(report)).toEqual([]);
    const why = /^plain declares taskSupport "forbidden": the doctor does not call it as a task \(R7\)$/;
    for (const check of ['create.result', 'cancel.running', 'fail.status', 'input.tagged', 'expiry.read'])
      expect(row(report, check), check).toMatchObject({ verdict: 'not-testable', seen: expect.stringMatching(why) });
    expect(report.tasks.started).toBe(0);
    expect(exitCode(report)).toBe(0);
  });

  it('a named tool missing from a tools/list that failed is not called as a task either: its taskSupport is unknown', async () => {
    // Found by the doctor's fuzzer (both wires, seed 200, every seed's server switched): a
    // tools/list answered too late left the doctor without the listing, and it called the
    // forbidden tool as a task.
    const { report, model } = await doctorOn(
      { unanswered: 'tools/list', forbiddenTool: true },
      { tool: { name: 'plain' }, requestTimeoutMs: 300 },
    );
    expect(model.failures).toEqual([]);
    expect(model.server.params('tools/call')).toEqual([]);
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'create.result')).toMatchObject({
      verdict: 'not-testable',
      seen: 'tool plain is not in what the doctor could read of tools/list (tools/list answered no answer in time): with its taskSupport unknown, the doctor does not call it as a task (R7)',
    });
    expect(report.tasks.started).toBe(0);
  });

  it('a forbidden failing tool: only the failure rows are not testable, the battery and the input tool run', async () => {
    const { report, model } = await doctorOn({ forbiddenTool: true }, { failTool: { name: 'plain' } });
    expect(model.failures).toEqual([]);
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'create.result')?.verdict).toBe('ok');
    expect(row(report, 'fail.status')).toMatchObject({
      verdict: 'not-testable',
      seen: 'plain declares taskSupport "forbidden": the doctor does not call it as a task (R7)',
    });
    expect(row(report, 'input.tagged')?.verdict).toBe('ok');
  });
});

describe('doctor: a named tool the server does not list', () => {
  const why = (name: string, option: string): string =>
    `tool ${name} is not listed by the server (tools/list; it lists work, fail, ask): the doctor does not call it; name a listed tool (${option} option)`;

  it('a typo is never called: the battery does not run, and its rows say why', async () => {
    const { report, model } = await doctorOn({}, { tool: { name: 'wrok' } });
    clean(model, report);
    // Before the fix the doctor called it (the server refused it with -32602) and reported the refusal.
    expect(model.server.params('tools/call')).toEqual([]);
    expect(deviations(report)).toEqual([]);
    expect(report.wires[0]).toMatchObject({ offered: true, tool: undefined, note: why('wrok', 'tool') });
    for (const check of ['create.result', 'cancel.running', 'unknown.id', 'fail.status', 'input.tagged', 'expiry.read'])
      expect(row(report, check), check).toMatchObject({ verdict: 'not-testable', seen: why('wrok', 'tool') });
    expect(row(report, 'offer')?.verdict).toBe('ok');
    expect(report.tasks.started).toBe(0);
    expect(exitCode(report)).toBe(0);
  });

  it('a failing tool with a typo is never called: only the failure rows are not testable, the battery runs', async () => {
    const { report, model } = await doctorOn({}, { failTool: { name: 'fial' } });
    clean(model, report);
    expect(model.server.params('tools/call').filter((params) => params.name === 'fial')).toEqual([]);
    expect(deviations(report)).toEqual([]);
    for (const check of ['fail.status', 'fail.message', 'fail.result'])
      expect(row(report, check), check).toMatchObject({ verdict: 'not-testable', seen: why('fial', 'failTool') });
    expect(row(report, 'create.result')?.verdict).toBe('ok');
    expect(row(report, 'input.tagged')?.verdict).toBe('ok');
  });
});

describe("doctor: the names a server gives (its own, its tools') are untrusted text", () => {
  it("a long, multi-line server name and tool name: the report's text quotes them on one line, escaped and cut; its fields keep them whole", async () => {
    const serverName = `evil\n\u001b]0;pwned\u0007 server ${'s'.repeat(200)}`;
    const workName = `work\nline two\u001b[31m ${'w'.repeat(200)}`;
    // No tasks.cancel and a task that never ends: the task account's notes name the tool too.
    const { report, model } = await doctorOn(
      { serverName, workName, noCancel: true, neverEnds: true },
      { probeTimeoutMs: 600 },
    );
    expect(model.failures).toEqual([]);
    // Before the fix the note, the task notes and the table quoted both names whole, newlines and escapes included.
    const shown = /^work\\nline two\\u001b\[31m w+…$/;
    const note = report.wires[0]?.note ?? '';
    expect(note).toMatch(
      /^tool \S+\\nline two\\u001b\[31m w+… \(the first that declares task support\), called with \{\}$/,
    );
    expect(shown.test(note.slice('tool '.length, note.indexOf(' (the first')))).toBe(true);
    const workNotes = report.tasks.notes.filter((text) => !/^a task of (ask|fail):/.test(text));
    expect(workNotes.length).toBeGreaterThan(0);
    for (const text of workNotes)
      expect(text).toMatch(/^a task of work\\nline two\\u001b\[31m w+…: the server declared no tasks\.cancel/);
    const table = renderReport(report, { width: 120 });
    // eslint-disable-next-line no-control-regex
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    for (const long of ['s'.repeat(80), 'w'.repeat(80)]) {
      expect(table).not.toContain(long);
      expect(note + report.tasks.notes.join('') + report.rows.map((r) => r.seen).join('')).not.toContain(long);
    }
    expect(table.split('\n').slice(0, 2).join(' ')).toMatch(
      /^mcp-task doctor: evil\\n\\u001b\]0;pwned\\u0007 server s+… 1\.0\.0,/,
    );
    // The report's fields (and so its JSON) keep the names whole.
    expect(report.server?.name).toBe(serverName);
    expect(report.wires[0]?.tool).toBe(workName);
    const json = JSON.parse(reportJson(report)) as DoctorReport;
    expect([json.server?.name, json.wires[0]?.tool]).toEqual([serverName, workName]);
  });
});

describe('doctor: what a hostile server sends stays out of its requests and its report (spec/doctor/fuzz.spec.ts)', () => {
  it('[R33] a CreateTaskResult with an empty taskId: create.result, and no request carries the empty id', async () => {
    // Found by the doctor's fuzzer (2025 seed 187): the cancel probe took "" for a task id.
    const { report, model } = await doctorOn({ createdTaskId: '' });
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
      expect(
        model.server.params(method).filter((params) => params.taskId === ''),
        method,
      ).toEqual([]);
    expect(model.server.violations).toEqual([]);
    expect(row(report, 'create.result')).toMatchObject({ verdict: 'deviation' });
    expect(row(report, 'create.result')?.seen).toMatch(/^a CreateTaskResult the library cannot read: .*taskId/);
    expect(row(report, 'cancel.running')).toMatchObject({
      verdict: 'not-testable',
      seen: 'no task was created (a CreateTaskResult without a usable taskId)',
    });
    expect(report.tasks.started).toBe(0);
  });

  it('a CreateTaskResult the library cannot read (status "paused") of a task that runs on: the clean-up still cancels it', async () => {
    // Found by the doctor's fuzzer (both wires, seed 343): the lifecycle probe forgot a task whose
    // CreateTaskResult it refused, so it was neither cancelled nor counted, and a row could quote its id.
    const { report, model } = await doctorOn({ createdStatus: 'paused', neverEnds: true }, { probeTimeoutMs: 1_000 });
    clean(model, report);
    expect(row(report, 'create.result')).toMatchObject({ verdict: 'deviation' });
    expect(row(report, 'create.result')?.seen).toMatch(/^a CreateTaskResult the library cannot read: .*status/);
    // clean(): no task of the server runs on, and the account leaves none running.
    expect(report.tasks.started).toBeGreaterThan(0);
    expect(report.tasks.cancelled + report.tasks.finished).toBe(report.tasks.started);
  });

  it('a 100 kB createdAt: create.timestamps quotes its start, cut, and the report stays small', async () => {
    // Found by the doctor's fuzzer (2025 seed 11): every value a row quotes went in whole.
    const { report, model } = await doctorOn({ createdAt: 'x'.repeat(100_000) });
    clean(model, report);
    expect(row(report, 'create.timestamps')).toMatchObject({ verdict: 'deviation' });
    expect(row(report, 'create.timestamps')?.seen).toMatch(/^not ISO 8601: "x{100,}… "x{100,}…$/);
    for (const r of report.rows) expect(r.seen.length, r.check).toBeLessThanOrEqual(1_000);
    expect(reportJson(report).length).toBeLessThan(50_000);
  });
});

describe('doctor: a verdict only on what the server answered', () => {
  it('[V10] one slow tasks/get (longer than the request bound) 400 ms after the end: ttl.honoured not testable, the task not marked gone', async () => {
    const { report, model } = await doctorOn({ slowReadMs: 2_500 });
    clean(model, report);
    // Before the fix the local timeout read as "gone": a MUST deviation of a server that kept the task.
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'ttl.honoured')).toMatchObject({
      verdict: 'not-testable',
      seen: 'the second read (400 ms after it ended) got no answer in time, not the task',
    });
    // The task was not marked gone: the cancel of the ended task still runs.
    expect(row(report, 'cancel.completed')?.verdict).toBe('ok');
    expect(row(report, 'cancel.completed.status')?.verdict).toBe('ok');
  });

  it('[V25] a task that ended cancelled on its own and was deleted 200 ms later: ttl.honoured not testable, no deviation', async () => {
    const { report, model } = await doctorOn({ selfCancel: true });
    clean(model, report);
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'ttl.honoured')).toMatchObject({ verdict: 'not-testable' });
    expect(row(report, 'ttl.honoured')?.seen).toMatch(
      /^the task ended cancelled, and a server may delete a cancelled task at any time: gone 400 ms after it ended/,
    );
  });

  it('[V10] [V11] a server that applies a ttl shorter than asked (500 ms) and forgets the task once it runs out: no deviation', async () => {
    // The task ends 150 ms in; its ttl runs out during the retention wait (400 ms), before the
    // cancel of the ended task. A task forgotten after its ttl is allowed ([V11]): the cancel, read
    // and result rows after it are not testable, and the list probe does not look for it.
    const { report, model } = await doctorOn({ maxTtl: 500 });
    clean(model, report);
    // Before the fix: cancel.completed.status, cancel.completed.result and list.complete, MUSTs (exit 1).
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'create.ttl')?.seen).toBe('asked 300000 ms; the server applies 500 ms (a server may choose)');
    expect(row(report, 'ttl.honoured')).toMatchObject({ verdict: 'not-testable' });
    for (const check of ['cancel.completed.status', 'cancel.completed.result', 'list.complete'])
      expect(row(report, check), check).toMatchObject({ verdict: 'not-testable' });
    expect(row(report, 'cancel.completed.status')?.seen).toMatch(/ttl \(500 ms\) ran out/);
    expect(exitCode(report)).toBe(0);
  });

  it('[V22] [V11] the main task forgotten after its ttl (2 s) by the time tasks/list runs: list.complete not testable, no deviation', async () => {
    // The tool runs 1 s: the ended task is read again and cancelled within its ttl, and the cancel
    // probe waits as long as the tool ran, so tasks/list comes about 2.5 s after the task was made.
    const { report, model } = await doctorOn({ maxTtl: 2_000, workMs: 1_000 });
    clean(model, report);
    expect(row(report, 'ttl.honoured')?.verdict).toBe('ok');
    // Before the fix: list.complete, a MUST (exit 1), for a task no longer readable with tasks/get.
    expect(deviations(report)).toEqual([]);
    expect(row(report, 'list.complete')).toMatchObject({ verdict: 'not-testable' });
    expect(row(report, 'list.complete')?.seen).toMatch(
      /^the doctor's task is not listed, and tasks\/get no longer finds it/,
    );
  });

  it('[V24] [V25] a task the doctor cancelled and a silent server deleted at once is counted cancelled, not ended on its own', async () => {
    // Silent: no status notification tells the doctor either (only the replies do).
    const { report, model } = await doctorOn(
      { neverEnds: true, deleteCancelled: true, silent: true },
      { probeTimeoutMs: 1_000 },
    );
    clean(model, report);
    expect(deviations(report)).toEqual(['notify.sent']);
    // The lifecycle task (cancelled by the clean-up), the cancel probe's and the unanswered question's
    // task were cancelled; the failing tool's and the first question's tasks ended on their own.
    // Before the fix the first and the last were "ended on their own": the cancel's reply went unread.
    expect(report.tasks).toMatchObject({ started: 5, cancelled: 3, finished: 2, leftRunning: 0 });
  });

  it('[V23] [V24] a task that ends cancelled on its own before the cancel probe cancels it: the -32602 is no deviation', async () => {
    // The task ends cancelled as its CreateTaskResult goes out (mcp-go's context bug), so the
    // cancel probe's tasks/cancel finds it terminal, and -32602 is what V23 asks.
    const { report, model } = await doctorOn({ cancelledAtOnce: true });
    clean(model, report);
    // Before the fix: cancel.running, a MUST of V24 (exit 1).
    expect(deviations(report)).not.toContain('cancel.running');
    expect(row(report, 'cancel.running')).toMatchObject({ verdict: 'not-testable' });
    expect(row(report, 'cancel.running')?.seen).toBe(
      'the task had already ended (cancelled) when the cancel arrived: the tool is too quick to cancel',
    );
  });

  it('[V22] a server that never answers tasks/list: list.paging not testable, never judged on a local timeout', async () => {
    const { report, model } = await doctorOn({ unanswered: 'tasks/list' }, { requestTimeoutMs: 300 });
    expect(model.failures).toEqual([]);
    // Before the fix: a deviation, "page 1 answered no answer in time".
    expect(row(report, 'list.paging')).toMatchObject({ verdict: 'not-testable', seen: 'page 1 got no answer in time' });
    expect(deviations(report)).toEqual([]);
  });

  it('[V16] a blocking tasks/result whose own bound ends before the doctor stops waiting for it: result.blocks not testable, never ok', async () => {
    // The task ends 2.6 s into the probe; tasks/result is bounded by probeTimeoutMs + requestTimeoutMs (4 s),
    // before the end plus the doctor's wait (at least 2 s).
    const { report, model } = await doctorOn(
      { unanswered: 'tasks/result', workMs: 2_600 },
      { probeTimeoutMs: 3_000, requestTimeoutMs: 1_000 },
    );
    expect(model.failures).toEqual([]);
    // Before the fix: ok, "waited for the end; answered 1.4 s after it", with no answer at all.
    expect(row(report, 'result.blocks')).toMatchObject({ verdict: 'not-testable' });
    expect(row(report, 'result.blocks')?.seen).toMatch(
      /^tasks\/result got no answer in time [\d.]+ (ms|s) after the task ended, before the [\d.]+ s the doctor waits for its answer$/,
    );
    expect(row(report, 'result.shape')).toMatchObject({ verdict: 'not-testable' });
  });

  it('[V26] a server that never answers a made-up tasks/list cursor: list.badCursor not testable', async () => {
    const { report, model } = await doctorOn({ madeUpCursorUnanswered: true }, { requestTimeoutMs: 300 });
    expect(model.failures).toEqual([]);
    // Before the fix: a deviation, "a made-up cursor answered no answer in time, not -32602".
    expect(row(report, 'list.badCursor')).toMatchObject({
      verdict: 'not-testable',
      seen: 'a made-up cursor got no answer in time',
    });
    expect(row(report, 'list.paging')).toMatchObject({ verdict: 'ok' });
    expect(deviations(report)).toEqual([]);
  });

  it('[V24] [V23] [V26] a server that never answers tasks/cancel: the cancel rows and unknown.id not testable, no deviation', async () => {
    const { report, model } = await doctorOn({ unanswered: 'tasks/cancel' }, { requestTimeoutMs: 300 });
    expect(model.failures).toEqual([]);
    // Before the fix each local timeout was judged as the server's answer.
    expect(deviations(report)).toEqual([]);
    for (const check of ['cancel.running', 'cancel.completed', 'unknown.id'])
      expect(row(report, check)?.verdict, check).toBe('not-testable');
    expect(row(report, 'cancel.running')?.seen).toBe('the cancel got no answer in time');
    expect(row(report, 'cancel.completed')?.seen).toBe('the cancel got no answer in time');
    expect(row(report, 'unknown.id')?.seen).toBe(
      'tasks/get -32602, tasks/result -32602, tasks/cancel no answer in time: no answer to judge',
    );
  });
});

/** A `work` task of a minute whose first CreateTaskResult the model sends `lateCreateMs` late. */
const LATE_WORK = { name: 'work', arguments: { late: true, ms: 60_000 } };

/** The task id in the CreateTaskResult of the late call (the first with `late: true`), as the server sent it. */
function lateTaskId(model: Model): string {
  const call = model.server
    .received('tools/call')
    .find((entry) => (entry.params.arguments as { late?: unknown } | undefined)?.late === true);
  const reply = model.server.sent.find((message) => message.id === call?.id && 'result' in message);
  const task = (reply?.result as { task?: { taskId?: unknown } } | undefined)?.task;
  if (typeof task?.taskId !== 'string') throw new Error('the late CreateTaskResult was not sent');
  return task.taskId;
}

describe('doctor: a CreateTaskResult that comes after the doctor gave up on its call', () => {
  it('[R24] [A5] while the session is open: the task is taken into the clean-up (cancelled with tasks/cancel), counted, and noted as late', async () => {
    // The lifecycle probe's call is answered 1.5 s after it was sent, 0.5 s after the doctor's bound.
    const { report, model } = await doctorOn({ lateCreateMs: 1_500 }, { tool: LATE_WORK, requestTimeoutMs: 1_000 });
    const late = lateTaskId(model);
    // Before the fix the late reply was dropped: the task ran on, neither cancelled nor counted.
    clean(model, report);
    expect(model.server.params('tasks/cancel').filter((params) => params.taskId === late)).toHaveLength(1);
    expect(report.tasks.notes).toEqual([
      expect.stringMatching(
        /^a task of work came late, \d+ ms after the doctor had given up on its tools\/call \(no answer in 1\.0 s\): taken into the clean-up$/,
      ),
    ]);
    // Every task the server created is counted, the late one too.
    expect(report.tasks.started).toBe(model.server.params('tools/call').filter((params) => params.task).length);
    // [R24]: the call that may create a task is never cancelled with notifications/cancelled.
    const call = model.server.received('tools/call').find((entry) => entry.params.task !== undefined);
    expect(model.server.params('notifications/cancelled').map((params) => params.requestId)).not.toContain(call?.id);
    // A verdict needs the server's own answer: a call with no answer in time is not testable, never a deviation.
    expect(row(report, 'create.result')).toMatchObject({
      verdict: 'not-testable',
      seen: 'tools/call with task: no answer in time',
    });
    // [V4]: no note quotes the task id.
    expect(JSON.stringify(report)).not.toContain(late);
  });

  it("[R24] once the run is over nothing more is sent: the call still open on the caller's client is not cancelled with notifications/cancelled, a CreateTaskResult that comes later is left alone, and the run is not held for it", async () => {
    // The input probe's call (the battery's last: the expiry check needs seconds) is answered 3 s late.
    const { report, model } = await doctorOn(
      { lateCreateMs: 3_000 },
      { inputTool: LATE_WORK, requestTimeoutMs: 1_000 },
    );
    const ended = model.server.now();
    // The run did not wait for the reply: it returned before the server sent it.
    expect(model.server.sent.some((message) => isLate(model, message))).toBe(false);
    // [R24]: the call may create a task, so it is never cancelled with notifications/cancelled, not
    // even once the doctor is done with the session (before the fix, the end gave it up that way).
    const call = model.server
      .received('tools/call')
      .find((entry) => (entry.params.arguments as { late?: unknown } | undefined)?.late === true);
    expect(call).toBeDefined();
    const sent = Date.now();
    while (
      Date.now() - sent < 5_000 &&
      !model.server.sent.some((message) => 'result' in message && isLate(model, message))
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = lateTaskId(model);
    // Nothing but requests the doctor sent before it returned: no read, no cancel of the late task.
    const after = model.server.log.filter((entry) => entry.at > ended && entry.kind === 'request');
    expect(after).toEqual([]);
    expect(model.server.params('notifications/cancelled').map((params) => params.requestId)).not.toContain(call?.id);
    expect(model.running()).toBe(1);
    expect(report.tasks.notes).toEqual([]);
    expect(report.tasks.leftRunning).toBe(0);
    expect(JSON.stringify(report)).not.toContain(late);
  });
});

/** True when `message` answers the late call. */
function isLate(model: Model, message: Record<string, unknown>): boolean {
  const call = model.server
    .received('tools/call')
    .find((entry) => (entry.params.arguments as { late?: unknown } | undefined)?.late === true);
  return call !== undefined && message.id === call.id;
}

describe('doctor: it obeys the library rules', () => {
  it('without tasks.cancel it sends no tasks/cancel ([R5]), and the report says which tasks it had to leave running', async () => {
    const { report, model } = await doctorOn({ noCancel: true, neverEnds: true }, { probeTimeoutMs: 600 });
    expect(model.failures).toEqual([]);
    expect(deviations(report)).toEqual(['caps.cancel']);
    expect(row(report, 'cancel.running')).toMatchObject({
      verdict: 'not-testable',
      seen: 'the server declared no tasks.cancel',
    });
    expect(report.tasks.leftRunning).toBe(model.running());
    expect(report.tasks.leftRunning).toBeGreaterThan(0);
    expect(report.tasks.notes[0]).toMatch(
      /^a task of work: the server declared no tasks.cancel, so it runs until its ttl \(300000 ms\)$/,
    );
  });

  it('a stop signal ends the run with TaskAbortError, after cancelling the tasks it started', async () => {
    const { model, client } = await modelAndClient({ neverEnds: true });
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('enough')), 300);
    const error = await runDoctor(client, { ...QUICK, signal: stop.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAbortError);
    expect((error as TaskAbortError).reason).toEqual(new Error('enough'));
    expect(model.running()).toBe(0);
    expect(model.server.count('tasks/cancel')).toBeGreaterThanOrEqual(1);
    expect(model.failures).toEqual([]);
  });
});
