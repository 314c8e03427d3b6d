/**
 * The Deno and Bun smoke script: `deno run --allow-net=127.0.0.1 smoke.js <server> [<deadlineMs>]`
 * or `bun smoke.ts <server> [<deadlineMs>]` prints the report of one run (scenario.ts) as a line
 * of JSON.
 */
import { runTask } from './scenario.js';

declare const Deno: { readonly args: string[] } | undefined;
declare const Bun: { readonly argv: string[] } | undefined;

const args = typeof Deno !== 'undefined' ? Deno.args : (Bun?.argv.slice(2) ?? []);
const [server, deadline] = args;
if (server === undefined) throw new Error('usage: smoke <server url> [<deadline ms>]');
console.log(JSON.stringify(await runTask(new URL(server), deadline === undefined ? undefined : Number(deadline))));
