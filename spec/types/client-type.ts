/**
 * Compiled by `npm run typecheck` (spec/types/tsconfig.json, under `exactOptionalPropertyTypes`):
 * `tasks.client` is the SDK client the TaskClient was given, typed as such, so its own requests
 * (`listPrompts()`, SDK v2's `getProtocolEra()`) need no cast; `TaskClient.connect` types it as
 * the `Client` class named as its type argument, and as the structural `McpClient` without one.
 * A line that stops compiling, or an `@ts-expect-error` that is no longer an error, fails the check.
 */
import type { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client as SdkV2Client } from '@modelcontextprotocol/client';
import { TaskClient, type McpClient, type McpTransport, type TaskClientOptions } from '../../lib/index.js';

declare const v1: SdkV1Client;
declare const v2: SdkV2Client;
declare const transport: McpTransport;
declare const maybe: number | undefined;

export async function clientTypes(): Promise<unknown[]> {
  const onV1 = new TaskClient(v1);
  const onV2 = new TaskClient(v2, { timeoutMs: maybe, reconnect: undefined });
  const sdkV1: SdkV1Client = onV1.client;
  const prompts = await onV1.client.listPrompts();
  const era: string | undefined = onV2.client.getProtocolEra();
  const resources = await onV2.client.listResources();

  // A reconnect hands over a client of the same SDK, from the method or the factory.
  onV1.reconnect(v1);
  // @ts-expect-error nor a client of the other SDK: tasks.client would no longer be what its type says
  onV1.reconnect(v2);
  const factory: TaskClientOptions<SdkV1Client> = { reconnect: async () => v1 };
  const withFactory = new TaskClient(v1, factory);
  await withFactory.client.ping();

  // Code that takes any TaskClient takes these.
  const any: TaskClient[] = [onV1, onV2, withFactory];

  // TaskClient.connect builds the client itself: name its class to type it.
  const named = await TaskClient.connect<SdkV2Client>(transport, { sdk: 'v2', requestTimeoutMs: maybe });
  const tools = await named.client.listTools();
  const unnamed = await TaskClient.connect(transport);
  const structural: McpClient = unnamed.client;
  // @ts-expect-error without a type argument the client is the structural McpClient
  await unnamed.client.listPrompts();

  return [sdkV1, prompts, era, resources, any, tools, structural];
}
