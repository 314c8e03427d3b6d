/**
 * The requests the host's own code sends through the SDK client (`client.callTool(...)`, which is
 * `client.request(...)` in both SDK majors), not the library's, of the kinds a server may ask
 * questions during: which of them are still open. An input request that names no task may belong
 * to one of them, so the library must not hand it to a task's call on a guess
 * (facade/input/untagged.ts). The library's own requests never go through `client.request`.
 */

/** The methods during which a server may send an elicitation or sampling request of its own. */
const ASKING_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** The host's open requests on one connection. */
export class HostRequests {
  private readonly open = new Set<object>();

  /** Number of the host's requests still open. */
  get size(): number {
    return this.open.size;
  }

  /**
   * The host sends `request` (the SDK's `{ method, params }`).
   * @returns what to call once it is answered or failed, or `undefined` when it is not watched.
   */
  begin(request: unknown): (() => void) | undefined {
    const method =
      typeof request === 'object' && request !== null ? (request as { method?: unknown }).method : undefined;
    if (typeof method !== 'string' || !ASKING_METHODS.has(method)) return undefined;
    const token = {};
    this.open.add(token);
    return () => {
      this.open.delete(token);
    };
  }

  /** The connection closed: nothing is open any more. */
  clear(): void {
    this.open.clear();
  }
}

/** The requests of each SDK client are noted in its latest connection's {@link HostRequests}. */
const WATCHED = new WeakMap<object, HostRequests>();

/**
 * Notes the requests the host sends through `client` in `requests` from now on (wrapping its
 * `request` method once per client; a later connection's `requests` takes over).
 */
export function watchHostRequests(client: object, requests: HostRequests): void {
  const wrapped = WATCHED.has(client);
  WATCHED.set(client, requests);
  if (wrapped) return;
  const target = client as { request?: unknown };
  const original = target.request;
  if (typeof original !== 'function') return;
  const send = original as (this: unknown, ...args: unknown[]) => unknown;
  const request = function (this: unknown, ...args: unknown[]): unknown {
    const done = WATCHED.get(client)?.begin(args[0]);
    if (done === undefined) return send.apply(this, args);
    try {
      const result = send.apply(this, args);
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
        (result as PromiseLike<unknown>).then(done, done);
      else done();
      return result;
    } catch (error) {
      done();
      throw error;
    }
  };
  try {
    target.request = request;
  } catch {
    // A frozen client: its requests go unseen.
  }
}
