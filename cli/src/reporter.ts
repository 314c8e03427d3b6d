/**
 * What the CLI tells its user, in one of two forms: {@link HumanReporter} for a terminal (a live
 * status line, readable results, colours unless `NO_COLOR`) and {@link JsonReporter} for
 * everything else (JSON lines on stdout; the schema is in docs/cli.md). Diagnostics go to stderr
 * in both.
 */
import type { CallToolResult, InputDelivery, Task, TaskProgress, WireKind } from 'mcp-task-client';
import type { Outcome } from './exit.js';
import { colors, formatElapsed, paintStatus, shortId, type Colors } from './format.js';
import { renderResult } from './render.js';
import { jsonSafe, terminalSafe } from './sanitize.js';
import { StatusLine } from './status-line.js';

/** Live counts shown with a snapshot, from the handle's `TaskMetrics`. */
export interface Counts {
  /** `tasks/get` requests sent for the task. */
  readonly polls: number;
  /** Status notifications received for the task. */
  readonly notifications: number;
  /** Requests retried for the task. */
  readonly retries: number;
  /** Local time since the wait started. */
  readonly elapsedMs: number;
}

/** An input request and how it was answered. */
export interface InputEvent {
  readonly taskId: string | undefined;
  readonly kind: 'elicitation' | 'sampling';
  /**
   * How the request arrived: `request` (a 2025-11-25 side-channel request), `task-update` (a
   * task's `inputRequests` on the extension wire) or `retry` (input asked for before a task existed).
   */
  readonly delivery?: InputDelivery | undefined;
  /** The request's params. */
  readonly request: Record<string, unknown>;
  /** The answer sent (`{ "action": "reject" }` for a rejected sampling request). */
  readonly answer: Record<string, unknown>;
  /** `answer`: from `--answer`/`--answers`; `prompt`: typed by the user; `none`: declined for want of one. */
  readonly source: 'answer' | 'prompt' | 'none';
}

/** What is being followed. */
export interface BeginInfo {
  readonly taskId: string | undefined;
  readonly toolName: string;
  readonly kind: 'task' | 'immediate';
  /** The task wire: `2025-11-25` or `io.modelcontextprotocol/tasks`. */
  readonly wire: WireKind;
}

/** How a wait ended. */
export interface EndEvent {
  readonly outcome: Outcome;
  readonly exitCode: number;
  /** The task wire of the connection, when one was made. */
  readonly wire?: WireKind | undefined;
  readonly taskId?: string | undefined;
  readonly result?: CallToolResult | undefined;
  readonly error?: { readonly name: string; readonly message: string } | undefined;
}

/** The user-facing output of one command. */
export interface Reporter {
  /** True when questions may be asked on the terminal. */
  readonly interactive: boolean;
  /**
   * A task is being followed (created, resumed, or answered at once). `counts` gives the live
   * numbers; the status line reads it on every refresh.
   */
  begin(info: BeginInfo, task: Task | undefined, counts: () => Counts): void;
  snapshot(task: Task, counts: Counts): void;
  progress(taskId: string | undefined, progress: TaskProgress): void;
  input(event: InputEvent): void;
  /** Runs a terminal prompt with the status line out of the way. */
  prompt<T>(run: () => Promise<T>): Promise<T>;
  end(event: EndEvent): void;
  /** A diagnostic on stderr. */
  note(text: string): void;
  /** A record for a listing command (a tool, a task). */
  item(type: string, data: Record<string, unknown>, human: string): void;
  /** Stops any live output. */
  close(): void;
}

/** Where output goes (injectable for tests). */
export interface Streams {
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number };
  readonly stderr: NodeJS.WritableStream;
}

/** JSON lines on stdout. With `quiet`, only the final `result` line (and listing items). */
export class JsonReporter implements Reporter {
  readonly interactive = false;

  constructor(
    private readonly streams: Streams,
    private readonly quiet: boolean,
  ) {}

  private line(value: Record<string, unknown>): void {
    this.streams.stdout.write(`${jsonSafe(value)}\n`);
  }

  begin(info: BeginInfo): void {
    if (!this.quiet) this.line({ type: 'task', ...info });
  }

  snapshot(task: Task, counts: Counts): void {
    if (!this.quiet) this.line({ type: 'snapshot', task, ...counts });
  }

  progress(taskId: string | undefined, progress: TaskProgress): void {
    if (!this.quiet) this.line({ type: 'progress', taskId, ...progress });
  }

  input(event: InputEvent): void {
    if (!this.quiet) this.line({ type: 'input', ...event });
  }

  prompt<T>(run: () => Promise<T>): Promise<T> {
    return run();
  }

  end(event: EndEvent): void {
    this.line({ type: 'result', ...event });
    if (event.error !== undefined) this.note(`${event.error.name}: ${event.error.message}`);
  }

  note(text: string): void {
    // Notes carry server text (errors, a stdio server's stderr), and stderr may be a terminal.
    this.streams.stderr.write(`mcp-task: ${terminalSafe(text, { multiline: true })}\n`);
  }

  item(type: string, data: Record<string, unknown>): void {
    this.line({ type, ...data });
  }

  close(): void {}
}

/** A terminal: status line, readable results, prompts when stdin is a terminal too. */
export class HumanReporter implements Reporter {
  private readonly c: Colors;
  private readonly line: StatusLine | undefined;
  private lastShown: string | undefined = undefined;
  private live = false;
  /** Prompts open: the status line stays off meanwhile. */
  private prompting = 0;

  constructor(
    private readonly streams: Streams,
    options: {
      readonly color: boolean;
      readonly quiet: boolean;
      readonly interactive: boolean;
      readonly startedAt: number;
    },
  ) {
    this.c = colors(options.color);
    this.interactive = options.interactive;
    this.line = options.quiet ? undefined : new StatusLine(streams.stdout, this.c, options.startedAt);
  }

  readonly interactive: boolean;

  /** Lines held back while a prompt is open, so they do not break into it. */
  private held: (() => void)[] = [];

  private print(text: string): void {
    const line = this.line;
    if (line === undefined) return;
    if (this.prompting > 0) this.held.push(() => line.print(text));
    else line.print(text);
  }

  begin(info: BeginInfo, task: Task | undefined, counts: () => Counts): void {
    if (info.kind === 'immediate') return;
    this.line?.update({ counts, wire: info.wire, ...(task === undefined ? {} : { task }) });
    const id = info.taskId === undefined ? '' : terminalSafe(shortId(info.taskId));
    this.print(this.c.dim(`task ${id} (${terminalSafe(info.toolName)}) on the ${info.wire} wire`));
    this.live = true;
    this.line?.start();
  }

  snapshot(task: Task, counts: Counts): void {
    const shown = `${task.status}\u0000${task.statusMessage ?? ''}`;
    if (shown !== this.lastShown) {
      this.lastShown = shown;
      const message = task.statusMessage ? `  ${terminalSafe(task.statusMessage)}` : '';
      this.print(
        `${this.c.dim(formatElapsed(counts.elapsedMs).padStart(7))}  ${paintStatus(this.c, terminalSafe(task.status))}${message}`,
      );
    }
    this.line?.update({ task });
  }

  progress(_taskId: string | undefined, progress: TaskProgress): void {
    this.line?.update({ progress });
  }

  input(event: InputEvent): void {
    const action = typeof event.answer.action === 'string' ? event.answer.action : 'reply';
    const by =
      event.source === 'answer'
        ? 'from --answer'
        : event.source === 'prompt'
          ? 'by you'
          : 'automatically: no answer given';
    this.print(this.c.dim(`         ${event.kind} answered ${action} (${by})`));
  }

  async prompt<T>(run: () => Promise<T>): Promise<T> {
    this.prompting += 1;
    this.line?.stop();
    try {
      return await run();
    } finally {
      this.prompting -= 1;
      if (this.prompting === 0) {
        for (const write of this.held.splice(0)) write();
        if (this.live) this.line?.start();
      }
    }
  }

  end(event: EndEvent): void {
    this.live = false;
    this.line?.stop();
    const out = this.streams.stdout;
    const err = this.streams.stderr;
    if (event.outcome === 'completed') {
      if (this.line !== undefined) out.write(`${this.c.green('✔')} ${this.c.bold('completed')}\n`);
      if (event.result !== undefined) out.write(`${renderResult(event.result, this.c)}\n`);
      return;
    }
    const mark =
      event.outcome === 'cancelled' || event.outcome === 'interrupted' ? this.c.yellow('■') : this.c.red('✖');
    err.write(
      `${mark} ${this.c.bold(event.outcome)}${event.error ? `: ${terminalSafe(event.error.message, { multiline: true })}` : ''}\n`,
    );
    if (event.result !== undefined && event.outcome === 'failed') err.write(`${renderResult(event.result, this.c)}\n`);
  }

  note(text: string): void {
    if (this.prompting > 0) {
      this.held.push(() => this.note(text));
      return;
    }
    const resume = this.line !== undefined && this.live && this.prompting === 0;
    this.line?.stop();
    this.streams.stderr.write(`${this.c.dim('mcp-task:')} ${terminalSafe(text, { multiline: true })}\n`);
    if (resume) this.line?.start();
  }

  item(_type: string, _data: Record<string, unknown>, human: string): void {
    // One line per item, built from the server's names, descriptions and status messages.
    this.streams.stdout.write(`${terminalSafe(human)}\n`);
  }

  close(): void {
    this.live = false;
    this.line?.stop();
    // A prompt still open when the run ends (the server went away, a second Ctrl-C while a form
    // was open) is never dismissed: the cursor it hid is shown again on a line of its own, and the
    // notes held back for it (the server's last stderr lines, say) are printed.
    if (this.prompting > 0) {
      this.prompting = 0;
      if (this.streams.stdout.isTTY === true) this.streams.stdout.write('\x1b[?25h\n');
      for (const write of this.held.splice(0)) write();
    }
  }
}
