/**
 * Public logging types: log levels, structured entries, the logger interface a host adapts, and
 * the options of `consoleLogger`.
 */

/** Severity of a log entry. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One structured log entry. */
export interface LogEntry {
  /** Severity. */
  readonly level: LogLevel;
  /** What happened, e.g. `task created`, `task failed`. */
  readonly message: string;
  /** Structured details: task fingerprint (or id), tool, status, metrics, error. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Receives log entries; adapt it to any logging library. */
export interface TaskLogger {
  /** Receives one entry; an exception thrown here is ignored. */
  log(entry: LogEntry): void;
}

/** Options of {@link consoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Lowest level printed. @defaultValue 'info' */
  readonly level?: LogLevel | undefined;
  /** Where to print. @defaultValue globalThis.console */
  readonly console?: Pick<Console, LogLevel> | undefined;
}
