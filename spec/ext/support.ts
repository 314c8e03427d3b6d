/**
 * Rigs for the public-API suites of the 2026-07-28 `io.modelcontextprotocol/tasks` extension wire:
 * the scripted extension server (spec/support/ext-server) on one end of an in-memory pair, and a
 * `TaskClient` made by `TaskClient.connect(transport, { sdk: 'v2' })` on the other (SDK v2 in
 * automatic negotiation, so the session is on the modern era). Client and server share one
 * {@link ManualClock}: server timestamps, TTLs and timed steps move only when a test moves time.
 */
import { Client } from '@modelcontextprotocol/client';
import {
  TaskClient,
  type ElicitationCallback,
  type ElicitResult,
  type InputContext,
  type TaskClientConnectOptions,
} from '../../lib/index.js';
import { ManualClock } from '../helpers.js';
import {
  connectInMemory,
  ExtServer,
  fixtureTools,
  type ExtServerOptions,
  type Json,
  type LoggedMessage,
} from '../support/ext-server/index.js';

export { ManualClock };

/** The per-request capabilities key of the modern era. */
export const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** The extension id. */
export const EXT = 'io.modelcontextprotocol/tasks';

/** A connected extension server and TaskClient. */
export interface ExtRig {
  readonly server: ExtServer;
  readonly tasks: TaskClient;
  readonly clock: ManualClock;
  /** Closes the TaskClient (and its SDK client). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link extRig}. */
export interface ExtRigOptions {
  /** Server options; `tools` are added to the fixture tools. */
  readonly server?: ExtServerOptions;
  /** TaskClient (and SDK client) options; `clock` defaults to the rig's. */
  readonly client?: TaskClientConnectOptions;
  /** Start time of the shared clock. */
  readonly start?: number;
  /** The shared clock itself (made from `start` when absent). */
  readonly clock?: ManualClock;
}

const open: Array<() => Promise<void>> = [];

/** Closes every rig opened since the last call (call it in `afterEach`). */
export async function closeRigs(): Promise<void> {
  while (open.length > 0) await open.pop()?.();
}

/** Starts a scripted extension server and a TaskClient connected to it in memory. */
export async function extRig(options: ExtRigOptions = {}): Promise<ExtRig> {
  const clock = options.clock ?? new ManualClock(options.start);
  const server = new ExtServer({
    now: clock.now,
    ...options.server,
    tools: [...fixtureTools(), ...(options.server?.tools ?? [])],
  });
  const { clientTransport } = await connectInMemory(server);
  const tasks = await TaskClient.connect(clientTransport, { sdk: 'v2', clock, ...options.client });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await tasks.close();
  };
  open.push(close);
  return { server, tasks, clock, close };
}

/** A second TaskClient on a fresh in-memory connection to the same server (a new process, as far as the server can tell). */
export async function secondClient(
  server: ExtServer,
  clock: ManualClock,
  options: TaskClientConnectOptions = {},
): Promise<TaskClient> {
  const { clientTransport } = await connectInMemory(server);
  const tasks = await TaskClient.connect(clientTransport, { sdk: 'v2', clock, ...options });
  open.push(() => tasks.close());
  return tasks;
}

/** A connected SDK v2 client of the user's own (automatic negotiation) on a fresh in-memory link. */
export async function sdkV2Client(
  server: ExtServer,
  capabilities: Json = {},
  mode: 'auto' | 'legacy' = 'auto',
): Promise<Client> {
  const { clientTransport } = await connectInMemory(server);
  const client = new Client({ name: 'ext-spec', version: '1.0.0' }, { capabilities, versionNegotiation: { mode } });
  await client.connect(clientTransport);
  open.push(() => client.close());
  return client;
}

/** The per-request client capabilities a logged request carried. */
export function declared(entry: LoggedMessage | Json): Json | undefined {
  const params = ('params' in entry && typeof entry.params === 'object' ? entry.params : entry) as Json;
  const meta = params._meta as Json | undefined;
  return meta?.[CLIENT_CAPABILITIES] as Json | undefined;
}

/** Clock times (ms) between consecutive `method` requests the server received, from `start`. */
export function gaps(server: ExtServer, method: string, start: number): number[] {
  const times = [start, ...server.received(method).map((entry) => entry.at)];
  return times.slice(1).map((at, i) => at - times[i]!);
}

/** The id of the only task the server holds (or the last one). */
export function lastTaskId(server: ExtServer): string {
  const ids = server.tasks.ids();
  const id = ids[ids.length - 1];
  if (id === undefined) throw new Error('the server holds no task');
  return id;
}

/** An elicitation answer accepting a `confirm` form. */
export const ACCEPT: ElicitResult = { action: 'accept', content: { confirm: true } };

/** Moves the rig's clock in `step` ms steps until `handle` settled (at most 600 steps). */
export async function settle(rig: ExtRig, handle: { readonly settled: boolean }, step = 100): Promise<void> {
  for (let i = 0; i < 600 && !handle.settled; i += 1) await rig.clock.advance(step);
}

/** One call of a {@link deferred} callback. */
export interface DeferredCall {
  readonly params: Record<string, unknown>;
  readonly context: InputContext;
  answer(value: ElicitResult): void;
}

/** An elicitation callback whose answers the test releases by hand. */
export function deferred(): { readonly calls: DeferredCall[]; readonly callback: ElicitationCallback } {
  const calls: DeferredCall[] = [];
  return {
    calls,
    callback: (params, context) =>
      new Promise<ElicitResult>((resolve) => {
        calls.push({ params, context, answer: resolve });
      }),
  };
}
