/**
 * The live status line on a terminal: one line redrawn in place with a spinner, the status, the
 * status message, the elapsed time, the poll and notification counts (and retries, if any) from
 * the handle's metrics, a progress bar when the server reports progress, and the task wire. Lines
 * printed through {@link StatusLine.print} appear above it.
 */
import type { Task, TaskProgress } from 'mcp-task-client';
import { bar, formatElapsed, paintStatus, type Colors } from './format.js';
import { terminalSafe } from './sanitize.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR = '\r\x1b[2K';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

/** The task's live numbers (its `TaskMetrics`), read on every redraw. */
export interface LineCounts {
  readonly polls: number;
  readonly notifications: number;
  readonly retries: number;
}

/** What the line shows. */
export interface LineState {
  readonly task?: Task | undefined;
  readonly progress?: TaskProgress | undefined;
  /** Reads the live numbers; called on every redraw. */
  readonly counts?: (() => LineCounts) | undefined;
  /** The task wire, shown last (the first part cut on a narrow terminal). */
  readonly wire?: string | undefined;
}

/** The output the line draws on. */
export interface LineOutput {
  write(text: string): unknown;
  readonly columns?: number | undefined;
}

/** A status line redrawn every `intervalMs` while started. */
export class StatusLine {
  private frame = 0;
  private timer: NodeJS.Timeout | undefined = undefined;
  private drawn = false;
  private state: LineState = {};

  constructor(
    private readonly out: LineOutput,
    private readonly c: Colors,
    private readonly startedAt: number,
    private readonly intervalMs = 100,
  ) {}

  /** Starts drawing (hides the cursor). */
  start(): void {
    if (this.timer !== undefined) return;
    this.out.write(HIDE_CURSOR);
    this.timer = setInterval(() => this.draw(), this.intervalMs);
    this.draw();
  }

  /** Erases the line and stops drawing (shows the cursor). Call {@link StatusLine.start} to go on. */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
    this.out.write(SHOW_CURSOR);
  }

  /** Updates what the line shows. */
  update(state: Partial<LineState>): void {
    this.state = { ...this.state, ...state };
    if (this.timer !== undefined) this.draw();
  }

  /** Prints `text` (one or more lines) above the line. */
  print(text: string): void {
    this.erase();
    this.out.write(text.endsWith('\n') ? text : `${text}\n`);
    if (this.timer !== undefined) this.draw();
  }

  /** The line's text (without the spinner frame's timing), for tests. */
  render(now: number): string {
    const { task, progress } = this.state;
    const { polls, notifications, retries } = this.state.counts?.() ?? { polls: 0, notifications: 0, retries: 0 };
    const c = this.c;
    const parts: string[] = [];
    const status = task?.status ?? 'starting';
    const message = task?.statusMessage === undefined ? undefined : terminalSafe(task.statusMessage);
    parts.push(
      `${c.cyan(FRAMES[this.frame % FRAMES.length])} ${paintStatus(c, terminalSafe(status))}${message ? ` ${message}` : ''}`,
    );
    parts.push(c.dim(formatElapsed(now - this.startedAt)));
    const numbers = [plural(polls, 'poll'), plural(notifications, 'notification')];
    if (retries > 0) numbers.push(plural(retries, 'retry', 'retries'));
    parts.push(c.dim(numbers.join(', ')));
    if (progress !== undefined) {
      const total = progress.total;
      parts.push(
        total !== undefined && total > 0
          ? `${bar(progress.progress / total, 20)} ${progress.progress}/${total}`
          : `progress ${progress.progress}`,
      );
    }
    if (this.state.wire !== undefined) parts.push(c.dim(terminalSafe(this.state.wire)));
    return parts.join(c.dim(' · '));
  }

  private draw(): void {
    this.frame += 1;
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    // Truncate the visible text (colour codes do not count) so the line never wraps.
    const line = fit(this.render(Date.now()), width);
    this.out.write(`${CLEAR}${line}`);
    this.drawn = true;
  }

  private erase(): void {
    if (this.drawn) this.out.write(CLEAR);
    this.drawn = false;
  }
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Cuts a string with ANSI colour codes to `width` visible characters, keeping the codes. */
function fit(text: string, width: number): string {
  if ([...text.replace(ANSI, '')].length <= width) return text;
  let visible = 0;
  let out = '';
  let i = 0;
  while (i < text.length && visible < width - 1) {
    ANSI.lastIndex = i;
    const code = ANSI.exec(text);
    if (code !== null && code.index === i) {
      out += code[0];
      i += code[0].length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i) as number);
    out += ch;
    i += ch.length;
    visible += 1;
  }
  return `${out}…\x1b[0m`;
}
