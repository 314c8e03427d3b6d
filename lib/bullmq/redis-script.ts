/**
 * The Redis client of a tool queue with the library's Lua scripts defined on it (each defined
 * once per client, then run by name).
 */
import type { Queue, RedisClient } from 'bullmq';

/** The scripts defined so far, by client. */
const defined = new WeakMap<object, Set<string>>();

/** The Redis client of `queue`, with the script `name` (`lua`, taking `numberOfKeys` keys) defined on it. */
export async function scriptClient(
  queue: Queue,
  name: string,
  numberOfKeys: number,
  lua: string,
): Promise<RedisClient> {
  const client = await queue.getBackend().client;
  let names = defined.get(client);
  if (names === undefined) defined.set(client, (names = new Set()));
  if (!names.has(name)) {
    client.defineCommand(name, { numberOfKeys, lua });
    names.add(name);
  }
  return client;
}
