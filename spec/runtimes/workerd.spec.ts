/**
 * The library on Cloudflare's runtime: spec/runtimes/web/worker.ts (the library and SDK v2,
 * bundled by esbuild with the Worker conditions) runs in `workerd` from the npm package, with no
 * Node compatibility flag. Its only outbound network is loopback (`allow = ["local"]`), where the
 * example servers listen; each check is one request to the Worker, which runs the scenario.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { bundleWeb } from './bundle.js';
import { runtimeScenarios } from './scenarios.js';
import { bin, describeRuntime, probe } from './support.js';
import type { Report } from './web/scenario.js';

const WORKERD = bin('workerd');

const CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-11-01",
  globalOutbound = "loopback",
);
`;

/** A port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probeServer = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probeServer.address() as { port: number };
      probeServer.close(() => resolve(port));
    });
    probeServer.on('error', reject);
  });
}

describeRuntime('workerd', probe(WORKERD, 'npm install: the workerd package ships its binary'), () => {
  let workerd: ChildProcess;
  let origin: string;
  const log: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-task-workerd-'));
    await bundleWeb('worker', join(dir, 'worker.js'), ['workerd', 'worker', 'browser']);
    writeFileSync(join(dir, 'config.capnp'), CONFIG);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    workerd = spawn(WORKERD, ['serve', join(dir, 'config.capnp'), '--socket-addr', `http=127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [workerd.stdout!, workerd.stderr!])
      stream.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    // Ready once it answers (a request without server= gets 400).
    for (let tries = 0; ; tries += 1) {
      const answer = await fetch(`${origin}/run`).catch(() => undefined);
      if (answer?.status === 400) break;
      if (tries > 150 || workerd.exitCode !== null) throw new Error(`workerd did not start: ${log.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 90_000);
  afterAll(() => {
    workerd?.kill();
  });

  runtimeScenarios(async (server, deadlineMs) => {
    const query = new URLSearchParams({
      server: server.href,
      ...(deadlineMs === undefined ? {} : { deadlineMs: String(deadlineMs) }),
    });
    const answer = await fetch(`${origin}/run?${query.toString()}`);
    if (answer.status !== 200)
      throw new Error(`the Worker answered ${answer.status}: ${await answer.text()}\n${log.join('')}`);
    return (await answer.json()) as Report;
  });
});
