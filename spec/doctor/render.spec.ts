/**
 * The report's forms for a command line, from a report built by hand: the terminal table (a
 * section per wire, long cells wrapped to the width, the library column optional, colours only
 * when asked), the JSON form (the report itself), and the exit code (1 only for a MUST deviation).
 */
import { describe, expect, it } from 'vitest';
import { exitCode, renderReport, reportJson, type DoctorReport, type DoctorRow } from '../../lib/doctor.js';

const row = (
  check: string,
  verdict: DoctorRow['verdict'],
  severity: DoctorRow['severity'],
  seen: string,
): DoctorRow => ({
  check,
  wire: '2025-11-25',
  rule: 'V23',
  quote: 'cancelling a completed task is refused with -32602',
  severity,
  seen,
  verdict,
  coping: {
    quirk: 'D11',
    does: 'The library reads a task before cancelling it on a deadline or an abort, and after a -32602 reads it again.',
    handled: true,
  },
});

function report(rows: DoctorRow[]): DoctorReport {
  const deviations = rows.filter((r) => r.verdict === 'deviation');
  return {
    reportVersion: 1,
    server: { name: 'demo-server', version: '2.0.0' },
    startedAt: '2026-12-01T10:00:00.000Z',
    durationMs: 4_250,
    wires: [
      {
        wire: '2025-11-25',
        offered: true,
        sdk: 'v1',
        protocolVersion: '2025-11-25',
        tool: 'analyze',
        note: 'tool analyze, as named',
      },
      {
        wire: 'io.modelcontextprotocol/tasks',
        offered: false,
        sdk: undefined,
        protocolVersion: undefined,
        tool: undefined,
        note: 'SDK v2 (@modelcontextprotocol/client) is needed for a 2026-07-28 session',
      },
    ],
    rows,
    tasks: { started: 3, finished: 2, cancelled: 1, leftRunning: 0, notes: [] },
    summary: {
      ok: rows.filter((r) => r.verdict === 'ok').length,
      deviations: deviations.length,
      mustViolations: deviations.filter((r) => r.severity === 'MUST').length,
      notTestable: rows.filter((r) => r.verdict === 'not-testable').length,
    },
  };
}

describe('doctor report forms', () => {
  const sample = report([
    row('cancel.completed', 'ok', 'MUST', 'refused: -32602 (Cannot cancel task in terminal status: completed)'),
    row(
      'cancel.completed.status',
      'deviation',
      'SHOULD',
      'a rather long description of what was seen, long enough to wrap over several lines of the seen column',
    ),
    row('expiry.read', 'not-testable', 'MAY', 'the server applies 300000 ms'),
  ]);

  it('renders a headline, a section per wire and the task account, every line within the width', () => {
    const text = renderReport(sample, { width: 100 });
    const lines = text.trimEnd().split('\n');
    const flat = text.replace(/\s+/g, ' ');
    expect(lines[0]).toBe('mcp-task doctor: demo-server 2.0.0, 1 ok, 1 deviation, 1 not testable, in 4.3 s');
    expect(text).toContain('2025-11-25 (SDK v1, protocol 2025-11-25): tool analyze, as named');
    expect(flat).toContain(
      'io.modelcontextprotocol/tasks: not probed (SDK v2 (@modelcontextprotocol/client) is needed for a 2026-07-28 session)',
    );
    expect(text).toContain('Tasks: 3 started, 2 ended on their own, 1 cancelled, 0 left running.');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(
      lines
        .find((line) => line.includes('VERDICT'))
        ?.split(/\s{2,}/)
        .filter((cell) => cell !== ''),
    ).toEqual(['VERDICT', 'SEV', 'RULE', 'CHECK', 'SEEN', 'LIBRARY']);
    expect(text).toContain('✘ deviation');
    expect(text).toContain('D11: The library reads');
    expect(text).not.toContain('\u001b[');
  });

  it('leaves the library column out on request, and colours verdicts only when asked', () => {
    const plain = renderReport(sample, { width: 100, withoutLibrary: true });
    expect(plain).not.toContain('LIBRARY');
    expect(plain).not.toContain('The library reads');
    const colored = renderReport(sample, { color: true });
    expect(colored).toContain('\u001b[31m✘ deviation\u001b[0m');
    expect(colored).toContain('\u001b[32m✔ ok\u001b[0m');
  });

  it("shows the server's name and version on one line, escaped and cut, in the headline; the JSON keeps them whole", () => {
    // The server names itself: a long, multi-line name with escape sequences must not take over the table.
    const name = `evil\n\u001b[2J\u0007server ${'x'.repeat(300)}`;
    const version = '1.0\r\n\u009b31m';
    const hostile: DoctorReport = { ...sample, server: { name, version } };
    const text = renderReport(hostile, { width: 100 });
    // Wrapped to the width: two lines.
    const headline = text.split('\n').slice(0, 2).join(' ');
    expect(headline).toMatch(/^mcp-task doctor: evil\\n\\u001b\[2J\\u0007server x+… 1\.0\\r\\n\\u009b31m, 1 ok,/);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).not.toContain('x'.repeat(80));
    expect(JSON.parse(reportJson(hostile)).server).toEqual({ name, version });
  });

  it('gives the report itself as JSON', () => {
    expect(JSON.parse(reportJson(sample))).toEqual(JSON.parse(JSON.stringify(sample)));
    expect(reportJson(sample).endsWith('}\n')).toBe(true);
  });

  it('exits 1 only when a MUST rule is broken', () => {
    expect(exitCode(sample)).toBe(0); // a SHOULD deviation and a not-testable MAY
    expect(exitCode(report([row('cancel.completed', 'not-testable', 'MUST', 'no task')]))).toBe(0);
    expect(exitCode(report([row('cancel.completed', 'deviation', 'MUST', 'accepted')]))).toBe(1);
  });
});
