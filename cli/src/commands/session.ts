/**
 * What every command shares: the common options, the output mode (terminal or JSON lines), the
 * answers, Ctrl-C reading and the connected target, set up and torn down around the command. The
 * options and the context a command is given are declared in session-context.ts, the process
 * streams in io.ts.
 */
import type { TaskHandle } from 'mcp-task-client';
import { MAX_TIMER_MS, UsageError, parseDuration, parseHeaders, parseWire } from '../args.js';
import { AnswerQueue, loadAnswers, readAll } from '../answers.js';
import { EXIT, describeError, outcomeOf } from '../exit.js';
import { writeOut } from '../flush.js';
import { readsKeys } from '../foreground.js';
import { inputCallbacks } from '../input.js';
import { defaultIo, type Io } from '../io.js';
import { Interrupts } from '../interrupt.js';
import { ServerLoss } from '../loss.js';
import { removeReference, temporaryReferencePath, writeReference } from '../ref-file.js';
import { HumanReporter, JsonReporter, type Reporter } from '../reporter.js';
import { RunDeadline } from '../run-deadline.js';
import type { CommonOptions, Session, SessionExtra } from '../session-context.js';
import {
  CLOSE_WAIT_MS,
  CONNECT_TIMEOUT_MS,
  ConnectError,
  WireUnavailableError,
  openTarget,
  preloadTarget,
  type Target,
} from '../target.js';

export type { CommonOptions, Session, SessionExtra } from '../session-context.js';
export type { Io } from '../io.js';

/** Stdin read to its end, for `--answers -`; a failure is a usage error, as an unreadable file is. */
async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  try {
    return await readAll(stdin);
  } catch (error) {
    throw new UsageError(`--answers: cannot read stdin: ${(error as Error).message}`);
  }
}

/** How long connecting may take before the terminal says what it waits for. */
const CONNECTING_NOTE_MS = 300;

/** `--timeout` passed before the connection was made (exit 124). */
export class ConnectTimeoutError extends Error {
  override readonly name = 'ConnectTimeoutError';
}

/** Ctrl-C, SIGTERM or a closed stdout before the connection was made (exit 130, 143, 141). */
class ConnectInterrupted extends Error {
  override readonly name = 'Interrupted';
}

/**
 * Runs `body` with a connected target; returns its exit code. Connection failures exit 1,
 * usage errors 2, `--timeout` passing while connecting 124 (both connection failures print a
 * `result` line when `extra.resultLine` is set, else a note). After a second Ctrl-C nothing is
 * awaited: a stdio server is killed. Stdout closed by its reader (EPIPE) counts as an
 * interruption (exit 141); so does SIGTERM (exit 143).
 */
export async function runSession(
  options: CommonOptions,
  body: (session: Session) => Promise<number>,
  extra: SessionExtra = {},
  io: Io = defaultIo(),
): Promise<number> {
  const wire = parseWire(options.wire);
  const json = options.json === true || io.stdout.isTTY !== true;
  const quiet = options.quiet === true;
  const stdin = options.answers === '-' ? await readStdin(io.stdin) : undefined;
  const answers = new AnswerQueue(loadAnswers(options.answer ?? [], options.answers, stdin));
  // A timer waits out `--timeout`: longer than the timers honour is refused rather than run short.
  const timeoutMs =
    options.timeout === undefined ? undefined : parseDuration(options.timeout, '--timeout', MAX_TIMER_MS, false);
  // A ttl of 0 would let the server delete the task as soon as it is made.
  const ttlMs =
    options.ttl === undefined ? undefined : parseDuration(options.ttl, '--ttl', Number.MAX_SAFE_INTEGER, false);
  const headers = parseHeaders(options.header ?? []);
  const connectTimeoutMs =
    options.connectTimeout === undefined
      ? CONNECT_TIMEOUT_MS
      : parseDuration(options.connectTimeout, '--connect-timeout', MAX_TIMER_MS);
  const startedAt = extra.startedAt ?? Date.now();
  // Keys (Ctrl-C, the answers to forms) are read from a terminal this process has the foreground
  // of, and not once `--answers -` read it to its end: questions left are then declined.
  const keys = stdin === undefined && readsKeys(io.stdin);
  const reporter: Reporter = json
    ? new JsonReporter(io, quiet)
    : new HumanReporter(io, {
        color: io.env.NO_COLOR === undefined || io.env.NO_COLOR === '',
        quiet,
        interactive: keys,
        startedAt,
      });
  const interrupts = new Interrupts(io.stdin, keys);
  // A reader that went away (`| head -1`): stop like an interruption, without a stack trace. The
  // listeners stay: later writes to the closed pipe fail too, and are dropped. Once the command's
  // output is all written, its delivery is checked where the command ends instead.
  let outputDone = false;
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' && interrupts.cause !== 'pipe' && !outputDone) interrupts.press('pipe');
  });
  io.stderr.on('error', () => {});
  const asked = new Map<string, number>();
  const callbacks = inputCallbacks({
    answers,
    asked: (taskId) => {
      if (taskId !== undefined) asked.set(taskId, (asked.get(taskId) ?? 0) + 1);
    },
    reporter: () => reporter,
    interruptions: () => interrupts.presses,
    prompt: async (run) => {
      try {
        return await reporter.prompt(run);
      } finally {
        interrupts.rearm();
      }
    },
  });
  const saved = extra.saved;
  // An explicit `--stdio` says where the task is: the reference's URL and HTTP session are not used.
  const savedUrl = options.stdio === undefined ? saved?.url : undefined;
  const savedSessionId = options.stdio === undefined ? saved?.reference.sessionId : undefined;
  // The modules a connection needs are loaded first: loading them is not the server's time.
  await preloadTarget({
    stdio: options.stdio,
    url: options.url ?? savedUrl,
    sessionId: options.session ?? savedSessionId,
    wire,
  });
  const url = options.url ?? savedUrl;
  const where =
    url ?? (options.stdio === undefined ? 'the bundled example server' : `the stdio server \`${options.stdio}\``);
  // `--timeout` bounds the whole run from here, connecting included: the deadline of the task, of
  // its remote cancel and of the shutdown.
  const deadline = timeoutMs === undefined ? undefined : new RunDeadline(timeoutMs, Date.now());
  const connectDeadline = new AbortController();
  const connectTimer =
    deadline === undefined
      ? undefined
      : setTimeout(
          () =>
            connectDeadline.abort(
              new ConnectTimeoutError(
                `--timeout ${options.timeout ?? ''} passed while connecting to ${where}; gave up`,
              ),
            ),
          deadline.left(),
        );
  // Ctrl-C (SIGINT, SIGTERM, a closed stdout) while connecting gives the connection up: the
  // connector closes the transport and kills a stdio server it started.
  interrupts.onPress(() => {
    connectDeadline.abort(
      new ConnectInterrupted(`${interrupts.label} while connecting to ${where}: gave up connecting`),
    );
  });
  interrupts.enable();
  // On a terminal, say what is being waited for when connecting takes a moment (a server that
  // starts slowly, or a command that does not speak MCP: the connect timeout ends that).
  const connecting =
    io.stderr.isTTY === true && (options.stdio !== undefined || url !== undefined)
      ? setTimeout(() => reporter.note(`connecting to ${where}…`), CONNECTING_NOTE_MS)
      : undefined;
  /** Whether a stdio server started for a connection that failed was stopped (it exited). */
  let serverExited: boolean | undefined;
  let target: Target;
  try {
    target = await openTarget(
      {
        stdio: options.stdio,
        url,
        headers,
        sessionId: options.session ?? savedSessionId,
        onServerStderr: (text) => reporter.note(`server: ${text.trimEnd()}`),
        wire,
        signal: connectDeadline.signal,
        connectTimeoutMs,
        onServerStopped: (exited) => (serverExited = exited),
      },
      // The remote cancel at the deadline fits in the reserve `--timeout` keeps for it.
      { ...callbacks, ...(deadline === undefined ? {} : { cancelGraceMs: deadline.cancelGraceMs }) },
    );
  } catch (error) {
    interrupts.disable();
    if (error instanceof UsageError) throw error;
    // The ways of failing to connect end the same way: a `result` line for the commands that end
    // with one (`outcome` "timeout", exit 124, "interrupted", exit 130 (143, 141), or "error",
    // exit 1), else a note on stderr.
    const timedOut = error instanceof ConnectTimeoutError;
    const interrupted = error instanceof ConnectInterrupted;
    const exitCode = timedOut ? EXIT.timeout : interrupted ? interrupts.exitCode : EXIT.failed;
    const stopped =
      !interrupted || serverExited === undefined
        ? ''
        : serverExited
          ? ' (the server it started was stopped)'
          : ' (the server it started was killed but had not exited yet)';
    const message =
      timedOut || interrupted || error instanceof WireUnavailableError || error instanceof ConnectError
        ? `${describeError(error)}${stopped}`
        : `cannot connect: ${describeError(error)}`;
    if (extra.resultLine === true) {
      const name = error instanceof Error ? error.name : 'Error';
      const outcome = timedOut ? 'timeout' : interrupted ? 'interrupted' : 'error';
      reporter.end({ outcome, exitCode, error: { name, message } });
    } else {
      reporter.note(message);
    }
    reporter.close();
    return exitCode;
  } finally {
    clearTimeout(connectTimer);
    clearTimeout(connecting);
  }

  const written = new Map<string, string>();
  /** Files this process wrote on its own (not `--save-ref`'s), by task id. */
  const temporary = new Map<string, string>();
  const saveReference = (handle: TaskHandle, file?: string): string | undefined => {
    const reference = handle.toJSON();
    if (reference === undefined) return undefined;
    const path = file ?? written.get(reference.taskId) ?? temporaryReferencePath();
    if (written.get(reference.taskId) !== path) {
      const own = file === undefined;
      writeReference(
        path,
        { v: 2, reference, url: target.url, ...(own ? { temporary: true as const } : {}) },
        { exclusive: own },
      );
      written.set(reference.taskId, path);
      if (own) temporary.set(reference.taskId, path);
    }
    return path;
  };
  let abandoning = false;
  // Closed once: closing an embedded target twice would close its server twice.
  let closing: Promise<void> | undefined;
  const closeTarget = (): Promise<void> => (closing ??= target.close());
  /**
   * Closes the target in order, but not past `--timeout`: `closed` once closed, `late` when the
   * deadline passed first (the caller then leaves without waiting more).
   */
  const closeWithin = async (): Promise<'closed' | 'late'> => {
    const expiry = deadline?.expiry();
    try {
      return await Promise.race([
        closeTarget().then(
          () => 'closed' as const,
          () => 'closed' as const,
        ),
        ...(expiry === undefined ? [] : [expiry.passed.then(() => 'late' as const)]),
      ]);
    } finally {
      expiry?.clear();
    }
  };
  const closeWaitMs = (): number => deadline?.bound(CLOSE_WAIT_MS) ?? CLOSE_WAIT_MS;
  // The server went away outside of following a task: the command ends (exit 1).
  let lostBeforeFollowing: (why: string) => void = () => {};
  const lostOutside = new Promise<string>((resolve) => (lostBeforeFollowing = resolve));
  const loss = new ServerLoss((why) => lostBeforeFollowing(why));
  target.watchLoss((why, sessionGone) => loss.lose(why, sessionGone));
  const session: Session = {
    target,
    reporter,
    interrupts,
    timeoutMs: deadline?.taskMs(),
    deadline,
    timeout: options.timeout,
    ttlMs,
    saveReference,
    watchCommand: (handle) => {
      // `watch --ref FILE` already has a reference file to point to.
      let file = options.ref;
      if (file === undefined) {
        try {
          file = saveReference(handle, options.saveRef);
        } catch {
          // `--save-ref`'s file could not be written (call said so): point to a temporary one.
          try {
            file = saveReference(handle);
          } catch (error) {
            reporter.note(`cannot save a reference file: ${describeError(error)}`);
            return undefined;
          }
        }
      }
      if (file === undefined) return undefined;
      const auth = Object.keys(headers).length > 0 ? ' (plus your --header options)' : '';
      return `mcp-task watch --ref ${file}${auth}`;
    },
    taskEnded: (handle) => {
      const taskId = handle.taskId;
      if (taskId === undefined) return;
      const own = temporary.get(taskId);
      if (own !== undefined) {
        removeReference(own);
        temporary.delete(taskId);
        written.delete(taskId);
      }
      // A file another mcp-task process wrote on its own to say how to follow this task.
      if (options.ref !== undefined && saved?.temporary === true && saved.reference.taskId === taskId)
        removeReference(options.ref);
    },
    inputSeen: (taskId) => asked.get(taskId) ?? 0,
    loss,
    leaveNow: () => {
      abandoning = true;
    },
    closeAfterAbandon: async () => {
      // A second Ctrl-C came while the call was being given up: leave at once, as promised.
      if (interrupts.presses >= 2) {
        abandoning = true;
        return 'left';
      }
      // A bound shorter than the library's closeTimeoutMs (target-connect.ts), started no later than
      // its own: when the answer has not come by then, this wait ends first, and the library gives
      // its own up soon after. `--timeout` ends it sooner. `closeTarget()` settling first is the answer.
      const waitMs = closeWaitMs();
      let timer: NodeJS.Timeout | undefined;
      let leave: () => void = () => {};
      const restoreKeys = interrupts.onPress(() => leave());
      try {
        const ending = await Promise.race([
          closeTarget().then(
            () => 'answered' as const,
            () => 'late' as const,
          ),
          new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs))),
          new Promise<'left'>((resolve) => (leave = () => resolve('left'))),
        ]);
        if (ending !== 'answered') abandoning = true;
        return ending;
      } finally {
        clearTimeout(timer);
        restoreKeys();
      }
    },
    closeWaitMs,
  };

  /**
   * Leaves at once after `note`: nothing more is written, and the process exits once a stdio
   * server the target started is stopped (at most the SIGTERM and SIGKILL waits).
   */
  const leaveAtOnce = (note: string): void => {
    interrupts.disable();
    abandoning = true;
    reporter.note(note);
    reporter.close();
    io.stdout.cork();
    io.stderr.cork();
    void target.abandon().then(() => process.exit(interrupts.exitCode));
  };
  // Outside of following a task, Ctrl-C just leaves, saying so.
  interrupts.onPress(() => {
    const unconfirmed = extra.unconfirmed === undefined ? '' : `; ${extra.unconfirmed}`;
    leaveAtOnce(`${interrupts.label}: left before the command finished${unconfirmed}`);
  });
  interrupts.enable();
  // A one-shot command gets the connect timeout to do its work: a server that stops answering
  // (a stdio server that hangs, say) cannot keep it forever.
  let oneShotTimer: NodeJS.Timeout | undefined;
  if (extra.oneShot === true && connectTimeoutMs > 0) {
    oneShotTimer = setTimeout(() => {
      const given = options.connectTimeout ?? `${CONNECT_TIMEOUT_MS / 1000}s`;
      loss.lose(`${target.where} did not answer within --connect-timeout ${given}; gave up`);
    }, connectTimeoutMs);
  }
  try {
    const ending = await Promise.race([body(session).then((code) => ({ code })), lostOutside.then((why) => ({ why }))]);
    if ('code' in ending) {
      outputDone = true;
      // The last line (the `result` line, all that `-q` writes) may have met a reader gone
      // meanwhile (`| head -c0`) with no sign of it yet: a closed stdout is exit 141, as the doctor's.
      const unwritten = await writeOut(io.stdout, '');
      if (unwritten?.code !== 'EPIPE' || interrupts.presses > 0) return ending.code;
      reporter.note('stdout closed: the output was not all delivered');
      return EXIT.pipe;
    }
    abandoning = true;
    const message = ending.why;
    // Lost after an interruption (a SIGINT sent to the whole process group stops a stdio server
    // too): the user's interruption is how the run ended.
    const interrupted = interrupts.presses > 0;
    const exitCode = interrupted ? interrupts.exitCode : EXIT.failed;
    if (extra.resultLine === true)
      reporter.end({
        outcome: interrupted ? 'interrupted' : 'error',
        exitCode,
        wire: target.wire,
        error: { name: interrupted ? 'Interrupted' : 'ServerLostError', message },
      });
    else reporter.note(message);
    return exitCode;
  } catch (error) {
    reporter.note(describeError(error));
    return outcomeOf(error).exitCode;
  } finally {
    clearTimeout(oneShotTimer);
    reporter.close();
    if (interrupts.presses >= 2 || abandoning) {
      interrupts.disable();
      await target.abandon();
    } else {
      // Closing may take a while (a stdio server slow to exit): a Ctrl-C meanwhile leaves at once.
      // A call given up before its answer was waited for already (closeAfterAbandon): nothing is
      // left that a task could come of, so the note names none (`tools` and the like make none).
      interrupts.onPress(() => leaveAtOnce(`${interrupts.label}: leaving without waiting for the connection to close`));
      // `--timeout` bounds closing too: past it, a stdio server still closing is stopped.
      if ((await closeWithin()) === 'late') await target.abandon();
      interrupts.disable();
    }
  }
}
