/**
 * The oldest TypeScript the published declarations compile with, checked as a host sees them: the
 * library's `npm pack` tarball installed into a scratch project with `typescript@5.6` (the floor
 * the README states), and a consumer file that imports every public entry point, compiled with
 * `skipLibCheck: false` against the built dist/ (nothing of lib/ is in reach).
 *
 * Below the floor, TypeScript 5.5.4 fails inside the library's own declarations, whatever the
 * host's settings: `error TS2314: Generic type 'AsyncIterableIterator<T>' requires 1 type
 * argument(s)` (the handle and its status streams are typed `AsyncIterableIterator<Task, void>`;
 * the iterator types took their TReturn and TNext parameters in 5.6). That was checked by hand
 * when the floor was set, and is not run here: a second compiler install would prove nothing
 * about the floor itself.
 *
 * Runtimes: a browser host (DOM lib, no `@types/node`) compiles the root, internal and receiver entries;
 * so does a Node host (`@types/node`, no DOM lib). `mcp-task-client/ai` brings the `ai`
 * package's own declarations, which have needs of their own (at the time of writing, ai 7's need
 * TypeScript 5.7, the DOM lib and `@types/json-schema`): on the floor, no error may come from this
 * library's declarations. `mcp-task-client/otel` compiles whole for a Node host with the oldest
 * `@opentelemetry/api` of its peer range (1.9).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmInstall, pack, runIn, scratchProject } from '../support/packages.js';

/** The oldest TypeScript the published declarations compile with (see the README). */
const FLOOR = '5.6';

const CONSUMER = `import * as root from 'mcp-task-client';
import * as internal from 'mcp-task-client/internal';
import * as receiver from 'mcp-task-client/receiver';
import type { McpClient, ReceiverHandle, Task, TaskClient, TaskHandle } from 'mcp-task-client';

export const entries = [root, internal, receiver] as const;

/** Serves receiver tasks through the receiver's own entry point. */
export function serving(client: McpClient): ReceiverHandle | undefined {
  const tasks = new root.TaskClient(client, {
    serve: receiver.taskReceiver({ elicitation: async () => ({ action: 'decline' }), maxTasks: 10 }),
  });
  return tasks.receiver;
}

/** Uses the handle's iteration, which is where older compilers fail. */
export async function follow(tasks: TaskClient): Promise<Task['status'][]> {
  const handle: TaskHandle = await tasks.callToolAsTask('analyze', { id: 7 }, { timeoutMs: 1_000 });
  const seen: Task['status'][] = [];
  for await (const task of handle) seen.push(task.status);
  await handle.result();
  return seen;
}
`;

const AI_CONSUMER = `import * as ai from 'mcp-task-client/ai';
export const entry = ai;
`;

/** mcp-task-client/otel, against the oldest \`@opentelemetry/api\` its peer range allows. */
const OTEL_CONSUMER = `import { TaskClient, type McpClient } from 'mcp-task-client';
import { otelInstrumentation } from 'mcp-task-client/otel';
import { trace } from '@opentelemetry/api';

export function traced(client: McpClient): TaskClient {
  return new TaskClient(client, { instrumentation: otelInstrumentation({ tracerProvider: trace.getTracerProvider(), requests: 'events' }) });
}
`;

/** A TypeScript diagnostic as `tsc --pretty false` prints it. */
interface Diagnostic {
  /** The file it is in, relative to the scratch project. */
  readonly file: string;
  /** The whole line. */
  readonly line: string;
}

describe(`the published declarations on TypeScript ${FLOOR} (skipLibCheck: false)`, { timeout: 600_000 }, () => {
  let host: ReturnType<typeof scratchProject>;
  beforeAll(async () => {
    host = scratchProject('types-floor');
    const library = await pack('library', host.dir);
    await npmInstall(host.dir, [
      library.tarball,
      `typescript@${FLOOR}`,
      '@types/node@20',
      'ai@7',
      '@opentelemetry/api@1.9',
    ]);
    writeFileSync(join(host.dir, 'consumer.ts'), CONSUMER);
    writeFileSync(join(host.dir, 'ai-consumer.ts'), AI_CONSUMER);
    writeFileSync(join(host.dir, 'otel-consumer.ts'), OTEL_CONSUMER);
  }, 300_000);
  afterAll(() => host?.remove());

  const tsc = (...args: string[]) =>
    runIn(host.dir, process.execPath, [join(host.dir, 'node_modules', 'typescript', 'bin', 'tsc'), ...args]);

  /** Compiles `file` with the given options on the installed compiler; its diagnostics. */
  async function compile(
    name: string,
    file: string,
    options: Record<string, unknown>,
  ): Promise<{ errors: Diagnostic[] }> {
    const config = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        ...options,
      },
      files: [file],
    };
    writeFileSync(join(host.dir, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
    const { stdout } = await tsc('-p', `tsconfig.${name}.json`, '--pretty', 'false');
    const errors = stdout
      .split('\n')
      .filter((line) => line.includes(': error TS'))
      .map((line) => ({ file: line.slice(0, line.indexOf('(')), line }));
    return { errors };
  }

  it('the compiler installed is the floor', async () => {
    const { stdout } = await tsc('--version');
    expect(stdout.trim()).toMatch(new RegExp(`^Version ${FLOOR.replace('.', '\\.')}\\.\\d+$`));
  });

  it('a browser host (DOM lib, no @types/node) compiles the root and internal entry points, with NodeNext and Bundler resolution', async () => {
    const lib = ['ES2022', 'ESNext.Disposable', 'DOM'];
    const nodeNext = await compile('browser', 'consumer.ts', { lib, types: [] });
    expect(nodeNext.errors.map((error) => error.line)).toEqual([]);
    const bundler = await compile('bundler', 'consumer.ts', {
      lib,
      types: [],
      module: 'ESNext',
      moduleResolution: 'Bundler',
    });
    expect(bundler.errors.map((error) => error.line)).toEqual([]);
  });

  it('a Node host (@types/node, no DOM lib) compiles the root and internal entry points', async () => {
    const { errors } = await compile('node', 'consumer.ts', { lib: ['ES2022'], types: ['node'] });
    expect(errors.map((error) => error.line)).toEqual([]);
  });

  it('mcp-task-client/otel compiles for a Node host with @opentelemetry/api 1.9, the oldest its peer range allows', async () => {
    const { errors } = await compile('otel', 'otel-consumer.ts', { lib: ['ES2022'], types: ['node'] });
    expect(errors.map((error) => error.line)).toEqual([]);
  });

  it("mcp-task-client/ai: no error comes from this library's declarations (ai's own are ai's)", async () => {
    const { errors } = await compile('ai', 'ai-consumer.ts', {
      lib: ['ES2022', 'ESNext.Disposable', 'DOM'],
      types: ['node'],
    });
    expect(
      errors
        .filter(
          (error) => !error.file.startsWith('node_modules/') || error.file.startsWith('node_modules/mcp-task-client/'),
        )
        .map((error) => error.line),
    ).toEqual([]);
  });
});
