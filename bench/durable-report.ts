/**
 * The durable-queue section of docs/performance.md, from what bench/durable.ts stored.
 */
import type { DurableResult, Spread } from './durable.js';
import { median } from './stats.js';

const ms = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const range = (values: readonly number[], digits: number): string =>
  `${ms(median([...values]), digits)} (${ms(Math.min(...values), digits)}–${ms(Math.max(...values), digits)})`;
const spread = (s: Spread, digits = 0): string => `${ms(s.median, digits)} (${ms(s.min, digits)}–${ms(s.max, digits)})`;

/** The section's lines. */
export function durableMarkdown(d: DurableResult): string[] {
  const lines: string[] = [];
  const push = (...text: string[]): void => void lines.push(...text);
  push('## Durable queue (BullMQ)', '');
  push(
    `<!-- Measured by \`${d.command}\` (bench/durable.ts) on ${d.generatedAt}, on ${d.machine}. -->`,
    '',
    `Tool calls run as BullMQ jobs through \`mcp-task-client/bullmq\` (see [Durable tasks](durable.md)) against the plain \`TaskClient\`, measured by \`${d.command}\` on ${d.generatedAt} ` +
      `(bullmq ${d.versions.bullmq ?? '?'}, redis-server ${d.versions['redis-server'] ?? '?'}). Each job runs ${d.task}; ${d.n} tasks per repetition after ${d.warmup} unmeasured, ` +
      `${d.reps} repetitions; median over the repetitions (smallest–largest). The worker runs \`taskProcessor\` with its defaults (control channel read every 1,000 ms).`,
    '',
  );
  push('| figure | plain TaskClient | BullMQ worker |', '|---|---:|---:|');
  push(`| client CPU ms per task | ${range(d.plainCpuMsPerTask, 3)} | ${range(d.durableCpuMsPerTask, 3)} |`);
  push(
    `| Redis requests per task (producer and worker; a script counts once; one pass under MONITOR) | – | ${range(d.redisRequestsPerTask, 1)} |`,
  );
  push(
    `| Redis commands run per task (those inside BullMQ's scripts included) | – | ${range(d.redisCommandsPerTask, 1)} |`,
  );
  push(`| Redis server CPU ms per task | – | ${range(d.redisCpuMsPerTask, 3)} |`);
  push('');
  const mix = Object.entries(d.commandMix)
    .sort(([, a], [, b]) => b - a)
    .map(([name, perTask]) => `\`${name}\` ${perTask.toFixed(2)}`);
  push(`Commands run per task in the median repetition: ${mix.join(', ')}.`, '');
  push(
    `**The window.** From the \`CreateTaskResult\` in hand to the task's reference stored in the job: median ${ms(d.storeMs.median)} ms, p99 ${ms(d.storeMs.p99 ?? Number.NaN)} ms, ` +
      `at most ${ms(d.storeMs.max)} ms over ${d.reps * d.n} jobs; from the task's \`createdAt\` (the server's clock) to the stored reference: median ${ms(d.windowMs.median)} ms, ` +
      `at most ${ms(d.windowMs.max)} ms. A worker that dies inside it leaves a job whose tool is called again (or, with \`uncertainCall: 'fail'\`, a failed job).`,
    '',
  );
  push(
    "**Takeover.** A worker holding long jobs is killed with SIGKILL while a second one waits; per job, from the kill to the second worker's resumed wait:",
    '',
  );
  push('| lockDuration | stalledInterval | jobs | kill → resumed, ms |', '|---:|---:|---:|---:|');
  for (const t of d.takeover)
    push(
      `| ${t.lockDurationMs.toLocaleString('en-US')} ms | ${t.stalledIntervalMs.toLocaleString('en-US')} ms | ${t.jobs} | ${spread(t.ms)} |`,
    );
  push('');
  push(
    "BullMQ hands a dead worker's job on only once its lock has expired (up to lockDuration after the death) and a stalled-job check has then found it without one. " +
      'Checks run about every stalledInterval, and a worker skips its check when another ran one less than stalledInterval before, so a takeover comes roughly lockDuration plus one to two stalledIntervals after the death. ' +
      'A worker that closes (`processor.close()`) hands its jobs back at once instead.',
    '',
  );
  return lines;
}
