/**
 * The library's optimized code survives an idle spell: once every task settled and a full garbage
 * collection ran, V8 would drop the hidden classes of the per-task objects (records, handles,
 * timers, open requests) and with them every optimized function specialised for them, so the next
 * burst of tasks ran unoptimized and paid for compiling again. lib/util/shapes.ts keeps those
 * hidden classes alive. The check runs in a child process, where V8's natives syntax can read a
 * function's optimization status (spec/fixtures/idle-gc.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function runFixture(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--allow-natives-syntax', '--expose-gc', 'spec/fixtures/idle-gc.ts'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

/** The fixture's report, from one run shared by the tests below. */
interface IdleReport {
  readonly before: boolean;
  readonly after: boolean;
  readonly timersBefore: boolean;
  readonly timersAfter: boolean;
}

let report: Promise<{ report: IdleReport | undefined; output: string }> | undefined;

function idleReport(): Promise<{ report: IdleReport | undefined; output: string }> {
  report ??= runFixture().then((output) => {
    const line = output.split('\n').find((l) => l.startsWith('{'));
    return { report: line === undefined ? undefined : (JSON.parse(line) as IdleReport), output };
  });
  return report;
}

describe('hidden classes across an idle spell', () => {
  it("keeps a handle's optimized result() after every task settled and a full collection ran", async () => {
    const { report, output } = await idleReport();
    expect(report, output).toBeDefined();
    // The fixture did get result() optimized (otherwise the check below says nothing).
    expect(report!.before).toBe(true);
    expect(report!.after).toBe(true);
  }, 40_000);

  it("keeps Node's timer code optimized: the scheduler keeps one spent timer, so their hidden class survives", async () => {
    const { report, output } = await idleReport();
    expect(report, output).toBeDefined();
    // clearTimeout was optimized on Node timer objects (the client's timers are of their class),
    // and is still once no task is left and full collections ran (no other timer object is alive
    // in the fixture then).
    expect(report!.timersBefore).toBe(true);
    expect(report!.timersAfter).toBe(true);
  }, 40_000);
});
