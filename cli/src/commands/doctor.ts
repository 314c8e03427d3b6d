/**
 * `mcp-task doctor`: probes a task server with the library's doctor (`mcp-task-client/doctor`) and
 * reports, check by check, where it departs from the task specs and how mcp-task-client copes. The
 * doctor opens its own sessions, one per protocol era, so every task wire the server offers is
 * probed; this command gives it a transport factory for the target, the tools to run, the bounds,
 * and a stop signal (Ctrl-C, SIGTERM, `--timeout`), then prints the report. See docs/cli.md.
 *
 * Exit codes: 0 no MUST rule broken, 1 one is (or no report could be made: the server cannot be
 * reached or does not speak MCP), 2 usage error, 124 `--timeout` passed, 130 Ctrl-C (143 SIGTERM,
 * 141 stdout closed). The tasks the doctor started are cancelled before it stops.
 *
 * `--timeout` bounds the whole run (run-deadline.ts): the doctor gets it as its `timeoutMs`, and
 * cuts its probes short a reserve before the end to cancel its tasks and close its sessions in
 * time; the report then says which checks the deadline cut short (exit 124). While connecting
 * there is nothing to cancel: the run is stopped there at once. At the deadline itself the CLI
 * leaves without waiting for more.
 */
import { TaskAbortError, TaskOptionError } from 'mcp-task-client';
import { exitCode, runDoctor, TaskConnectError, type DoctorReport } from 'mcp-task-client/doctor';
import { MAX_TIMER_MS, UsageError, parseDuration, parseHeaders } from '../args.js';
import { doctorOptions, type DoctorCommandOptions } from '../doctor-options.js';
import { httpFailureReason, stdioFailureReason } from '../connect-errors.js';
import { doctorTarget, type DoctorTarget } from '../doctor-target.js';
import { EXIT, describeError } from '../exit.js';
import { writeOut } from '../flush.js';
import { readsKeys } from '../foreground.js';
import { Interrupts } from '../interrupt.js';
import type { Io } from '../io.js';
import { RunDeadline, inSeconds } from '../run-deadline.js';
import { ProgressLine, TABLE_WIDTH, failureDocument, reportDocument, reportTable } from '../doctor-output.js';

export type { DoctorCommandOptions } from '../doctor-options.js';

/**
 * How long a run stopped by Ctrl-C or SIGTERM may take to cancel the tasks it started: the
 * doctor's own request bound, and never past the end of `--timeout`. After it, the CLI leaves
 * without waiting (stdio servers are killed).
 */
export const DOCTOR_STOP_GRACE_MS = 10_000;

/** What the end of `--timeout` keeps for printing the report: the doctor's own deadline is this much earlier. */
const PRINT_MS = 200;

/**
 * The part of its connect bound that the doctor gives SDK v2's version probe (lib/doctor/target.ts),
 * less a margin: a handshake given up no sooner than this share of the bound ran out of it.
 */
const CONNECT_PROBE_SHARE = 0.5;

/** How much of a stdio server's stderr is kept (its end), in characters. */
const STDERR_TAIL = 2_000;

/** The run was stopped by `--timeout`. */
class DoctorTimeout extends Error {
  override readonly name = 'TimeoutError';
}

/** The width of the table: the terminal's, else `COLUMNS`, else {@link TABLE_WIDTH}. */
function tableWidth(io: Io): number {
  if (io.stdout.isTTY === true && typeof io.stdout.columns === 'number' && io.stdout.columns > 0)
    return io.stdout.columns;
  const columns = Number(io.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : TABLE_WIDTH;
}

/**
 * `cannot connect to WHERE: WHY`: the cause the CLI digs out of the error chain (a missing command,
 * a refused connection, an HTTP status), else the library's own words.
 */
function connectFailure(error: TaskConnectError, target: DoctorTarget): string {
  const found =
    target.url !== undefined
      ? httpFailureReason(error)
      : target.command !== undefined
        ? stdioFailureReason(error, target.command)
        : undefined;
  const why = found ?? `${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`;
  const hint = error.reason === 'no-answer' ? ' (--connect-timeout sets the wait)' : '';
  return `cannot connect to ${target.where}: ${why}${hint}`;
}

/** What became of the tasks of a run cut short, in a few words. */
function stoppedTasks(report: DoctorReport): string {
  const { started, cancelled, finished, leftRunning } = report.tasks;
  if (started === 0) return 'no task was started';
  return `of the ${started} task${started === 1 ? '' : 's'} it started, ${cancelled} cancelled, ${finished} ended on their own, ${leftRunning} left running`;
}

const noColor = (io: Io): boolean => io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';

/** Runs `mcp-task doctor`; returns the exit code. */
export async function doctorCommand(
  options: DoctorCommandOptions,
  io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  if (options.json === true && options.table === true) throw new UsageError('Give either --json or --table, not both');
  const json = options.json === true || (options.table !== true && io.stdout.isTTY !== true);
  const timeoutMs =
    options.timeout === undefined ? undefined : parseDuration(options.timeout, '--timeout', MAX_TIMER_MS, false);
  // Counted from the start: connecting (and starting a stdio server) is included.
  const runDeadline = timeoutMs === undefined ? undefined : new RunDeadline(timeoutMs, Date.now());
  const headers = parseHeaders(options.header ?? []);
  const settings = doctorOptions(options);
  const progress = new ProgressLine(io.stderr, options.quiet !== true, io.stderr.isTTY === true && !noColor(io));
  // A stdio server's stderr is kept, not shown: servers log there (task ids, stack traces of the
  // tasks the doctor cancels), and the report is the output. Its end is shown when no session
  // could be held, where it may say why.
  let serverStderr = '';
  const target: DoctorTarget = await doctorTarget({
    stdio: options.stdio,
    url: options.url,
    headers,
    onServerStderr: (text) => {
      serverStderr = (serverStderr + text).slice(-STDERR_TAIL);
    },
  });
  const defaults = target.defaults;

  const stop = new AbortController();
  // Until the first probe starts the doctor is connecting (listing tools at most): no task is
  // started yet, and a stop ends the run at once.
  let probing = false;
  const stopping = (): string =>
    probing ? 'stopping the doctor and cancelling the tasks it started' : 'stopping the doctor (no task started yet)';
  /**
   * A stop while connecting, however it ends (the doctor's own rejection, or the CLI leaving at the
   * end of the stop's grace or of --timeout, whichever comes first on a loaded machine): one text.
   */
  const stoppedConnecting = (): string =>
    `the doctor stopped while connecting to ${target.where}; no task was started; no report`;
  const interrupts = new Interrupts(io.stdin, readsKeys(io.stdin));
  /** How the CLI left without waiting for the doctor to stop. */
  interface Leaving {
    readonly code: number;
    readonly name: string;
    readonly message: string;
  }
  let settle: (leaving: Leaving) => void = () => {};
  const left = new Promise<Leaving>((resolve) => (settle = resolve));
  /** Leaves without waiting for the doctor, once the stdio servers started for it are stopped. */
  const leave = (leaving: Leaving): void => void target.abandon().then(() => settle(leaving));
  /** Stops the run: the doctor cancels its tasks; after the grace the CLI leaves without them. */
  let grace: NodeJS.Timeout | undefined;
  const halt = (reason: Error, code: number, note: string): void => {
    if (stop.signal.aborted) return;
    progress.note(note);
    stop.abort(reason);
    const graceMs = runDeadline?.bound(DOCTOR_STOP_GRACE_MS) ?? DOCTOR_STOP_GRACE_MS;
    grace = setTimeout(() => {
      leave({
        code,
        name: reason instanceof DoctorTimeout ? 'TimeoutError' : 'Interrupted',
        message: probing
          ? `${reason.message}: the doctor did not stop within ${inSeconds(graceMs)}; left without waiting for the tasks it started; no report`
          : `${reason.message}: ${stoppedConnecting()}`,
      });
    }, graceMs);
    grace.unref();
  };
  interrupts.onPress((count) => {
    if (count >= 2) {
      leave({
        code: interrupts.exitCode,
        name: 'Interrupted',
        message: `${interrupts.label}: left at once, without waiting for the tasks the doctor started; no report`,
      });
      return;
    }
    halt(
      new Error(interrupts.label),
      interrupts.exitCode,
      `${interrupts.label}: ${stopping()} (press Ctrl-C again to leave at once)`,
    );
  });
  // Stdout gets one thing, at the end: the report, or the error document. A reader gone by then
  // (EPIPE) is handled where it is written, not as a stop of the run.
  let finishing = false;
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' && interrupts.cause === undefined && !finishing) interrupts.press('pipe');
  });
  /** Writes the report: `undefined` once written, else the write's error (EPIPE: the reader went away). */
  const writeReport = (text: string): Promise<NodeJS.ErrnoException | undefined> => {
    finishing = true;
    return writeOut(io.stdout, text);
  };
  const timedOut = `--timeout passed (${options.timeout ?? ''})`;
  // Still connecting when the probes would have to stop: nothing was started, so the run stops at
  // once. Once probing, the doctor keeps to --timeout itself (its timeoutMs).
  const deadline =
    runDeadline === undefined
      ? undefined
      : setTimeout(
          () => {
            if (!probing) halt(new DoctorTimeout(timedOut), EXIT.timeout, `--timeout passed: ${stopping()}`);
          },
          Math.max(0, runDeadline.left() - runDeadline.reserveMs),
        );
  deadline?.unref();
  // The end of --timeout: the CLI leaves, whatever the doctor is doing.
  const end =
    runDeadline === undefined
      ? undefined
      : setTimeout(() => {
          leave({
            code: EXIT.timeout,
            name: 'TimeoutError',
            // Still connecting (a slow server start, a loaded machine): no task was started.
            message: probing
              ? `${timedOut}: the doctor had not finished by then; left without waiting for the tasks it started; no report`
              : `${timedOut}: ${stoppedConnecting()}`,
          });
        }, runDeadline.left());
  end?.unref();

  /**
   * Ends a run without a report: the error document under --json, the message on stderr. A reader
   * gone before the document is written (`| head -c0`) makes it exit 141, as the report does.
   */
  const fail = async (
    error: { name: string; message: string; reason?: string | undefined },
    code: number,
  ): Promise<number> => {
    progress.clear();
    finishing = true;
    const unwritten = json ? await writeReport(failureDocument({ error, exitCode: code })) : undefined;
    progress.note(error.message);
    if (unwritten?.code === 'EPIPE') {
      progress.note('stdout closed: the error document was not written');
      return EXIT.pipe;
    }
    return code;
  };

  // The doctor's deadline, a moment before the CLI's own end, so that the report it returns at its
  // deadline is printed. Its connect bound is at most this (less SDK v2's version probe, a part of it).
  const doctorTimeoutMs = runDeadline === undefined ? undefined : Math.max(1, runDeadline.left() - PRINT_MS);
  const connectStartedAt = Date.now();
  /**
   * True when the bound that ended connecting without an answer was --timeout's: the doctor's
   * deadline was the shorter bound, and the handshake was given up no sooner than the share of it
   * its first wait gets. --connect-timeout is then not to blame.
   */
  const connectCutByTimeout = (error: TaskConnectError): boolean =>
    error.reason === 'no-answer' &&
    doctorTimeoutMs !== undefined &&
    doctorTimeoutMs <= (settings.connectTimeoutMs ?? MAX_TIMER_MS) &&
    Date.now() - connectStartedAt >= doctorTimeoutMs * CONNECT_PROBE_SHARE;

  interrupts.enable();
  try {
    const running = runDoctor(target.factory, {
      ...settings,
      tool: settings.tool ?? defaults?.tool,
      failTool: settings.failTool ?? defaults?.failTool,
      inputTool: settings.inputTool ?? defaults?.inputTool,
      ...(doctorTimeoutMs === undefined ? {} : { timeoutMs: doctorTimeoutMs }),
      signal: stop.signal,
      onProgress: ({ wire, probe }) => {
        probing = true;
        progress.show(`probing ${wire}: ${probe}`);
      },
    }).then(
      (report): { report: DoctorReport } => ({ report }),
      (error: unknown): { error: unknown } => ({ error }),
    );
    progress.show(`connecting to ${target.where}`);
    const outcome = await Promise.race([running, left.then((leaving) => ({ left: leaving }))]);
    // Left without waiting: the same error document as any other run without a report.
    if ('left' in outcome)
      return await fail({ name: outcome.left.name, message: outcome.left.message }, outcome.left.code);
    if ('error' in outcome) {
      const error = outcome.error;
      if (error instanceof TaskAbortError && stop.signal.aborted) {
        const reason: unknown = stop.signal.reason;
        const timedOut = reason instanceof DoctorTimeout;
        const code = timedOut ? EXIT.timeout : interrupts.exitCode;
        const why = timedOut ? reason.message : interrupts.label;
        // The library's message says what became of the tasks it started (a server without
        // tasks.cancel leaves them running).
        const account = /^The doctor was stopped; (.+)$/s.exec(error.message)?.[1];
        const what = probing
          ? `the doctor stopped; ${account ?? 'what became of the tasks it started is unknown'}`
          : undefined;
        const message = what === undefined ? `${why}: ${stoppedConnecting()}` : `${why}: ${what}; no report`;
        return await fail({ name: timedOut ? 'TimeoutError' : 'Interrupted', message }, code);
      }
      // The handshake ran out of the time --timeout left it: --timeout ended the run, not --connect-timeout.
      // Past the doctor's deadline it reads as the CLI's own stop while connecting; before it (SDK
      // v2's version probe, which gets a part of the time), as the handshake's share running out.
      if (error instanceof TaskConnectError && connectCutByTimeout(error)) {
        const passed = Date.now() - connectStartedAt >= (doctorTimeoutMs ?? 0);
        const message = passed
          ? `${timedOut}: ${stoppedConnecting()}`
          : `--timeout ${options.timeout ?? ''} ended connecting: ${target.where} had not answered the handshake in the time it left; no task was started; no report`;
        return await fail({ name: 'TimeoutError', message }, EXIT.timeout);
      }
      if (error instanceof TaskConnectError) {
        const code = await fail(
          { name: 'ConnectError', reason: error.reason, message: connectFailure(error, target) },
          EXIT.failed,
        );
        if (serverStderr.trim() !== '') progress.note(`the server's stderr ended with:\n${serverStderr.trimEnd()}`);
        return code;
      }
      if (error instanceof TaskOptionError) throw new UsageError(describeError(error));
      return await fail(
        { name: error instanceof Error ? error.name : 'Error', message: describeError(error) },
        EXIT.failed,
      );
    }
    const report = outcome.report;
    progress.clear();
    const unwritten = await writeReport(
      json
        ? reportDocument(report)
        : reportTable(report, { width: tableWidth(io), color: io.stdout.isTTY === true && !noColor(io) }),
    );
    // Stdout closed by its reader (`| head -c0`): exit 141, as the other commands. Nothing is written
    // to stdout before the report, so the doctor cannot see it sooner: every probe has run.
    if (unwritten !== undefined) {
      if (unwritten.code !== 'EPIPE') {
        progress.note(`cannot write the report: ${unwritten.message}`);
        return EXIT.failed;
      }
      progress.note('stdout closed: the report was not written (a closed stdout shows only once the probes are done)');
      return EXIT.pipe;
    }
    // The deadline cut checks short: the report says which, and the exit code that --timeout passed.
    const cut = report.cutShort?.length ?? 0;
    if (cut > 0) {
      progress.note(
        `${timedOut}: ${cut} check${cut === 1 ? ' was' : 's were'} cut short (not testable, the report says which); ${stoppedTasks(report)}`,
      );
      return EXIT.timeout;
    }
    return exitCode(report);
  } finally {
    clearTimeout(deadline);
    clearTimeout(end);
    clearTimeout(grace);
    progress.clear();
    interrupts.disable();
    await target.close().catch(() => {});
  }
}
