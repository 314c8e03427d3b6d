/**
 * Structured audit logging of the task lifecycle. Silent unless a logger is given. Task
 * ids are bearer secrets (spec §Security): by default they are logged only as a short one-way
 * fingerprint, which still lets lines about one task be correlated; `logTaskIds: true` logs them
 * in full.
 */
import type { ConsoleLoggerOptions, LogLevel, TaskClientEvents, TaskLogger, TaskMetrics } from '../../api/index.js';
import type { TaskError } from '../../errors.js';
import { fingerprint, scrub as scrubId } from '../../util/fingerprint.js';
import type { SafeEmitter } from './emitter.js';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A {@link TaskLogger} that prints `message {fields as JSON}` to the console. */
export function consoleLogger(options: ConsoleLoggerOptions = {}): TaskLogger {
  const min = RANK[options.level ?? 'info'];
  const out = options.console ?? console;
  return {
    log: ({ level, message, fields }) => {
      if (RANK[level] >= min) out[level](`${message} ${JSON.stringify(fields)}`);
    },
  };
}

/** Logs the lifecycle events of `emitter` to `logger`. @returns a function that stops it. */
export function attachLogger(
  emitter: SafeEmitter<TaskClientEvents>,
  logger: TaskLogger,
  logTaskIds: boolean,
): () => void {
  /** `text`, with the task id replaced by its fingerprint unless ids are logged. */
  const hide = (text: string, taskId: string | undefined): string => (logTaskIds ? text : scrubId(text, taskId));
  const base = (m: TaskMetrics): Record<string, unknown> => ({
    role: m.role,
    ...(logTaskIds ? { taskId: m.taskId } : { task: fingerprint(m.taskId) }),
    tool: m.toolName,
    status: m.status,
    // The server's message may name the task.
    ...(m.statusMessage === undefined ? {} : { statusMessage: hide(m.statusMessage, m.taskId) }),
  });
  /** An error's message, with its task id hidden. */
  const scrub = (error: TaskError): string => hide(error.message, error.taskId);
  const write = (level: LogLevel, message: string, fields: Record<string, unknown>): void => {
    try {
      logger.log({ level, message, fields });
    } catch {
      // A broken logger must not break tracking.
    }
  };
  const offs = [
    emitter.on('created', (m) => write('info', 'task created', base(m))),
    emitter.on('status', (m) => write('debug', 'task status', base(m))),
    emitter.on('inputRequired', (m) => write('info', 'task waits for input', base(m))),
    // A question no call could be tied to: worth a warning when several calls might have asked.
    emitter.on('inputUnattributed', (input) =>
      write(input.reason === 'ambiguous' ? 'warn' : 'debug', 'input request names no task', { ...input }),
    ),
    emitter.on('settled', (m) =>
      write(
        m.outcome === 'completed' ? 'info' : m.outcome === 'failed' || m.outcome === 'error' ? 'error' : 'warn',
        `task ${m.outcome}`,
        {
          ...base(m),
          durationMs: m.durationMs,
          polls: m.polls,
          notifications: m.notifications,
          retries: m.retries,
          ...(m.error === undefined ? {} : { error: scrub(m.error) }),
        },
      ),
    ),
    emitter.on('error', (error, m) =>
      write('warn', 'task client problem', {
        ...(m === undefined ? {} : base(m)),
        error: scrub(error),
      }),
    ),
  ];
  return () => {
    for (const off of offs) off();
  };
}
