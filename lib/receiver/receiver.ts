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
import { missingCapability, receiverCapabilities } from './capabilities.js';
import { ReceiverSession } from './session.js';
import type { ReceiverConfig, ReceiverHost, ReceiverKind } from './types.js';

/** The receiver session serving each connection. */
const SERVING = new WeakMap<SessionPort, ReceiverSession>();

/**
 * Whether a receiver takes this request on `port` (a task-augmented request of a kind it serves):
 * the side-channel input path then leaves it alone.
 */
export function receiverClaims(port: SessionPort, kind: ReceiverKind, params: JsonObject): boolean {
  return SERVING.get(port)?.claims(kind, params) ?? false;
}

/**
 * Why a task-augmented request of `kind` is refused: the client declared task support for it (so
 * it may not answer plainly, [V14]; only an undeclared kind may, [V1]) but no receiver serves it
 * now (none started, or it was closed). `undefined` for any other request.
 */
export function unservedTaskRequest(port: SessionPort, kind: ReceiverKind, params: JsonObject): TaskError | undefined {
  if (params.task === undefined || params.task === null) return undefined;
  if (receiverClaims(port, kind, params)) return undefined;
  if (missingCapability(port.clientCapabilities(), kind) !== undefined) return undefined;
  return new TaskNotSupportedError(
    `This client declared ${kind} tasks but serves none now (its receiver is closed or was never started), so it cannot answer this request as a task`,
    { feature: kind },
  );
}

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
export function cannotServe(port: SessionPort, config: ReceiverConfig): TaskError | undefined {
  const declared = port.clientCapabilities();
  for (const kind of servedKinds(config)) {
    const missing = missingCapability(declared, kind);
    if (missing === undefined) continue;
    return new TaskNotSupportedError(
      `Serving ${kind} tasks needs the client capability "${missing}", which the SDK Client did not declare, so the server would never send such requests. Use TaskClient.connect(transport, { serve }), which declares it, or create the Client with capabilities: ${JSON.stringify(capabilitiesFor(config))}.`,
      { feature: kind },
    );
  }
  const other = SERVING.get(port);
  if (other !== undefined && !other.closed) {
    return new TaskOptionError('Receiver tasks are already served on this connection: close that receiver first', {
      option: 'serve',
    });
  }
  return undefined;
}

/** The receiver of one TaskClient. */
export class Receiver implements ReceiverHandle {
  private session: ReceiverSession | undefined;
  private isClosed = false;

  constructor(
    private readonly config: ReceiverConfig,
    private readonly host: ReceiverHost,
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

  /** The callbacks that also answer plain requests (the side-channel fallback). */
  get callbacks(): Pick<ReceiverConfig, 'elicitation' | 'sampling'> {
    return { elicitation: this.config.elicitation, sampling: this.config.sampling };
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
    const problem = cannotServe(port, this.config);
    if (problem !== undefined) throw problem;
    this.session?.close();
    const session = new ReceiverSession(port, this.config, this.host, this.scheduler, this.now);
    this.session = session;
    SERVING.set(port, session);
    session.start();
  }

  /** Like {@link Receiver.attach}, for a new connection after a reconnect: a problem is reported, not thrown. */
  follow(port: SessionPort): void {
    try {
      this.attach(port);
    } catch (error) {
      this.session?.close();
      this.host.report(error as TaskError);
    }
  }

  close(): Promise<void> {
    if (!this.isClosed) {
      this.isClosed = true;
      const session = this.session;
      this.session = undefined;
      session?.close();
      if (session !== undefined && SERVING.get(session.port) === session) SERVING.delete(session.port);
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
