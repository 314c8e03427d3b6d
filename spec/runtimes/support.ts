/**
 * What the runtime suites share: whether a runtime is here (and why not), the suite wrapper that
 * runs, skips or fails accordingly, and where tests put what they produce.
 *
 * Under `npm test` a missing runtime skips its suite, says so on the console and in the suite's
 * name; under `npm run test:runtimes` (`REQUIRE_RUNTIMES=1`) it fails.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { describe, it } from 'vitest';

export const ROOT = new URL('../../', import.meta.url).pathname;
/** Set by `npm run test:runtimes`: a missing runtime fails instead of skipping. */
export const REQUIRED = process.env.REQUIRE_RUNTIMES === '1';

/** Whether a runtime can run here, and if not, why. */
export type Availability =
  { readonly ok: true; readonly version: string } | { readonly ok: false; readonly reason: string };

/** Runs `command --version` (30 s at most). */
export function probe(command: string, hint: string): Availability {
  try {
    const version = execFileSync(command, ['--version'], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .trim()
      .split('\n')[0]!;
    return { ok: true, version };
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${command} not found`
        : `${command} --version failed: ${String((error as Error).message).split('\n')[0]}`;
    return { ok: false, reason: `${why} (${hint})` };
  }
}

/** The binary an npm package of the dev dependencies puts in node_modules/.bin. */
export const bin = (name: string): string => `${ROOT}node_modules/.bin/${name}`;

/** A describe block that runs when `availability.ok`, and otherwise is skipped (saying why) or fails under {@link REQUIRED}. */
export function describeRuntime(name: string, availability: Availability, body: () => void): void {
  if (availability.ok) {
    describe(`${name} (${availability.version})`, body);
    return;
  }
  if (REQUIRED) {
    describe(name, () => {
      it('is installed (npm run test:runtimes needs every runtime)', () => {
        throw new Error(`${name} is missing: ${availability.reason}`);
      });
    });
    return;
  }
  console.warn(`[runtimes] skipped ${name}: ${availability.reason}`);
  describe.skip(`${name} (skipped: ${availability.reason})`, body);
}

/** A fresh folder for what a suite produces (screenshots), under test-output/ (git ignores it). */
export function outputDir(name: string): string {
  const dir = `${ROOT}test-output/${name}/`;
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** An example server over HTTP, with the ids of the tasks it was asked to cancel. */
export interface RecordingServer {
  readonly url: URL;
  readonly cancelled: string[];
  close(): Promise<void>;
}

/** Both example servers over HTTP on 127.0.0.1 (steps of `stepMs`), recording `tasks/cancel`. */
export async function exampleServers(
  stepMs: number,
): Promise<{ readonly legacy: RecordingServer; readonly extension: RecordingServer }> {
  const { serveHttp } = await import('../../examples/http-server.js');
  const { serveExtHttp } = await import('../../examples/ext-http-server.js');
  const legacyCancels: string[] = [];
  const extensionCancels: string[] = [];
  const legacy = await serveHttp(0, { stepMs, onCancel: (taskId) => legacyCancels.push(taskId) });
  const extension = await serveExtHttp({
    stepMs,
    onMessage: (message) => {
      const params = message.params as { taskId?: unknown } | undefined;
      if (message.method === 'tasks/cancel') extensionCancels.push(String(params?.taskId));
    },
  });
  return {
    legacy: { url: legacy.url, cancelled: legacyCancels, close: () => legacy.close() },
    extension: { url: extension.url, cancelled: extensionCancels, close: () => extension.close() },
  };
}
