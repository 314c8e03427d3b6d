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

describe('hidden classes across an idle spell', () => {
  it("keeps a handle's optimized result() after every task settled and a full collection ran", async () => {
    const output = await runFixture();
    const line = output.split('\n').find((l) => l.startsWith('{'));
    expect(line, output).toBeDefined();
    const { before, after } = JSON.parse(line!) as { before: boolean; after: boolean };
    // The fixture did get result() optimized (otherwise the check below says nothing).
    expect(before).toBe(true);
    expect(after).toBe(true);
  }, 40_000);
});
