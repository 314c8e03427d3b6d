/**
 * What `mcp-task doctor` writes: the report as a table (on a terminal, or with `--table`) or as
 * JSON, an error document when no report could be made, and a progress line on a terminal's
 * stderr while the probes run. The report carries server text (what a check saw, the server's
 * name, its error messages): the table shows it through {@link terminalSafe}, the JSON through
 * {@link jsonSafe}, like the CLI's other output.
 */
import { renderReport, type DoctorReport } from 'mcp-task-client/doctor';
import { colors, formatElapsed } from './format.js';
import { jsonSafe, terminalSafe } from './sanitize.js';

/** The width of a table that is not written to a terminal (unless `COLUMNS` says otherwise). */
export const TABLE_WIDTH = 120;

/** `report` with every string made safe for a terminal (control characters shown, on one line). */
export function terminalSafeReport(report: DoctorReport): DoctorReport {
  return JSON.parse(JSON.stringify(report), (_key, value: unknown) =>
    typeof value === 'string' ? terminalSafe(value) : value,
  ) as DoctorReport;
}

/** The report as a table of `width` columns, with coloured verdicts when `color`. */
export function reportTable(
  report: DoctorReport,
  options: { readonly width: number; readonly color: boolean },
): string {
  return renderReport(terminalSafeReport(report), { width: options.width, color: options.color });
}

/** The report as one JSON document (two-space indented; DEL and C1 controls escaped too). */
export function reportDocument(report: DoctorReport): string {
  return `${jsonSafe(report, 2)}\n`;
}

/** Why no report was made, for `--json`: the document that takes the report's place. */
export interface DoctorFailure {
  /** The error: `ConnectError`, `TimeoutError`, `Interrupted`, or the library's error class name. */
  readonly error: { readonly name: string; readonly message: string; readonly reason?: string | undefined };
  /** The exit code the command ends with. */
  readonly exitCode: number;
}

/** The failure document. */
export function failureDocument(failure: DoctorFailure): string {
  return `${jsonSafe(failure, 2)}\n`;
}

/** The stream the progress line draws on. */
export interface ProgressOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

const CLEAR = '\r\x1b[2K';

/**
 * One line on a terminal's stderr, redrawn in place: which wire and probe run, and for how long.
 * Notes (a stdio server's stderr) are printed above it. Off (notes only) when the stream is not a
 * terminal or `enabled` is false.
 */
export class ProgressLine {
  private text: string | undefined = undefined;
  private readonly dim: (text: string) => string;
  private startedAt: number | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly out: ProgressOutput,
    private readonly enabled: boolean,
    color: boolean,
  ) {
    this.dim = colors(color).dim;
  }

  private get live(): boolean {
    return this.enabled && this.out.isTTY === true;
  }

  /** Shows what runs now (the elapsed time counts from the first call), redrawn every second. */
  show(what: string): void {
    if (!this.live) return;
    this.text = what;
    this.startedAt ??= Date.now();
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), 1_000);
      this.timer.unref();
    }
    this.draw();
  }

  private draw(): void {
    if (this.text === undefined) return;
    const line = `${this.text} · ${formatElapsed(Date.now() - (this.startedAt ?? Date.now()))}`;
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    this.out.write(`${CLEAR}${this.dim(line.length > width ? `${line.slice(0, width - 1)}…` : line)}`);
  }

  /** A note on its own line (`mcp-task: …`), above the progress line. */
  note(text: string): void {
    if (this.live && this.text !== undefined) this.out.write(CLEAR);
    this.out.write(`${this.dim('mcp-task:')} ${terminalSafe(text, { multiline: true })}\n`);
    this.draw();
  }

  /** Removes the line (a later {@link show} draws it again). */
  clear(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.live && this.text !== undefined) this.out.write(CLEAR);
    this.text = undefined;
  }
}
