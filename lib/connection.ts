/**
 * The client's connection to the server: which wire (and SDK client) is in use, what happens
 * when it closes (tracking pauses, `connectionLost`), and how a new one takes over, by hand
 * (`TaskClient.reconnect`) or through the `reconnect` factory option, retried with backoff.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TaskEngine } from './engine/engine.js';
import { sleep } from './engine/retry.js';
import { backoffDelay, type RetryPolicy } from './engine/timing.js';
import { TaskError, TaskOptionError } from './errors.js';
import { Wire2025 } from './wire/v2025.js';
import type { TaskWire } from './wire/wire.js';

/** @throws TaskOptionError unless `client` is a connected SDK client. */
export function checkConnected(client: Client): void {
  if (client === null || typeof client !== 'object' || typeof client.request !== 'function') {
    throw new TaskOptionError('TaskClient needs an @modelcontextprotocol/sdk Client', { option: 'client' });
  }
  if (client.transport === undefined) {
    throw new TaskOptionError('The SDK Client is not connected: call client.connect(transport) first', {
      option: 'client',
    });
  }
}

/** What the connection needs from its client. */
export interface ConnectionHost {
  readonly engine: () => TaskEngine;
  /** Subscribes the client to a wire; returns the undo. */
  attach(wire: TaskWire): () => void;
  /** The tool list may differ on the new connection. */
  invalidateTools(): void;
  isClosed(): boolean;
  lost(): void;
  restored(): void;
  report(error: TaskError): void;
  readonly factory: (() => Promise<Client>) | undefined;
  readonly retry: RetryPolicy;
  readonly random: () => number;
}

/** The current SDK client and wire, and the switch to a new one. */
export class Connection {
  private detach: () => void = () => {};
  private reconnecting = false;

  constructor(
    private client: Client,
    private readonly host: ConnectionHost,
  ) {}

  /** The SDK client in use. */
  get current(): Client {
    return this.client;
  }

  /** Starts listening on `wire` (the engine's current one). */
  attach(wire: TaskWire): void {
    this.detach = this.host.attach(wire);
  }

  /** The wire's transport closed. */
  closed(wire: TaskWire): void {
    const engine = this.host.engine();
    if (this.host.isClosed() || wire !== engine.wire) return;
    engine.pause();
    this.host.lost();
    void this.autoReconnect();
  }

  /** With a `reconnect` factory: make a new client until one connects (while tasks are tracked). */
  private async autoReconnect(): Promise<void> {
    const { factory } = this.host;
    const engine = this.host.engine();
    if (factory === undefined || this.reconnecting) return;
    this.reconnecting = true;
    try {
      for (let attempt = 1; !this.host.isClosed() && engine.paused && engine.size > 0; attempt += 1) {
        try {
          const client = await factory();
          if (!this.host.isClosed()) this.replace(client);
          return;
        } catch (error) {
          this.host.report(new TaskError(`Reconnecting failed (attempt ${attempt})`, { cause: error }));
          await sleep(engine.scheduler, backoffDelay(attempt, this.host.retry, this.host.random)).catch(() => {});
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  /**
   * Switches to a new connected client: every unsettled task is read again over it.
   * @throws TaskOptionError when `client` is not connected.
   */
  replace(client: Client): void {
    checkConnected(client);
    const wire: TaskWire = new Wire2025(client);
    const engine = this.host.engine();
    this.detach();
    this.client = client;
    this.detach = this.host.attach(wire);
    this.host.invalidateTools();
    if (!engine.paused) engine.pause();
    engine.resume(wire);
    this.host.restored();
  }

  /** Stops listening. */
  close(): void {
    this.detach();
    this.detach = () => {};
  }
}
