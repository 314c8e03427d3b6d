/**
 * What a call's launch (launch.ts) is given and hands on: the parts of its TaskClient it uses, and
 * the task creation it marks as under way while a `tools/call` that asks for a task is in flight.
 */
import type { SlotSet } from '../../util/slot-set.js';
import type { TaskEngine } from '../../engine/engine.js';
import type { SessionPort } from '../../port/port.js';
import type { Connection } from '../connection/connection.js';
import type { LiveTasks } from '../handle/registry.js';
import type { EarlyInput } from '../input/early.js';
import type { InlineAnswers } from '../input/inline.js';
import type { UntaggedInput } from '../input/untagged.js';
import type { Abandoned } from './abandoned.js';
import type { Limiter } from './limiter.js';
import type { ToolCatalog } from './tool-catalog.js';

/** The parts of its TaskClient that a launch uses (see facade/parts.ts). */
export interface LaunchParts {
  readonly engine: TaskEngine;
  readonly catalog: ToolCatalog;
  /** `adopt` wraps a tracked record in a handle and registers it. */
  readonly live: Pick<LiveTasks, 'adopt'>;
  /** `beforeTask` answers the input a server asks for before it answers a call ([E17]), through the call's callbacks. */
  readonly inline: Pick<InlineAnswers, 'beforeTask'>;
  /**
   * `slot` takes a concurrency slot, waiting in line if needed; it rejects with a `Stopped` when
   * the signal or deadline wins, or with `TaskQueueFullError`. The returned function frees the slot.
   */
  readonly limiter: Pick<Limiter, 'slot' | 'unlimited'>;
  /**
   * `ready`: `undefined` when connected; else a promise that waits for a `reconnect` factory (or
   * rejects). The factory is retried for a waiting call only until it has given up (`abandoned()`).
   */
  readonly connection: Pick<Connection, 'ready' | 'connected'>;
  /**
   * A task creation under way is marked on the port's creations (for the engine's early
   * notifications, and for early input on the port; see {@link LaunchCreation}).
   */
  readonly earlyInput: Pick<EarlyInput, 'begin'>;
  /**
   * Until its `tools/call` is answered, a call counts as in flight for input requests that name no
   * task (input/untagged.ts).
   */
  readonly untagged: UntaggedInput;
  /**
   * The follow-ups of creations given up before their answer: each settles once the answer came
   * and, when it created a task, that task's one `tasks/cancel` is answered (or failed). `close()`
   * waits for these (bounded) before it closes an SDK client it made.
   */
  readonly abandoned: Pick<Abandoned, 'add'>;
  /** Aborted when the client closes: the call then rejects at once with `TaskClosedError`. */
  readonly closeSignal: AbortController;
  /**
   * The calls waiting for their `tools/call` reply with nothing but `close()` to race it (no
   * signal, no deadline): `close()` stops each (`closing()`) as it aborts {@link closeSignal}, so
   * such a wait costs a set entry instead of a listener on that signal.
   */
  readonly launching: SlotSet<'launchingSlot', WaitingLaunch>;
  /** The session port of the current connection. */
  readonly port: SessionPort;
}

/** A call waiting for its `tools/call` reply (see {@link LaunchParts.launching}). */
export interface WaitingLaunch {
  /** Its index in {@link LaunchParts.launching} (-1 while not in it). */
  launchingSlot: number;
  /** `close()` began: the call stops waiting, as a race against the close signal would. */
  closing(): void;
}

/**
 * A task creation under way (input/untagged.ts's `CreationInFlight`): `end()` ends it
 * (idempotent). `abandon(taskId)` ends it too, for a creation given up whose task is being
 * cancelled: input requests for that task are refused until the returned release is called (see
 * input/early.ts).
 */
export interface LaunchCreation {
  /** The creation settled (idempotent). */
  end(): void;
  /** The creation was given up and `taskId` is being cancelled: ends it; returns the release. */
  abandon(taskId: string): () => void;
}
