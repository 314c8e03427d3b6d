/**
 * `runDoctor`: opens the target's sessions, runs the battery on every wire the server offers, and
 * returns the report. Each probe is bounded; every task the doctor started is cancelled or has
 * ended before it returns (or the report says why one could not be stopped); sessions the doctor
 * opened are closed, a caller's client is left open.
 */
import { TaskAbortError, TaskOptionError } from '../errors.js';
import { offersExtension, TASKS_EXTENSION } from '../wire/resolve.js';
import { runProbe, settle, type Battery, type Resolved } from './battery.js';
import { checkIds } from './checks.js';
import { cancelExt, EXT_CANCEL_CHECKS, EXT_FAILURE_CHECKS, failureExt } from './ext/cancel.js';
import { EXT_LIFECYCLE_CHECKS, lifecycleExt } from './ext/lifecycle.js';
import { EXPIRY_CHECKS, expiryProbe } from './expiry.js';
import { INPUT_CHECKS, inputProbe } from './input.js';
import { RowSink } from './rows.js';
import { ProbeStopped } from './reply.js';
import { Session, type Settings } from './session.js';
import { isObject, nameText, reportable } from './shape.js';
import { TaskLedger } from './tasks.js';
import { RunBound } from './deadline.js';
import { openSessions, type Opened, type Opening } from './target.js';
import { firstTaskTool, listTools, notATaskTool, notListed, resolveChoice, type Listing } from './tools.js';
import type {
  DoctorOptions,
  DoctorReport,
  DoctorRow,
  DoctorTarget,
  DoctorWire,
  TaskAccount,
  ToolChoice,
  WireSection,
} from './types.js';
import { CANCEL_CHECKS, cancel2025, UNKNOWN_CHECKS, unknownIds } from './v2025/cancel.js';
import { FAILURE_CHECKS, failure2025 } from './v2025/failure.js';
import { LIFECYCLE_CHECKS, lifecycle2025 } from './v2025/lifecycle.js';
import { LIST_CHECKS, list2025 } from './v2025/list.js';
import { checkOffer } from './v2025/offer.js';

/** One probe: its name, its checks, and what it runs. */
type Probe = readonly [name: string, checks: readonly string[], run: (b: Battery) => Promise<void>];

const BATTERY: Record<DoctorWire, readonly Probe[]> = {
  '2025-11-25': [
    ['lifecycle', LIFECYCLE_CHECKS, lifecycle2025],
    ['cancel', CANCEL_CHECKS, cancel2025],
    ['unknown ids', UNKNOWN_CHECKS, unknownIds],
    ['list', LIST_CHECKS, list2025],
    ['failure', FAILURE_CHECKS, failure2025],
    ['input', INPUT_CHECKS['2025-11-25'], inputProbe],
    ['expiry', EXPIRY_CHECKS, expiryProbe],
  ],
  'io.modelcontextprotocol/tasks': [
    ['lifecycle', EXT_LIFECYCLE_CHECKS, lifecycleExt],
    ['cancel', EXT_CANCEL_CHECKS, cancelExt],
    ['unknown ids', UNKNOWN_CHECKS, unknownIds],
    ['failure', EXT_FAILURE_CHECKS, failureExt],
    ['input', INPUT_CHECKS['io.modelcontextprotocol/tasks'], inputProbe],
    ['expiry', EXPIRY_CHECKS, expiryProbe],
  ],
};

/** A positive number option, or its default. */
function positive(options: DoctorOptions, name: keyof DoctorOptions, fallback: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TaskOptionError(`Option "${name}" must be a positive number of ms`, { option: name });
  }
  return value;
}

/** The resolved bounds. */
function settingsOf(options: DoctorOptions): Settings & { readonly connectTimeoutMs: number } {
  return {
    probeTimeoutMs: positive(options, 'probeTimeoutMs', 60_000),
    requestTimeoutMs: positive(options, 'requestTimeoutMs', 10_000),
    connectTimeoutMs: positive(options, 'connectTimeoutMs', 15_000),
    expiryBudgetMs: positive(options, 'expiryBudgetMs', 20_000),
    noAnswerMs: positive(options, 'noAnswerMs', 2_000),
    retentionCheckMs: positive(options, 'retentionCheckMs', 1_000),
  };
}

/**
 * Probes a task server and reports, check by check, where it departs from the task specs and how
 * mcp-task-client copes. The doctor calls tools (the one it finds or is given, and the optional
 * failing and input tools), so run it against a server where calling them is harmless. Every
 * question a tool asks is declined.
 * @throws TaskConnectError when the target cannot be reached or does not speak MCP; TaskOptionError
 *   for an invalid target or option; TaskAbortError when `options.signal` stops the run (at once
 *   while connecting, with what was opened closed; later once the tasks it started were cancelled,
 *   where the server can cancel them: the message says what became of them).
 */
export async function runDoctor(target: DoctorTarget, options: DoctorOptions = {}): Promise<DoctorReport> {
  let settings = settingsOf(options);
  if (options.sdk !== undefined && options.sdk !== 'v1' && options.sdk !== 'v2')
    throw new TaskOptionError("Option \"sdk\" must be 'v1' or 'v2'", { option: 'sdk' });
  const signal = options.signal ?? new AbortController().signal;
  if (signal.aborted) throw new TaskAbortError('The doctor was stopped before it started', { reason: signal.reason });
  const startedAt = Date.now();
  const deadline =
    options.timeoutMs === undefined ? undefined : new RunBound(positive(options, 'timeoutMs', 0), startedAt);
  settings = { ...settings, deadline };
  let opening: Opening;
  try {
    opening = await openSessions(target, {
      sdk: options.sdk,
      clientInfo: options.clientInfo ?? { name: 'mcp-task-doctor', version: '0.1.0' },
      connectTimeoutMs: Math.min(settings.connectTimeoutMs, deadline?.timeoutMs ?? Infinity),
      signal,
    });
  } catch (error) {
    // Stopped while connecting: what was opened is closed already, and no task was started.
    if (signal.aborted)
      throw new TaskAbortError('The doctor was stopped while connecting; no task was started', {
        reason: signal.reason,
        cause: error,
      });
    throw error;
  }
  // Read now: a closed SDK v2 client forgets what the server said of itself.
  const identity = opening.sessions
    .map((session) => session.port.serverIdentity())
    .find((found) => found !== undefined);
  const ledger = new TaskLedger();
  /** The sessions probed: done with once their ports are closed (or left to the caller). */
  const probed: Session[] = [];
  const sections: WireSection[] = [];
  const rows: DoctorRow[] = [];
  const lost: DoctorWire[] = [];
  try {
    for (const [wire, era] of [
      ['2025-11-25', 'legacy'],
      ['io.modelcontextprotocol/tasks', 'modern'],
    ] as const) {
      const opened = opening.sessions.find((session) => session.era === era);
      const done =
        opened === undefined
          ? notProbed(wire, opening.notes[era] ?? 'no session of this era')
          : deadline?.passed() === true
            ? cutWire(wire, deadline)
            : await probeWire(wire, opened, settings, ledger, signal, options, probed);
      // Closed before the doctor closed it: the server went away mid-run.
      if (opened?.port.closed === true) lost.push(wire);
      sections.push(done.section);
      rows.push(...done.rows);
    }
  } catch (error) {
    if (signal.aborted)
      throw new TaskAbortError(`The doctor was stopped; ${stoppedAccount(ledger.account())}`, {
        reason: signal.reason,
        cause: error,
      });
    throw error;
  } finally {
    // Within the run's deadline: a session still closing at its end is left to close on its own.
    await untilEnd(Promise.all(opening.sessions.map((session) => session.close())), deadline);
    // Closed first: a call still open on a port the doctor opened ends with it. On a caller's client
    // it stays open, never cancelled with notifications/cancelled ([R24]: it may create a task), and
    // a task that comes later is left alone.
    for (const s of probed) s.late.end();
  }
  const mustViolations = rows.filter((row) => row.verdict === 'deviation' && row.severity === 'MUST').length;
  return {
    reportVersion: 1,
    server: identity === undefined ? undefined : { name: identity.name, version: identity.version },
    startedAt: new Date(startedAt).toISOString(),
    durationMs: Date.now() - startedAt,
    wires: sections,
    rows,
    tasks: ledger.account(),
    summary: {
      ok: rows.filter((row) => row.verdict === 'ok').length,
      deviations: rows.filter((row) => row.verdict === 'deviation').length,
      mustViolations,
      notTestable: rows.filter((row) => row.verdict === 'not-testable').length,
    },
    cutShort: deadline === undefined ? [] : [...deadline.cutShort],
    connectionLost: lost,
  };
}

/** `work`, or less: it is no longer waited for once the run's deadline has passed. */
async function untilEnd(work: Promise<unknown>, deadline: RunBound | undefined): Promise<void> {
  if (deadline === undefined) {
    await work;
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline.left())));
  try {
    await Promise.race([work.then(() => undefined), end]);
  } finally {
    clearTimeout(timer);
  }
}

/** A wire the run's deadline left no time for: every check of it is cut short. */
function cutWire(wire: DoctorWire, deadline: RunBound): { section: WireSection; rows: DoctorRow[] } {
  const sink = new RowSink(wire);
  deadline.cut(sink, checkIds(wire));
  const note = "not probed: the run's deadline had passed";
  return {
    section: { wire, offered: false, sdk: undefined, protocolVersion: undefined, tool: undefined, note },
    rows: order(wire, sink.rows),
  };
}

/** What became of the tasks of a stopped run, in words (the ledger's account: a server without `tasks.cancel` leaves them running). */
function stoppedAccount(account: TaskAccount): string {
  const { started, cancelled, finished, leftRunning } = account;
  if (started === 0) return 'it had started no task';
  const notes = leftRunning > 0 && account.notes.length > 0 ? ` (${account.notes.join('; ')})` : '';
  const all = started === 1 ? 'the task it started was' : `the ${started} tasks it started were`;
  if (cancelled === started) return `${all} cancelled`;
  if (finished === started) return `${all} ended on ${started === 1 ? 'its' : 'their'} own`;
  if (leftRunning === started) return `${all} left running${notes}`;
  const parts: string[] = [];
  if (cancelled > 0) parts.push(`${cancelled} cancelled`);
  if (finished > 0) parts.push(`${finished} ended on their own`);
  if (leftRunning > 0) parts.push(`${leftRunning} left running${notes}`);
  return `of the ${started} tasks it started, ${parts.join(', ')}`;
}

/** A wire no session was opened for. */
function notProbed(wire: DoctorWire, note: string): { section: WireSection; rows: DoctorRow[] } {
  const sink = new RowSink(wire);
  sink.untestable('offer', note);
  return {
    section: { wire, offered: false, sdk: undefined, protocolVersion: undefined, tool: undefined, note },
    rows: sink.rows,
  };
}

/** The battery of one wire on its session. */
async function probeWire(
  wire: DoctorWire,
  opened: Opened,
  settings: Settings,
  ledger: TaskLedger,
  signal: AbortSignal,
  options: DoctorOptions,
  probed: Session[],
): Promise<{ section: WireSection; rows: DoctorRow[] }> {
  const { port } = opened;
  const sink = new RowSink(wire, () => ledger.ids());
  const s = new Session(port, wire, settings, ledger, signal);
  probed.push(s);
  const section = (offered: boolean, tool: string | undefined, note: string): WireSection => ({
    wire,
    offered,
    sdk: opened.sdk,
    protocolVersion: port.protocolVersion(),
    tool,
    // The note may quote the server (a tool's made-up arguments, a listing's error).
    note: reportable(note, ledger.ids()),
  });
  let canCancel = false;
  try {
    const listed = await listTools(s);
    s.knowTools(listed.tools);
    let offer: { offered: boolean; canCancel: boolean; canList: boolean; why: string };
    if (wire === '2025-11-25') {
      offer = checkOffer(port.serverCapabilities(), listed.tools, sink, options.tool !== undefined);
    } else {
      const offered = offersExtension(port);
      const settingsObject = port.serverCapabilities()?.extensions;
      const value = isObject(settingsObject) ? settingsObject[TASKS_EXTENSION] : undefined;
      if (offered)
        sink.ok('offer', `capabilities.extensions lists io.modelcontextprotocol/tasks (${JSON.stringify(value)})`);
      else sink.untestable('offer', 'the 2026-07-28 session lists no io.modelcontextprotocol/tasks extension');
      offer = { offered, canCancel: offered, canList: false, why: offered ? '' : 'the extension is not offered' };
    }
    if (!offer.offered) return { section: section(false, undefined, offer.why), rows: sink.rows };
    canCancel = offer.canCancel;
    const choice = pickTool(wire, options, listed);
    if (typeof choice === 'string') {
      for (const [, checks] of BATTERY[wire]) sink.rest(checks, choice);
      return { section: section(true, undefined, choice), rows: sink.rows };
    }
    const declared = port.clientCapabilities();
    /** A named tool the probe of `checks` may call, or `undefined` (its rows then say why). */
    const usable = (
      choice: ToolChoice | undefined,
      checks: readonly string[],
      option: string,
    ): Resolved | undefined => {
      if (choice === undefined) return undefined;
      const why =
        notListed(choice.name, listed, option) ??
        (wire === '2025-11-25' ? notATaskTool(choice.name, listed) : undefined);
      if (why === undefined) return resolveChoice(choice, listed.tools);
      sink.rest(checks, why);
      return undefined;
    };
    const b: Battery = {
      s,
      rows: sink,
      tool: choice.tool,
      failTool: usable(options.failTool, wire === '2025-11-25' ? FAILURE_CHECKS : EXT_FAILURE_CHECKS, 'failTool'),
      inputTool: usable(options.inputTool, INPUT_CHECKS[wire], 'inputTool'),
      canCancel: offer.canCancel,
      canList: offer.canList,
      canAnswer: declared.elicitation !== undefined || declared.sampling !== undefined,
      until: 0,
      toolMs: undefined,
      mainTask: undefined,
      onProgress: options.onProgress,
    };
    for (const [name, checks, run] of BATTERY[wire]) await runProbe(b, name, checks, () => run(b), signal);
    return { section: section(true, choice.tool.name, choice.note), rows: order(wire, sink.rows) };
  } catch (error) {
    if (error instanceof ProbeStopped && signal.aborted) {
      // Stopped: cancel what runs before reporting the stop (with the clean-up's own bound).
      await settle(s, canCancel, new AbortController().signal).catch(() => {});
    }
    throw error;
  } finally {
    s.dispose();
    // The battery's clean-ups are over: a task that comes late from now on (the reply to a call the
    // doctor gave up on) is cleaned up at once, while the session is open, holding nothing up.
    s.late.cleanWith((life) => settle(s, canCancel, life, true));
  }
}

/**
 * The battery's tool: the caller's, or the first that declares task support (2025). A named tool
 * the server does not list is not called: the reason takes the battery's place.
 */
function pickTool(
  wire: DoctorWire,
  options: DoctorOptions,
  listing: Listing,
): { tool: Resolved; note: string } | string {
  const { tools } = listing;
  if (options.tool !== undefined) {
    const why =
      notListed(options.tool.name, listing, 'tool') ??
      (wire === '2025-11-25' ? notATaskTool(options.tool.name, listing) : undefined);
    if (why !== undefined) return why;
    return { tool: resolveChoice(options.tool, tools), note: `tool ${nameText(options.tool.name)}, as named` };
  }
  if (wire === 'io.modelcontextprotocol/tasks')
    return 'on the extension the server decides which calls become tasks: name a tool it runs as a task (tool option)';
  const found = firstTaskTool(tools);
  if (found === undefined) return listing.error ?? 'no tool declares task support: name one (tool option)';
  const tool = resolveChoice({ name: found.name }, tools);
  return {
    tool,
    note: `tool ${nameText(found.name)} (the first that declares task support), called with ${JSON.stringify(tool.arguments)}`,
  };
}

/** Rows in catalogue order. */
function order(wire: DoctorWire, rows: readonly DoctorRow[]): DoctorRow[] {
  const ids = checkIds(wire);
  return [...rows].sort((a, b) => ids.indexOf(a.check) - ids.indexOf(b.check));
}
