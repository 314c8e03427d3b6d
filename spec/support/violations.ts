/**
 * Requests a scripted server refused because they break the protocol or what the test scripted
 * (spec/support/scripted-server.ts, the wire-contract servers in spec/wire/, the worlds of
 * spec/ext/worlds.ts). The server answers such a request with a JSON-RPC error, which the test may
 * or may not notice; every refusal is also recorded here, and spec/support/no-violations.ts (a
 * vitest setup file) fails any test that ends with one recorded. Nothing here imports an SDK.
 */
const recorded: string[] = [];

/** Records one refused request (`method: why`). */
export function recordViolation(what: string): void {
  recorded.push(what);
}

/** The refusals recorded since the last call, which forgets them. */
export function takeViolations(): string[] {
  return recorded.splice(0);
}
