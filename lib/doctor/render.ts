/**
 * The report's three forms for a command line: a table for a terminal (one per wire, long cells
 * wrapped to the width), JSON for machines (the report as is), and the exit code (1 when a MUST
 * rule is broken).
 */
import { nameText } from './shape.js';
import type { DoctorReport, DoctorRow, Verdict, WireSection } from './types.js';

/** Options of {@link renderReport}. */
export interface RenderOptions {
  /** Total width in columns. @defaultValue 120 */
  readonly width?: number | undefined;
  /** ANSI colours for the verdicts. @defaultValue false */
  readonly color?: boolean | undefined;
  /** Leave out the "library" column (how mcp-task-client copes). @defaultValue false */
  readonly withoutLibrary?: boolean | undefined;
}

const MARK: Record<Verdict, string> = { ok: '✔ ok', deviation: '✘ deviation', 'not-testable': '- not testable' };
const COLOR: Record<Verdict, string> = { ok: '\u001b[32m', deviation: '\u001b[31m', 'not-testable': '\u001b[33m' };
const RESET = '\u001b[0m';

/** Words of `text` on lines of at most `width` columns (a longer word is cut). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    let rest = word;
    while (rest.length > width) {
      if (line !== '') lines.push(line);
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
      line = '';
    }
    if (line === '') line = rest;
    else if (line.length + 1 + rest.length <= width) line += ` ${rest}`;
    else {
      lines.push(line);
      line = rest;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** The report as text for a terminal. */
export function renderReport(report: DoctorReport, options: RenderOptions = {}): string {
  const width = Math.max(60, Math.floor(options.width ?? 120));
  const out: string[] = [...wrap(headline(report), width), ''];
  for (const section of report.wires) {
    out.push(...wrap(sectionTitle(section), width));
    const rows = report.rows.filter((row) => row.wire === section.wire);
    out.push(...table(rows, width, options), '');
  }
  const t = report.tasks;
  out.push(
    ...wrap(
      `Tasks: ${t.started} started, ${t.finished} ended on their own, ${t.cancelled} cancelled, ${t.leftRunning} left running.`,
      width,
    ),
  );
  for (const note of t.notes) out.push(...wrap(note, width - 2).map((line) => `  ${line}`));
  for (const wire of report.connectionLost ?? []) {
    out.push(
      ...wrap(
        `The ${wire} session closed while the doctor was probing it (the server exited, crashed or dropped the connection): the checks after that are not testable, and the run fails.`,
        width,
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

function headline(report: DoctorReport): string {
  // The server's name and version are its own (untrusted): on one line, escaped and cut.
  const server =
    report.server === undefined
      ? 'an unnamed server'
      : `${nameText(report.server.name)} ${nameText(report.server.version)}`;
  const s = report.summary;
  const must = s.mustViolations > 0 ? ` (${s.mustViolations} of a MUST rule)` : '';
  const deviations = `${s.deviations} deviation${s.deviations === 1 ? '' : 's'}`;
  return `mcp-task doctor: ${server}, ${s.ok} ok, ${deviations}${must}, ${s.notTestable} not testable, in ${(report.durationMs / 1000).toFixed(1)} s`;
}

function sectionTitle(section: WireSection): string {
  if (!section.offered) return `${section.wire}: not probed (${section.note})`;
  const session = [
    section.sdk === undefined ? undefined : `SDK ${section.sdk}`,
    section.protocolVersion === undefined ? undefined : `protocol ${section.protocolVersion}`,
  ]
    .filter((x) => x !== undefined)
    .join(', ');
  return `${section.wire} (${session}): ${section.note}`;
}

/** The rows as a wrapped table. */
function table(rows: readonly DoctorRow[], width: number, options: RenderOptions): string[] {
  const fixed = [14, 6, 5];
  const free = options.withoutLibrary === true ? 2 : 3;
  const room = width - fixed.reduce((a, b) => a + b, 0) - 2 * (fixed.length + free - 1) - 2;
  const flex =
    options.withoutLibrary === true
      ? [Math.floor(room * 0.45), room - Math.floor(room * 0.45)]
      : [Math.floor(room * 0.3), Math.floor(room * 0.35), room - Math.floor(room * 0.3) - Math.floor(room * 0.35)];
  const widths = [...fixed, ...flex];
  const header = ['VERDICT', 'SEV', 'RULE', 'CHECK', 'SEEN', ...(options.withoutLibrary === true ? [] : ['LIBRARY'])];
  const lines = [
    line(
      header.map((h) => [h]),
      widths,
    ),
  ];
  for (const row of rows) {
    const library = row.coping.quirk === undefined ? row.coping.does : `${row.coping.quirk}: ${row.coping.does}`;
    const cells = [
      MARK[row.verdict],
      row.severity,
      row.rule,
      `${row.quote} (${row.check})`,
      row.seen,
      ...(options.withoutLibrary === true ? [] : [library]),
    ];
    const wrapped = cells.map((cell, i) => wrap(cell, widths[i] ?? 10));
    const text = line(wrapped, widths);
    lines.push(
      options.color === true
        ? text.replace(MARK[row.verdict], `${COLOR[row.verdict]}${MARK[row.verdict]}${RESET}`)
        : text,
    );
  }
  return lines;
}

/** Cells of wrapped lines side by side, padded to `widths`. */
function line(cells: readonly string[][], widths: readonly number[]): string {
  const height = Math.max(...cells.map((cell) => cell.length));
  const out: string[] = [];
  for (let i = 0; i < height; i += 1) {
    out.push(
      `  ${cells
        .map((cell, c) => (cell[i] ?? '').padEnd(widths[c] ?? 0))
        .join('  ')
        .trimEnd()}`,
    );
  }
  return out.join('\n');
}

/** The report as JSON (it is plain data: this is `JSON.stringify` with two-space indentation). */
export function reportJson(report: DoctorReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** 1 when the report has a deviation from a MUST rule, or a session was lost mid-run; else 0. */
export function exitCode(report: DoctorReport): 0 | 1 {
  if ((report.connectionLost?.length ?? 0) > 0) return 1;
  return report.rows.some((row) => row.verdict === 'deviation' && row.severity === 'MUST') ? 1 : 0;
}
