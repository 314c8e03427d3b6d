/**
 * The benchmark server over stdio, for the run that includes real I/O. Started by the harness
 * (`bench/scenario.ts`) as a child process; configured by BENCH_POLL_INTERVAL and BENCH_NOTIFY.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { BenchServer } from './server.js';

const bench = new BenchServer({
  pollInterval: Number(process.env.BENCH_POLL_INTERVAL ?? 1000),
  notify: process.env.BENCH_NOTIFY !== '0',
});
await bench.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
