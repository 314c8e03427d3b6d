/**
 * The doctor's public data: what it is given (a target and options) and what it returns (a
 * report of rows, one per check). Plain data throughout, so that the JSON form is the report
 * itself and a renderer (the terminal table, a web page) only reads it.
 */
import type { McpClient, McpTransport } from '../types.js';

/** The task wires the doctor knows (the same names as `TaskHandle.wire`). */
export type DoctorWire = '2025-11-25' | 'io.modelcontextprotocol/tasks';

/** What a check found. */
export type Verdict =
  /** The server does what the rule says. */
  | 'ok'
  /**
   * The server departs from the rule. On a MUST row this is a violation; on a SHOULD row a
   * discouraged choice; on a MAY row the server leaves out an optional behaviour that helps
   * clients (the row says what that costs).
   */
  | 'deviation'
  /** The check could not run (the row says why: a tool is missing, an earlier step failed, a wait too long). */
  | 'not-testable';

/** The strength of the rule a check reads, as the spec words it. */
export type Severity = 'MUST' | 'SHOULD' | 'MAY';

/** How mcp-task-client copes with what a check saw. */
export interface Coping {
  /** The server difference the behaviour matches (a `D` id of docs/spec-rules.md, such as `D6` or `D19`), when it is a known one. */
  readonly quirk?: string | undefined;
  /** What the library does about it, in a sentence. */
  readonly does: string;
  /** False when the library cannot make up for it (a result the server loses is lost). */
  readonly handled: boolean;
}

/** One check of one wire. */
export interface DoctorRow {
  /** Stable id of the check, e.g. `cancel.completed` (the same on every run). */
  readonly check: string;
  /** The wire the check ran on. */
  readonly wire: DoctorWire;
  /** The rule the check reads (an id of docs/spec-rules.md, e.g. `V23`). */
  readonly rule: string;
  /** The rule in a few words. */
  readonly quote: string;
  /** The rule's strength. */
  readonly severity: Severity;
  /** What the doctor saw, in words (never a task id: task ids are secrets). */
  readonly seen: string;
  /** The finding. */
  readonly verdict: Verdict;
  /** How the library copes with it. */
  readonly coping: Coping;
}

/** One wire, as the doctor found it. */
export interface WireSection {
  /** The wire. */
  readonly wire: DoctorWire;
  /** True when the server offers tasks on this wire (its rows then hold the battery). */
  readonly offered: boolean;
  /** The SDK major of the session the checks ran on, when one was opened. */
  readonly sdk: 'v1' | 'v2' | undefined;
  /** The negotiated protocol version of that session, when known. */
  readonly protocolVersion: string | undefined;
  /** The task tool the battery ran (`undefined` when none could be found or the wire is not offered). */
  readonly tool: string | undefined;
  /** Why the wire was not probed, or how the tool was picked. */
  readonly note: string;
}

/** What became of the tasks the doctor started. */
export interface TaskAccount {
  /** Tasks the doctor created. */
  readonly started: number;
  /** Of these, tasks that ended on their own (completed or failed). */
  readonly finished: number;
  /** Of these, tasks that ended cancelled. */
  readonly cancelled: number;
  /** Of these, tasks still running on the server when the doctor returned (each explained in `notes`). */
  readonly leftRunning: number;
  /**
   * Why a task was left running (the server cannot cancel, or did not stop it), and which tasks
   * came late (in the reply to a `tools/call` the doctor had stopped waiting for; counted above).
   */
  readonly notes: readonly string[];
}

/** Counts of the rows by verdict. */
export interface ReportSummary {
  /** Rows with verdict `ok`. */
  readonly ok: number;
  /** Rows with verdict `deviation`, of any severity. */
  readonly deviations: number;
  /** Deviations from MUST rules: any of them makes {@link exitCode} 1. */
  readonly mustViolations: number;
  /** Rows with verdict `not-testable`. */
  readonly notTestable: number;
}

/** The doctor's report. */
export interface DoctorReport {
  /** Version of this report's shape (bumped when a field changes meaning). */
  readonly reportVersion: 1;
  /** The server's name and version, as it gave them (`undefined` when it gave none). */
  readonly server:
    | {
        /** The server's name. */
        readonly name: string;
        /** The server's version. */
        readonly version: string;
      }
    | undefined;
  /** When the run started (ISO 8601). */
  readonly startedAt: string;
  /** How long the run took, in ms. */
  readonly durationMs: number;
  /** Each wire, offered or not. */
  readonly wires: readonly WireSection[];
  /** Every check, in battery order, wire by wire. */
  readonly rows: readonly DoctorRow[];
  /** What became of the tasks the doctor started. */
  readonly tasks: TaskAccount;
  /** Counts by verdict. */
  readonly summary: ReportSummary;
  /**
   * The checks the run's deadline (`timeoutMs`) cut short, wire by wire: each has a not-testable
   * row that says so. Empty when the run ended in time, or had no `timeoutMs` (absent from reports
   * of earlier versions of the doctor).
   */
  readonly cutShort?: ReadonlyArray<{
    /** The check's wire. */
    readonly wire: DoctorWire;
    /** The check's id. */
    readonly check: string;
  }>;
  /**
   * The wires whose session closed while the doctor was still probing them (the server exited or
   * crashed, or dropped the connection): the checks from then on are not testable, and the run
   * fails ({@link exitCode} 1), since a server that goes away mid-task cannot pass. Empty when no
   * session was lost (absent from reports of earlier versions of the doctor).
   */
  readonly connectionLost?: readonly DoctorWire[];
}

/** A tool and the arguments to call it with. */
export interface ToolChoice {
  /** The tool's name. */
  readonly name: string;
  /** Its arguments. @defaultValue arguments made up from the tool's input schema (defaults, first enum values, …) */
  readonly arguments?: Record<string, unknown> | undefined;
}

/** Makes a fresh transport to the same server, once per session the doctor opens. */
export type TransportFactory = () => McpTransport | Promise<McpTransport>;

/**
 * What the doctor examines:
 * - a connected SDK `Client` (either major): the wire its session negotiated is probed; the doctor
 *   neither closes it nor changes its handlers (it taps the transport like a `TaskClient` does);
 * - a transport: the doctor connects it (SDK v2 with automatic era negotiation when installed)
 *   and probes the wire that session speaks, then closes it;
 * - a transport factory: the doctor opens one session per era (2026-07-28 through SDK v2, and
 *   2025-11-25) and probes every wire the server offers, closing each session.
 */
export type DoctorTarget = McpClient | McpTransport | TransportFactory;

/** An event while the doctor runs, for a progress display. */
export interface DoctorProgress {
  /** The wire being probed. */
  readonly wire: DoctorWire;
  /** The probe that starts (e.g. `lifecycle`, `cancel`, `input`). */
  readonly probe: string;
}

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /** The task tool the battery runs. @defaultValue the first tool that can run as a task, called with made-up arguments */
  readonly tool?: ToolChoice | undefined;
  /** A task tool that fails, for the failed-task checks (without it they are not testable). */
  readonly failTool?: ToolChoice | undefined;
  /** A task tool that asks for input (elicitation or sampling), for the input checks (without it they are not testable). */
  readonly inputTool?: ToolChoice | undefined;
  /** The SDK major for sessions the doctor opens. @defaultValue SDK v2 when installed (it can reach both eras), else SDK v1 */
  readonly sdk?: 'v1' | 'v2' | undefined;
  /** The client name and version the doctor's own sessions declare. @defaultValue `mcp-task-doctor` */
  readonly clientInfo?:
    | {
        /** The client's name. */
        readonly name: string;
        /** The client's version. */
        readonly version: string;
      }
    | undefined;
  /** Bound of one probe (its tasks, waits and requests), in ms. @defaultValue 60000 */
  readonly probeTimeoutMs?: number | undefined;
  /** Bound of one request, in ms (a blocking `tasks/result` gets the probe's bound instead). @defaultValue 10000 */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Bound of the whole run, in ms: connecting (each session's `connectTimeoutMs` is at most this),
   * the probes, cancelling the tasks the doctor started, and closing its sessions. The probes stop
   * a reserve before the end (5 s, or a quarter of `timeoutMs` when that is less), so that the
   * tasks still running are cancelled in time (a fifth of the reserve is left for closing); the
   * checks they had not reached are not testable, their rows say the deadline cut them short, and
   * the report lists them in `cutShort`. The report is returned either way.
   * @defaultValue no bound beyond the probes' own
   */
  readonly timeoutMs?: number | undefined;
  /** Bound of connecting a session the doctor opens, handshake included, in ms. @defaultValue 15000 */
  readonly connectTimeoutMs?: number | undefined;
  /**
   * Longest wait of the expiry check (a task read after its ttl), in ms: a task whose ttl would
   * take longer is not read after it. @defaultValue 20000
   */
  readonly expiryBudgetMs?: number | undefined;
  /** How long the doctor leaves a question unanswered in the no-answer check, in ms. @defaultValue 2000 */
  readonly noAnswerMs?: number | undefined;
  /** How long after a task ended the doctor reads it again, to see that it is kept for its ttl, in ms. @defaultValue 1000 */
  readonly retentionCheckMs?: number | undefined;
  /**
   * Stops the run, and `runDoctor` rejects with a `TaskAbortError`: at once while it connects (the
   * sessions and transports it opened are closed), else after the tasks it started are cancelled.
   */
  readonly signal?: AbortSignal | undefined;
  /** Called as each probe starts. */
  readonly onProgress?: ((event: DoctorProgress) => void) | undefined;
}
