/**
 * What every contender implements: start one `work` task and report when its result is in the
 * caller's hands. The harness does the rest (timing, counting, memory), identically for all.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** Identifiers of the contenders (and of the reference floor). */
export type ContenderId = 'mcp-task-client' | 'sdk-stream' | 'ext-tasks' | 'floor';

/** A task the contender created. */
export interface StartedTask {
  /** The server's task id (to match the server-side completion time). */
  readonly taskId: string;
  /**
   * Resolves with the wall-aligned time (`stats.now()`) at which the tool's result reached the
   * caller; rejects when the contender reports a failure.
   */
  readonly done: Promise<number>;
}

/** One contender, set up on a connected SDK v1 `Client`. */
export interface Contender {
  readonly id: ContenderId;
  /** Starts a `work` task of `ms` milliseconds; resolves once the task exists (its id is known). */
  start(ms: number): Promise<StartedTask>;
  /** Releases what the contender holds (not the SDK client). */
  close(): Promise<void>;
}

/** What a contender needs to know about the run. */
export interface ContenderContext {
  /** The server's pollInterval, for the floor's own polling. */
  readonly pollInterval: number;
}

/** Builds a contender on a connected client (tool discovery included). */
export type ContenderFactory = (client: Client, context: ContenderContext) => Promise<Contender>;
