/**
 * The parts of one TaskClient ({@link ClientParts}): every room of the facade, built once, in
 * order, by {@link buildParts}, and each handed the one record of them all. A room keeps the
 * record and reaches another part only when it acts, so the order of building matters only for
 * what a constructor itself uses (the engine's scheduler). Each room names the slice of the record
 * it uses (its `…Parts` interface), which this record satisfies.
 */
import type { ClientInstrument, TaskClientEvents } from '../api/index.js';
import type { EngineEvents, SnapshotSource, TaskView } from '../engine/engine.js';
import { TaskEngine } from '../engine/engine.js';
import type { TaskError } from '../errors.js';
import type { SessionPort } from '../port/port.js';
import type { InlineInput, TaskWire } from '../wire/wire.js';
import type { McpClient, Task } from '../types.js';
import { keepListening } from '../util/abort.js';
import { Abandoned } from './call/abandoned.js';
import { SlotSet } from '../util/slot-set.js';
import type { WaitingLaunch } from './call/launch-parts.js';
import { Limiter } from './call/limiter.js';
import { ToolCatalog } from './call/tool-catalog.js';
import { Connection } from './connection/connection.js';
import { SafeEmitter, metricsOf } from './events/emitter.js';
import { attachLogger } from './events/logger.js';
import { LiveTasks } from './handle/registry.js';
import { EarlyInput } from './input/early.js';
import { InlineAnswers } from './input/inline.js';
import { InputRouter } from './input/router.js';
import { Serving } from './input/serving.js';
import { UntaggedInput } from './input/untagged.js';
import type { ResolvedClientOptions } from './options.js';

/** Every part of one TaskClient, as the rooms of the facade reach them. */
export interface ClientParts {
  /** The client's options, validated and defaulted. */
  readonly config: ResolvedClientOptions;
  /** The client's events (`on`, `once`, `off`; events/emitter.ts). */
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** Observation, scheduling and state of every task (lib/engine). */
  readonly engine: TaskEngine;
  /** The tracked tasks with their handles, progress routes and events (handle/registry.ts). */
  readonly live: LiveTasks;
  /** Input requests that name no task, tied to the call they belong to (input/untagged.ts). */
  readonly untagged: UntaggedInput;
  /** Input requests that overtake their task's creation (input/early.ts). */
  readonly earlyInput: EarlyInput;
  /** Creations given up before their answer, and their follow-ups (call/abandoned.ts). */
  readonly abandoned: Abandoned;
  /** The `maxConcurrentTasks` limit (call/limiter.ts). */
  readonly limiter: Limiter;
  /** The server's tools and their task support (call/tool-catalog.ts). */
  readonly catalog: ToolCatalog;
  /** Routes the server's input requests to the right callback (input/router.ts). */
  readonly router: InputRouter;
  /** Input that rides on messages: before a call is answered, and on a task's snapshots (input/inline.ts). */
  readonly inline: InlineAnswers;
  /** The receiver of `serve()` and the `serve` option (input/serving.ts). */
  readonly serving: Serving;
  /** The SDK client and wire in use, and reconnection (connection/connection.ts). */
  readonly connection: Connection;
  /** Aborted when `close()` begins: calls still under way reject at once. */
  readonly closeSignal: AbortController;
  /** The calls waiting for their reply with only `close()` to race it (call/launch-parts.ts). */
  readonly launching: SlotSet<'launchingSlot', WaitingLaunch>;
  /** The session port of the current connection (a reconnection replaces it: connection/listen.ts). */
  port: SessionPort;
  /** Set when `close()` begins (closing.ts). */
  closing: Promise<void> | undefined;
  /** What watches the calls and the input (`instrumentation`), once attached (events/instrumentation.ts). */
  instrument: ClientInstrument | undefined;
  /** The client's clock time now. */
  now(): number;
  /** Reports a problem on the client's `error` event, with the metrics of the task it names, if tracked. */
  report(error: TaskError): void;
}

/** What the engine reports, passed on to the rooms it concerns (one object, no closure per event). */
class EngineReports implements EngineEvents {
  constructor(private readonly parts: ClientParts) {}

  status(record: TaskView, _source: SnapshotSource, previous: Task): void {
    this.parts.live.status(record, previous);
    // Only entering or leaving input_required can settle an untagged request's wait.
    if ((record.task.status === 'input_required') !== (previous.status === 'input_required'))
      this.parts.untagged.changed();
  }

  settled(record: TaskView): void {
    this.parts.live.settled(record);
    this.parts.untagged.settled(record);
  }

  stopping(record: TaskView, over: Promise<unknown>): void {
    this.parts.live.stopping(record, over);
  }

  problem(error: TaskError, record: TaskView | undefined): void {
    this.parts.emitter.emit('error', error, record === undefined ? undefined : metricsOf(record, this.parts.now()));
  }

  expiring(record: TaskView, expiresAt: number): void {
    this.parts.live.expiring(record, expiresAt);
  }

  creationsSettled(): void {
    // Early input waits on the creations of every TaskClient on the port (input/early.ts).
  }

  sessionLost(lost: TaskWire): void {
    this.parts.connection.closed(lost);
  }

  input(record: TaskView, items: readonly InlineInput[]): void {
    this.parts.inline.forTask(record, items);
  }

  withdrawn(record: TaskView, keys: readonly string[]): void {
    this.parts.inline.withdrawn(record, keys);
  }
}

/** The record of a TaskClient's parts, built in the order listed (see {@link buildParts}). */
class Parts implements ClientParts {
  readonly emitter: SafeEmitter<TaskClientEvents>;
  readonly engine: TaskEngine;
  readonly live: LiveTasks;
  readonly untagged: UntaggedInput;
  readonly earlyInput: EarlyInput;
  readonly abandoned: Abandoned;
  readonly limiter: Limiter;
  readonly catalog: ToolCatalog;
  readonly router: InputRouter;
  readonly inline: InlineAnswers;
  readonly serving: Serving;
  readonly connection: Connection;
  readonly closeSignal = new AbortController();
  readonly launching = new SlotSet<'launchingSlot', WaitingLaunch>('launchingSlot');
  closing: Promise<void> | undefined = undefined;
  instrument: ClientInstrument | undefined = undefined;

  constructor(
    client: McpClient,
    readonly config: ResolvedClientOptions,
    public port: SessionPort,
    wire: TaskWire,
  ) {
    // Every call races close(): the signal's one listener stays (util/abort.ts).
    keepListening(this.closeSignal.signal);
    this.emitter = new SafeEmitter<TaskClientEvents>((error) => this.report(error));
    this.engine = new TaskEngine(wire, config, new EngineReports(this));
    this.live = new LiveTasks(this);
    this.untagged = new UntaggedInput(this);
    this.earlyInput = new EarlyInput(this.engine.scheduler);
    this.abandoned = new Abandoned(this.engine.scheduler);
    this.limiter = new Limiter(config.maxConcurrentTasks, this.engine.scheduler, config.whenFull);
    if (config.logger !== undefined) attachLogger(this.emitter, config.logger, config.logTaskIds);
    this.catalog = new ToolCatalog(this);
    this.router = new InputRouter(this);
    this.inline = new InlineAnswers(this);
    this.serving = new Serving(this);
    this.connection = new Connection(client, this);
    this.connection.attach(wire);
  }

  now(): number {
    return this.config.clock.now();
  }

  report(error: TaskError): void {
    // A problem that names a tracked task carries that task's metrics ([observability]: `error`).
    this.emitter.emit('error', error, this.live.metricsOf(error.taskId));
  }
}

/**
 * Builds the parts of a TaskClient over `client` (whose session port is `port`, speaking `wire`),
 * and starts listening on that wire.
 */
export function buildParts(
  client: McpClient,
  config: ResolvedClientOptions,
  port: SessionPort,
  wire: TaskWire,
): ClientParts {
  return new Parts(client, config, port, wire);
}
