/**
 * Serving receiver tasks for one TaskClient ({@link ReceiverHandle}): one session per connection,
 * following the client to a new connection when it reconnects (the old connection's tasks go with
 * it). One receiver per connection: the tasks of a connection belong to one store.
 */
import type { ReceiverHandle } from '../api/index.js';
import { TaskNotSupportedError, TaskOptionError, type TaskError } from '../errors.js';
import type { Scheduler } from '../util/scheduler.js';
import type { JsonObject, SessionPort } from '../port/port.js';
import type { Task } from '../types.js';
import { missingCapability, receiverCapabilities, servedTaskMethods } from './capabilities.js';
import { answerStopped } from './methods.js';
import { ReceiverSession, answerNow } from './session.js';
import {
  INTERNAL_ERROR,
  METHOD_OF,
  rpcFailure,
  type ReceiverConfig,
  type ReceiverHost,
  type ReceiverKind,
  type ServingRegistry,
} from './types.js';

/** The kinds a configuration serves. */
export function servedKinds(config: Pick<ReceiverConfig, 'elicitation' | 'sampling'>): ReceiverKind[] {
  return (['elicitation', 'sampling'] as const).filter((kind) => config[kind] !== undefined);
}

/** The capabilities a client must declare to serve `config` ({@link receiverCapabilities}). */
export function capabilitiesFor(config: Pick<ReceiverConfig, 'elicitation' | 'sampling'>): JsonObject {
  return receiverCapabilities(servedKinds(config));
}

/**
 * Why `port` cannot be served with `config`, as a typed error; `undefined` when it can.
 */
export function cannotServe(
  port: SessionPort,
  config: ReceiverConfig,
  registry: ServingRegistry,
): TaskError | undefined {
  const declared = port.clientCapabilities();
  for (const kind of servedKinds(config)) {
    const missing = missingCapability(declared, kind);
    if (missing === undefined) continue;
    return new TaskNotSupportedError(
      `Serving ${kind} tasks needs the client capability "${missing}", which the SDK Client did not declare, so the server would never send such requests. Use TaskClient.connect(transport, { serve }), which declares it, or create the Client with capabilities: ${JSON.stringify(capabilitiesFor(config))}.`,
      { feature: kind },
    );
  }
  const other = registry.servedOn(port);
  if (other !== undefined && !other.closed) {
    return new TaskOptionError('Receiver tasks are already served on this connection: close that receiver first', {
      option: 'serve',
    });
  }
  return undefined;
}

/** Connections answered by {@link answerAfterStop}. */
const STOPPED = new WeakSet<SessionPort>();

/**
 * Keeps answering the `tasks/*` requests of a connection that stays open after its receiver
 * stopped, for as long as no other receiver serves it: the client still declares them ([R5]), so
 * they get -32602 for any task id and an empty `tasks/list` ([V26]), never the SDK's -32601. A
 * task-augmented request of a kind whose task support the client declared is refused with -32603
 * ([V14]: a plain answer is wrong, and only an undeclared kind may get one, [V1]), also once the
 * TaskClient itself closed: left to the SDK client it would get -32601, or no answer at all when
 * the SDK's schema refuses the message (a related-task `_meta` whose taskId is no string). A plain
 * request passes. One set of taps per connection, gone when it closes; a receiver serving it again
 * answers instead (its taps come after these, which pass while it serves).
 */
function answerAfterStop(port: SessionPort, registry: ServingRegistry): void {
  if (port.closed || STOPPED.has(port)) return;
  STOPPED.add(port);
  const stopped = (): boolean => {
    const serving = registry.servedOn(port);
    return serving === undefined || serving.closed;
  };
  const declared = port.clientCapabilities();
  const offs = servedTaskMethods(declared).map((method) =>
    port.onRequest(method, (request) =>
      stopped() ? answerNow(() => answerStopped(method, request.params)) : undefined,
    ),
  );
  for (const kind of ['elicitation', 'sampling'] as const) {
    if (missingCapability(declared, kind) !== undefined) continue;
    offs.push(
      port.onRequest(METHOD_OF[kind], (request) => {
        const task = request.params.task;
        if (task === undefined || task === null || !stopped()) return undefined;
        return Promise.reject(
          rpcFailure(
            INTERNAL_ERROR,
            `This client declared ${kind} tasks but no receiver serves them now, so it cannot answer this request as a task`,
          ),
        );
      }),
    );
  }
  port.onClose(() => {
    for (const off of offs) off();
  });
}

/** The receiver of one TaskClient. */
export class Receiver implements ReceiverHandle {
  private session: ReceiverSession | undefined = undefined;
  private isClosed = false;

  constructor(
    private readonly config: ReceiverConfig,
    private readonly host: ReceiverHost,
    private readonly registry: ServingRegistry,
    private readonly scheduler: Scheduler,
    private readonly now: () => number,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  get size(): number {
    return this.live?.store.size ?? 0;
  }

  get running(): number {
    return this.live?.store.running ?? 0;
  }

  tasks(): Task[] {
    return this.live?.snapshots() ?? [];
  }

  private get live(): ReceiverSession | undefined {
    return this.session === undefined || this.session.closed ? undefined : this.session;
  }

  /**
   * Serves `port` (a connection of the client), leaving the previous connection's session.
   * @throws TaskNotSupportedError when the client did not declare a needed capability.
   * @throws TaskOptionError when another receiver serves this connection.
   */
  attach(port: SessionPort): void {
    if (this.isClosed || (this.session?.port === port && !this.session.closed)) return;
    const problem = cannotServe(port, this.config, this.registry);
    if (problem !== undefined) throw problem;
    this.stop();
    const session = new ReceiverSession(port, this.config, this.host, this.scheduler, this.now);
    this.session = session;
    this.registry.serve(port, session);
    session.start();
  }

  /** Like {@link Receiver.attach}, for a new connection after a reconnect: a problem is reported, not thrown. */
  follow(port: SessionPort): void {
    try {
      this.attach(port);
    } catch (error) {
      this.stop();
      this.host.report(error as TaskError);
    }
  }

  close(): Promise<void> {
    if (!this.isClosed) {
      this.isClosed = true;
      this.stop();
    }
    return Promise.resolve();
  }

  /** Stops serving the current connection; one that stays open keeps answering ({@link answerAfterStop}). */
  private stop(): void {
    const session = this.session;
    if (session === undefined) return;
    this.session = undefined;
    session.close();
    this.registry.leave(session.port, session);
    answerAfterStop(session.port, this.registry);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
