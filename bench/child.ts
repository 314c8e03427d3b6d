/**
 * Runs one scenario in a fresh process (started by `bench/run.ts` with `--expose-gc`), so each
 * contender × workload gets its own heap, and sends the figures back over IPC.
 */
import { runScenario, type ScenarioSpec } from './scenario.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as ScenarioSpec;
try {
  const result = await runScenario(spec);
  process.send?.({ ok: true, result }, () => process.exit(0));
} catch (error) {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.send?.({ ok: false, error: text }, () => process.exit(1));
}
