/**
 * The browser example (examples/browser/) in headless Chromium, on both task wires: the page
 * connects with SDK v2 over Streamable HTTP to an example server on another origin (so CORS is
 * exercised), runs a task with a live status line and progress bar, answers the task's question
 * in its HTML form, shows the result, and its Cancel button cancels a task on the server (the
 * server saw `tasks/cancel`). Screenshots go to test-output/chromium/.
 *
 * Debian's chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`), driven by playwright-core, which
 * downloads no browser. Real time: steps of a few hundred milliseconds, generous waits.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildBrowserExample } from '../../examples/browser/build.js';
import { servePage } from '../../examples/browser/serve.js';
import { serveExtHttp } from '../../examples/ext-http-server.js';
import { serveHttp } from '../../examples/http-server.js';
import { describeRuntime, outputDir, probe } from './support.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Headless as root on a machine with a closed network: no sandbox, no GPU, no background traffic. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const WAIT = { timeout: 20_000 };

type Server = { readonly url: URL; close(): Promise<void> };

describeRuntime('Chromium', probe(CHROMIUM, 'apt-get install -y chromium, or set CHROMIUM_PATH'), () => {
  let browser: Browser;
  let site: Server;
  const shots = outputDir('chromium');

  beforeAll(async () => {
    await buildBrowserExample();
    site = await servePage(0);
    // playwright-core starts it headless with a new empty profile of its own.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 60_000 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  /** A new page of the example, pointed at `server`, connected; page errors fail the test. */
  async function connected(server: Server, wire: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${site.url.href}?server=${encodeURIComponent(server.url.href)}`);
    await page.click('#connect');
    await page.waitForFunction(
      "document.querySelector('#connection').textContent.startsWith('connected') || document.querySelector('#error').textContent !== ''",
      undefined,
      WAIT,
    );
    expect(await page.textContent('#error')).toBe('');
    expect(await page.textContent('#connection')).toBe(`connected, task wire ${wire}`);
    return { page, errors };
  }

  async function start(page: Page, tool: string, args: object): Promise<void> {
    await page.selectOption('#tool', tool);
    await page.fill('#args', JSON.stringify(args));
    await page.click('#run');
  }

  // (Functions that run in the page are given as text: this suite is typed for Node, not the DOM.)
  const history = (page: Page): Promise<string[]> => page.locator('#history li').allTextContents();
  const settled = (page: Page): Promise<unknown> =>
    page.waitForFunction(
      "document.querySelector('#result').textContent !== '' || document.querySelector('#error').textContent !== ''",
      undefined,
      WAIT,
    );

  /** Clicks Cancel once the status line shows `status`; resolves with the error the page shows. */
  async function cancelAt(page: Page, status: string): Promise<string | null> {
    await page.waitForFunction(
      `document.querySelector('#status').textContent.includes(${JSON.stringify(status)})`,
      undefined,
      WAIT,
    );
    await page.click('#cancel');
    await settled(page);
    expect(await page.textContent('#result')).toBe('');
    return page.textContent('#error');
  }

  it(
    '2025-11-25: status line and progress bar move, the question is answered in the form, Cancel cancels the task on the server',
    { timeout: 120_000 },
    async () => {
      const cancelled: string[] = [];
      const server = await serveHttp(0, { stepMs: 300, onCancel: (taskId) => cancelled.push(taskId) });
      try {
        const { page, errors } = await connected(server, '2025-11-25');

        await start(page, 'analyze', { id: 7, steps: 3 });
        // The bar shows a part done between two progress notifications.
        await page.waitForFunction(
          "(bar => bar.hasAttribute('value') && bar.value > 0 && bar.value < bar.max)(document.querySelector('#progress'))",
          undefined,
          WAIT,
        );
        await settled(page);
        expect(await page.textContent('#result')).toBe('analysis of 7 done in 3 steps');
        expect(await history(page)).toEqual(expect.arrayContaining(['working: step 1/3', 'working: step 2/3']));
        expect((await history(page)).at(-1)).toMatch(/^completed/);
        expect([await page.getAttribute('#progress', 'value'), await page.getAttribute('#progress', 'max')]).toEqual([
          '1',
          '1',
        ]);

        await start(page, 'confirm_delete', { path: '/tmp/report.txt' });
        await page.waitForSelector('#question input[name="confirm"]', WAIT);
        expect(await page.textContent('#status')).toBe('input_required: waiting for confirmation of /tmp/report.txt');
        await page.check('#question input[name="confirm"]');
        await page.screenshot({ path: `${shots}2025-11-25-question.png`, fullPage: true });
        await page.click('#question button[type="submit"]');
        await settled(page);
        expect(await page.textContent('#result')).toBe('deleted /tmp/report.txt');
        expect(await page.isHidden('#question')).toBe(true);

        await start(page, 'analyze', { id: 8, steps: 100 });
        expect(await cancelAt(page, 'step 1/100')).toMatch(/^TaskCancelledError: /);
        const taskId = await page.getAttribute('#status', 'data-task-id');
        expect(cancelled).toEqual([taskId]);
        expect((await history(page)).at(-1)).toMatch(/^cancelled/);
        await page.screenshot({ path: `${shots}2025-11-25-cancelled.png`, fullPage: true });
        expect(errors).toEqual([]);
        await page.close();
      } finally {
        await server.close();
      }
    },
  );

  it(
    'tasks extension: the same page runs a task that asks a question mid-way (answered in the form) and cancels one',
    { timeout: 120_000 },
    async () => {
      const methods: string[] = [];
      const server = await serveExtHttp({ stepMs: 250, onMessage: (message) => methods.push(String(message.method)) });
      try {
        const { page, errors } = await connected(server, 'io.modelcontextprotocol/tasks');

        await start(page, 'analyze', { id: 7 });
        await page.waitForSelector('#question select[name="depth"]', WAIT);
        expect(await page.textContent('#status')).toBe('input_required: waiting for your choice of report depth');
        await page.selectOption('#question select[name="depth"]', 'full');
        await page.screenshot({ path: `${shots}extension-question.png`, fullPage: true });
        await page.click('#question button[type="submit"]');
        await settled(page);
        expect(await page.textContent('#result')).toBe('analysis of dataset 7: full report ready');
        const lines = await history(page);
        expect(lines).toEqual(
          expect.arrayContaining([
            'working: loading dataset 7',
            'working: computing statistics',
            'working: writing the report',
          ]),
        );
        expect(lines.at(-1)).toBe('completed: done');
        expect(methods).toContain('tasks/update');

        await start(page, 'analyze', { id: 8 });
        expect(await cancelAt(page, 'loading dataset 8')).toMatch(/^TaskCancelledError: /);
        expect(methods.filter((method) => method === 'tasks/cancel')).toHaveLength(1);
        await page.screenshot({ path: `${shots}extension-cancelled.png`, fullPage: true });
        expect(errors).toEqual([]);
        await page.close();
      } finally {
        await server.close();
      }
    },
  );
});
