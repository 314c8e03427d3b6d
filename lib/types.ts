/**
 * Public data types shared by every module. Wire-neutral: the 2025-11-25 adapter and any later
 * wire adapter map their messages onto these shapes.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type { CallToolResult };

/**
 * The five statuses of a task. `completed`, `failed` and `cancelled` are terminal: a task never
 * leaves them ([V5], [V6]).
 */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The terminal subset of {@link TaskStatus}. */
export type TerminalTaskStatus = 'completed' | 'failed' | 'cancelled';

/**
 * One snapshot of a task as the server reported it (the wire `Task` object), after lenient
 * normalisation: a missing `ttl` becomes `null` (D1), an absent or unusable `pollInterval` is left
 * out (D2). Snapshots are immutable; every change produces a new object.
 */
export interface Task {
  /** Server-generated id. Treat it as a secret: whoever knows it can read the result. */
  readonly taskId: string;
  /** Current status. */
  readonly status: TaskStatus;
  /** Human-readable progress, reason or diagnostic, if the server sent one. */
  readonly statusMessage?: string;
  /** ISO 8601 creation time on the server's clock. */
  readonly createdAt: string;
  /** ISO 8601 time of the last update on the server's clock. */
  readonly lastUpdatedAt: string;
  /** Retention from creation in milliseconds; `null` means unlimited or not reported. */
  readonly ttl: number | null;
  /** Suggested polling interval in milliseconds, if the server gave one. */
  readonly pollInterval?: number;
}

/** A JSON-RPC error object as the server sent it. */
export interface JsonRpcErrorInfo {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The server's message. */
  readonly message: string;
  /** The error's `data`, if any. */
  readonly data?: unknown;
}

/**
 * A source of time and timers. Inject one to make tests deterministic; the default uses
 * `Date.now`, `setTimeout` and `clearTimeout`.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; returns a token for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer made by {@link Clock.setTimeout}. */
  clearTimeout(token: unknown): void;
}

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminalStatus(status: TaskStatus): status is TerminalTaskStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
