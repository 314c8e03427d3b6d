/**
 * Rigs of the receiver suites (spec/receiver/): a TaskClient serving receiver tasks, connected to
 * the receiver test server (an SDK v1 `McpServer`, in process) or to a scripted raw JSON-RPC peer
 * that plays a hostile requestor, and a callback whose answers the test gives by hand.
 */
import {
  TaskClient,
  type CreateMessageResult,
  type ElicitResult,
  type InputContext,
  type ServeOptions,
  type TaskClientConnectOptions,
  type TaskClientOptions,
  type TaskError,
} from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { ManualClock } from '../helpers.js';
import { answerOf, createReceiverTestServer } from './receiver-server.js';
import { connectScripted, type Json } from './scripted-server.js';
import { connectOptions, createLinkedPair } from './sdk.js';

/** Every capability a receiver of both kinds needs. */
export const RECEIVER_CAPABILITIES = {
  elicitation: {},
  sampling: {},
  tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } },
};

/** One call of a {@link HeldCallback}, answered by the test. */
export interface HeldCall {
  readonly params: Json;
  readonly context: InputContext;
  resolve(answer: ElicitResult | CreateMessageResult): void;
  reject(error: unknown): void;
}

/** A callback that holds every call until the test answers it. */
export class HeldCallback {
  readonly calls: HeldCall[] = [];
  readonly callback = (params: unknown, context: InputContext): Promise<never> =>
    new Promise((resolve, reject) => {
      this.calls.push({ params: params as Json, context, resolve: resolve as unknown as HeldCall['resolve'], reject });
    });
}

/** An elicitation answer. */
export const accept = (name: string): ElicitResult => ({ action: 'accept', content: { name } });
/** A sampling answer. */
export const sampled = (text: string): CreateMessageResult => ({
  role: 'assistant',
  model: 'spec-model',
  content: { type: 'text', text },
});

/** A TaskClient serving receiver tasks, connected to the receiver test server in process. */
export async function serverRig(register: (cleanup: () => Promise<void>) => void, options: TaskClientConnectOptions) {
  const { server, notifications, requests } = createReceiverTestServer();
  const [clientSide, serverSide] = createLinkedPair();
  await server.connect(serverSide);
  const tasks = await TaskClient.connect(clientSide, { ...connectOptions(), ...options });
  const errors: TaskError[] = [];
  tasks.on('error', (error) => errors.push(error));
  register(async () => {
    await tasks.close();
    await server.close();
  });
  /** Calls a tool of the test server and parses its JSON answer. */
  const tool = async (name: string, args: Json = {}): Promise<Json> => {
    const handle = await tasks.callToolAsTask(name, args);
    return answerOf(await handle.result());
  };
  return { server, tasks, tool, notifications, requests, errors };
}

/**
 * A TaskClient on a ManualClock serving receiver tasks, connected to a scripted peer that plays
 * the requestor: `ask(method, params)` sends any request to the client and resolves with its
 * reply message (`result` or `error`).
 */
export async function peerRig(
  register: (cleanup: () => Promise<void>) => void,
  serve: ServeOptions,
  taskOptions: TaskClientOptions = {},
  capabilities: Json = RECEIVER_CAPABILITIES,
) {
  const clock = new ManualClock();
  // Its one tool, `job`, runs as a task (the tests make it create tasks with `creating`).
  const pair = await connectScripted({
    now: clock.now,
    tools: [{ name: 'job', taskSupport: 'required' }],
    clientOptions: { capabilities: capabilities as Record<string, object> },
  });
  const tasks = new TaskClient(pair.client, { clock, ...taskOptions, serve: taskReceiver(serve) });
  const errors: TaskError[] = [];
  tasks.on('error', (error) => errors.push(error));
  register(async () => {
    await tasks.close();
    await pair.close();
  });
  const ask = (method: string, params: Json = {}): Promise<Json> => pair.server.request(method, params);
  /** Creates a receiver task; resolves with its `task` (fails the test on an error reply). */
  const create = async (params: Json = {}, method = 'elicitation/create'): Promise<Json> => {
    const reply = await ask(method, {
      message: 'Your name?',
      requestedSchema: { type: 'object', properties: {} },
      task: {},
      ...params,
    });
    const result = reply.result as Json | undefined;
    if (result?.task === undefined) throw new Error(`no CreateTaskResult: ${JSON.stringify(reply)}`);
    return result.task as Json;
  };
  return { ...pair, tasks, clock, errors, ask, create };
}

/** The JSON-RPC error of a reply message (fails when it is a result). */
export function errorOf(reply: Json): { code: number; message: string } {
  if (reply.error === undefined) throw new Error(`expected an error, got ${JSON.stringify(reply)}`);
  return reply.error as { code: number; message: string };
}

/** The result of a reply message (fails when it is an error). */
export function resultOf(reply: Json): Json {
  if (reply.result === undefined) throw new Error(`expected a result, got ${JSON.stringify(reply)}`);
  return reply.result as Json;
}
