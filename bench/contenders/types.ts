/**
 * What every contender implements: start one `work` task and hand over the promise a caller
 * would await for its result. The harness does the rest (timing, counting, memory), identically
 * for all: it takes the time that promise settles with one shared continuation per task, so no
 * contender pays for its own timestamping, and none saves by fusing it into its code.
 */
import type { BenchConnection, Sdk, WireKind } from '../transports.js';

/** Identifiers of the contenders (and of the reference floors), unique within a wire. */
export type ContenderId =
  'mcp-task-client' | 'mcp-task-client-v2' | 'mcp-task-client-otel' | 'sdk-stream' | 'ext-tasks' | 'floor' | 'floor-v2';

/** A task the contender created. */
export interface StartedTask {
  /** The server's task id (to match the server-side completion time). */
  readonly taskId: string;
  /**
   * What a caller awaits: fulfils with the tool's result, in whatever form the contender hands
   * it to its caller; rejects when the contender reports a failure. The harness, not the
   * contender, notes when it settles (bench/scenario.ts).
   */
  readonly result: Promise<unknown>;
}

/** One contender, set up on a connected client. */
export interface Contender {
  /** Starts a `work` task of `ms` milliseconds; resolves once the task exists (its id is known). */
  start(ms: number): Promise<StartedTask>;
  /** Releases what the contender holds (not the SDK client). */
  close(): Promise<void>;
}

/** What a contender needs to know about the run. */
export interface ContenderContext {
  /** The server's pollInterval, for the floors' own polling. */
  readonly pollInterval: number;
}

/** Builds a contender on a connected client (tool discovery included). */
export type ContenderFactory = (connection: BenchConnection, context: ContenderContext) => Promise<Contender>;

/** A contender as the registry knows it. */
export interface ContenderInfo {
  readonly wire: WireKind;
  readonly id: ContenderId;
  /** The SDK of the client it runs on. */
  readonly sdk: Sdk;
  /** How the report names it. */
  readonly label: string;
  /** A reference floor (not a contender): the targets are ratios to it. */
  readonly floor: boolean;
  /** The floor it is compared with (contenders only). */
  readonly reference: ContenderId | undefined;
  readonly load: () => Promise<ContenderFactory>;
}
