/** The CLI's pure parts: argument syntax, form fields and their checks, answers, rendering, exit codes. */
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { PassThrough, Writable } from 'node:stream';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { TaskCancelledError, TaskFailedError, TaskOptionError, TaskTimeoutError } from 'mcp-task-client';
import {
  MAX_TIMER_MS,
  UsageError,
  parseDuration,
  parseHeaders,
  parseToolArgs,
  parseWire,
  splitCommandLine,
  urlOption,
} from '../../cli/src/args.js';
import {
  AnswerQueue,
  loadAnswers,
  toElicitAnswer,
  toSamplingAnswer,
  toUrlElicitAnswer,
} from '../../cli/src/answers.js';
import { EXIT, describeError, outcomeOf } from '../../cli/src/exit.js';
import { written } from '../../cli/src/flush.js';
import { HELD_SIGNALS, stopChild } from '../../cli/src/server-process.js';
import { main } from '../../cli/src/program.js';
import { colors, formatElapsed } from '../../cli/src/format.js';
import { describeSampling } from '../../cli/src/forms.js';
import { checkWritable, readReference, temporaryReferencePath, writeReference } from '../../cli/src/ref-file.js';
import { renderResult } from '../../cli/src/render.js';
import { RunDeadline, inSeconds, reserveOf } from '../../cli/src/run-deadline.js';
import { checkNumber, checkSelection, checkText, fieldsOf, hintOf, type Field } from '../../cli/src/schema-fields.js';
import { StatusLine } from '../../cli/src/status-line.js';
import { describeConnectFailure, httpFailureReason } from '../../cli/src/connect-errors.js';
import { Reachability } from '../../cli/src/reachability.js';
import { jsonSafe, terminalSafe } from '../../cli/src/sanitize.js';
import { removeScratch, scratch, stripAnsi } from './support/cli.js';

afterAll(removeScratch);

/** Runs `run` with what the CLI writes to stdout and stderr captured (and kept off the test's output). */
async function captured<T>(run: () => Promise<T>): Promise<{ value: T; written: string }> {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    return { value: await run(), written: chunks.join('') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
describe('argument syntax', () => {
  it('parses durations: ms, s, m, h, and a bare number of seconds', () => {
    expect(parseDuration('500ms', '--timeout')).toBe(500);
    expect(parseDuration('30s', '--timeout')).toBe(30_000);
    expect(parseDuration('5m', '--timeout')).toBe(300_000);
    expect(parseDuration('1h', '--timeout')).toBe(3_600_000);
    expect(parseDuration('2.5', '--timeout')).toBe(2_500);
    expect(parseDuration('0', '--ttl')).toBe(0);
    // 0 where it has a meaning (--connect-timeout 0: no limit); never a duration that rounds to it.
    expect(parseDuration('0s', '--connect-timeout', MAX_TIMER_MS)).toBe(0);
    expect(() => parseDuration('0.4ms', '--connect-timeout', MAX_TIMER_MS)).toThrow(
      '--connect-timeout must be at least 1ms, got "0.4ms"',
    );
    // Where 0 has none (--timeout 0 would act at once), it is refused.
    expect(() => parseDuration('0', '--timeout', MAX_TIMER_MS, false)).toThrow(
      '--timeout must be at least 1ms, got "0"',
    );
    expect(parseDuration('0.6ms', '--timeout', MAX_TIMER_MS, false)).toBe(1);
    for (const bad of ['', 'soon', '-1s', '5 minutes', '1d', 'ms']) {
      expect(() => parseDuration(bad, '--timeout'), bad).toThrow(UsageError);
    }
  });

  it('refuses a duration longer than its limit: --timeout stops at what timers honour (2^31-1 ms), not 1 ms later', () => {
    // setTimeout runs anything longer after 1 ms: `--timeout 600h` used to exit 124 at once.
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(parseDuration('596h', '--timeout', MAX_TIMER_MS)).toBe(596 * 3_600_000);
    expect(parseDuration(`${MAX_TIMER_MS}ms`, '--timeout', MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    for (const long of ['600h', '597h', `${MAX_TIMER_MS + 1}ms`]) {
      expect(() => parseDuration(long, '--timeout', MAX_TIMER_MS), long).toThrow(
        /--timeout: ".*" is too long; the longest is 2147483647 ms \(about 24\.8 days\)/,
      );
    }
    // Without a limit (--ttl is only sent to the server), a long duration is fine.
    expect(parseDuration('600h', '--ttl')).toBe(2_160_000_000);
  });

  it('parses --wire: auto by default, the two wires by name or short alias, anything else a usage error', () => {
    expect(parseWire(undefined)).toBe('auto');
    expect(parseWire('auto')).toBe('auto');
    expect(parseWire('2025-11-25')).toBe('2025-11-25');
    expect(parseWire('2025')).toBe('2025-11-25');
    expect(parseWire('io.modelcontextprotocol/tasks')).toBe('io.modelcontextprotocol/tasks');
    expect(parseWire('ext')).toBe('io.modelcontextprotocol/tasks');
    expect(parseWire(' EXT ')).toBe('io.modelcontextprotocol/tasks');
    for (const bad of ['', 'v2', 'tasks', '2025-06-18', 'sdk-v1']) {
      expect(() => parseWire(bad), bad).toThrow(UsageError);
    }
    // A protocol version is not a wire name: the message names the wire that version uses.
    expect(() => parseWire('2026-07-28')).toThrow(/the 2026-07-28 task wire is io\.modelcontextprotocol\/tasks/);
  });

  it('builds tool arguments from key=value pairs (JSON values when they parse) over --args', () => {
    expect(
      parseToolArgs(['id=7', 'name=report', 'on=true', 'tags=["a","b"]', 'quoted="7"', 'eq=a=b'], undefined),
    ).toEqual({
      id: 7,
      name: 'report',
      on: true,
      tags: ['a', 'b'],
      quoted: '7',
      eq: 'a=b',
    });
    expect(parseToolArgs(['id=8'], '{"id":7,"steps":2}')).toEqual({ id: 8, steps: 2 });
    expect(() => parseToolArgs(['novalue'], undefined)).toThrow(UsageError);
    expect(() => parseToolArgs(['=1'], undefined)).toThrow(UsageError);
    expect(() => parseToolArgs([], '[1]')).toThrow(UsageError);
    expect(() => parseToolArgs([], '{')).toThrow(UsageError);
  });

  it('keeps a number too large for a double as the string typed (JSON would send it as null)', () => {
    expect(parseToolArgs(['big=1e400', 'small=-1e400', 'list=[1,1e400]', 'fine=1e300'], undefined)).toEqual({
      big: '1e400',
      small: '-1e400',
      list: '[1,1e400]',
      fine: 1e300,
    });
  });

  it('keeps a whole number beyond 2^53 as the string typed (a double would send another number: an id changed)', () => {
    expect(
      parseToolArgs(
        ['id=12345678901234567890', 'neg=-9007199254740993', 'safe=9007199254740991', 'exp=1e20'],
        undefined,
      ),
    ).toEqual({ id: '12345678901234567890', neg: '-9007199254740993', safe: 9007199254740991, exp: 1e20 });
  });

  it('--ttl 0 is a usage error, as 0.4ms is: the server could delete the task as soon as it made it', async () => {
    const { written } = await captured(async () => {
      for (const ttl of ['0', '0ms', '0.4ms'])
        expect(await main(['call', 'analyze', '--ttl', ttl]), ttl).toBe(EXIT.usage);
    });
    expect(written).toContain('--ttl must be at least 1ms, got "0"');
  });

  it('the bundled example server keeps a task at most 2^31-1 ms: a longer ttl is lowered, not a deletion after 1 ms', async () => {
    const { exampleServerPair } = await import('../helpers.js');
    const { TaskClient } = await import('mcp-task-client');
    const pair = await exampleServerPair({ stepMs: 20 });
    const tasks = new TaskClient(pair.client as never);
    try {
      const handle = await tasks.callToolAsTask('analyze', { steps: 2 }, { ttlMs: 600 * 3_600_000 });
      await expect(handle.result()).resolves.toMatchObject({ content: [{ text: 'analysis of 1 done in 2 steps' }] });
      expect(handle.task?.ttl).toBe(MAX_TIMER_MS);
    } finally {
      await tasks.close();
      await pair.close();
    }
  });

  it('--url takes only http and https URLs (usage error otherwise)', () => {
    expect(urlOption('http://127.0.0.1:3000/mcp')?.href).toBe('http://127.0.0.1:3000/mcp');
    expect(urlOption('https://tasks.example.com/mcp')?.protocol).toBe('https:');
    for (const bad of ['ftp://h/mcp', 'file:///tmp/mcp', 'ws://h/mcp'])
      expect(() => urlOption(bad), bad).toThrow(/--url: a Streamable HTTP server's URL starts with http/);
  });

  it('--url refuses a user name or password (fetch sends neither) as a usage error that shows neither', async () => {
    for (const bad of ['http://me:sk-live-SECRET@127.0.0.1:3000/mcp', 'https://sk-live-SECRET@h/mcp']) {
      expect(() => urlOption(bad), bad).toThrow(UsageError);
      expect(() => urlOption(bad), bad).toThrow(/Authorization: Basic/);
      expect(() => urlOption(bad), bad).not.toThrow(/SECRET/);
    }
    // Nor does any other refusal of a value that may carry them.
    expect(() => urlOption('ftp://me:sk-live-SECRET@h/mcp')).toThrow(/got ftp:\/\/…@h\/mcp$/);
    expect(() => urlOption('http://me:sk-live-SECRET@h:99999/mcp')).not.toThrow(/SECRET/);
    const { value, written } = await captured(() =>
      main(['call', 'x', '--url', 'http://me:sk-live-SECRET@127.0.0.1:9/mcp']),
    );
    expect(value).toBe(EXIT.usage);
    expect(written).toContain('--url: the URL carries a user name or password');
    expect(written).not.toContain('SECRET');
  });

  it('names a passed deadline by --timeout as the user typed it', () => {
    const error = new TaskTimeoutError(
      'Task for tool "analyze" timed out after 1818 ms; the remote task was cancelled',
      {
        timeoutMs: 1818,
        elapsedMs: 1818,
        remoteCancel: 'cancelled',
      },
    );
    expect(describeError(error, '2s')).toBe(
      'Task for tool "analyze" timed out: --timeout 2s passed; the remote task was cancelled',
    );
    expect(describeError(error)).toBe(error.message);
  });

  it('help names its guide by a path that exists wherever mcp-task is installed (the library package ships docs/)', async () => {
    const written: string[] = [];
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await main(['--help'])).toBe(EXIT.ok);
      expect(await main(['help', 'doctor'])).toBe(EXIT.ok);
    } finally {
      out.mockRestore();
    }
    const guides = [...written.join('').matchAll(/^Documentation: (.+)$/gm)].map((match) => match[1]!);
    expect(guides.map((path) => basename(path))).toEqual(['cli.md', 'doctor.md']);
    // Absolute, not a path relative to wherever the command happens to run.
    for (const path of guides) expect(isAbsolute(path) && existsSync(path), path).toBe(true);
  });

  it('help shown instead of a command (none given, help for an unknown command) is a usage error; help asked for is not', async () => {
    const written: string[] = [];
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await main([])).toBe(EXIT.usage);
      expect(await main(['help', 'nosuch'])).toBe(EXIT.usage);
      expect(await main(['help'])).toBe(EXIT.ok);
      expect(await main(['help', 'call'])).toBe(EXIT.ok);
      expect(await main(['call', '--help'])).toBe(EXIT.ok);
      expect(await main(['--version'])).toBe(EXIT.ok);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(written.join('')).toContain('Usage: mcp-task');
  });

  it('merges several JSON objects in order, pairs last, and names the option in its errors (doctor --args, --fail-args)', () => {
    expect(parseToolArgs(['steps=3'], ['{"id":7,"steps":2}', '{"id":8}'], '--fail-args')).toEqual({ id: 8, steps: 3 });
    expect(() => parseToolArgs([], ['{"a":1}', '[1]'], '--fail-args')).toThrow('--fail-args must be a JSON object');
    expect(() => parseToolArgs([], ['{'], '--input-args')).toThrow(/^--input-args is not valid JSON/);
  });

  it('takes __proto__ as an argument like any other key, from a pair or from --args', () => {
    const fromPair = parseToolArgs(['__proto__={"text":"boo"}', 'n=1'], undefined);
    expect(Object.getPrototypeOf(fromPair)).toBe(Object.prototype);
    expect(Object.keys(fromPair)).toEqual(['__proto__', 'n']);
    expect(JSON.stringify(fromPair)).toBe('{"__proto__":{"text":"boo"},"n":1}');
    const fromJson = parseToolArgs(['__proto__=2'], '{"__proto__":1,"constructor":3}');
    expect(Object.getPrototypeOf(fromJson)).toBe(Object.prototype);
    expect(JSON.stringify(fromJson)).toBe('{"__proto__":2,"constructor":3}');
  });

  it('refuses header names that are not HTTP tokens and values with CR, LF, NUL or beyond Latin-1', () => {
    expect(parseHeaders(["X-Odd_Name!#$%&'*+.^`|~: é\tx"])).toEqual({ "X-Odd_Name!#$%&'*+.^`|~": 'é\tx' });
    for (const bad of [
      'Bad Name: x',
      'Bäd: x',
      '(x): y',
      'X-A: a\r\nInjected: 1',
      'X-A: a\nb',
      'X-A: a\u0000b',
      'X-A: €',
    ]) {
      expect(() => parseHeaders([bad]), JSON.stringify(bad)).toThrow(UsageError);
    }
  });

  it('shows no more of a malformed --header than its first word: the rest may be a secret', () => {
    for (const [bad, shown] of [
      ['Authorization Bearer sk-live-SECRET', '"Authorization…"'],
      ['Authorization Bearer sk-live-SECRET: x', '"Authorization…"'],
      ['sk-live-SECRET', '"sk-live-SECRET"'],
    ] as const) {
      const error = (() => {
        try {
          parseHeaders([bad]);
        } catch (caught) {
          return caught as Error;
        }
        return undefined;
      })();
      expect(error, bad).toBeInstanceOf(UsageError);
      expect(error?.message).toContain(shown);
      if (bad.includes(' ')) expect(error?.message).not.toContain('SECRET');
    }
  });

  it('parses headers and stdio command lines', () => {
    expect(parseHeaders(['Authorization: Bearer a:b', 'X-Key=1'])).toEqual({
      Authorization: 'Bearer a:b',
      'X-Key': '1',
    });
    expect(() => parseHeaders(['nothing'])).toThrow(UsageError);
    expect(splitCommandLine(`node --import tsx "my dir/server.ts" 'a b' c\\ d "q\\"x"`)).toEqual([
      'node',
      '--import',
      'tsx',
      'my dir/server.ts',
      'a b',
      'c d',
      'q"x',
    ]);
    expect(splitCommandLine('run ""')).toEqual(['run', '']);
    expect(() => splitCommandLine('  ')).toThrow(UsageError);
    expect(() => splitCommandLine('node "open')).toThrow(UsageError);
  });
});

describe('form fields from requestedSchema', () => {
  const schema = {
    type: 'object',
    properties: {
      format: { type: 'string', title: 'Format', enum: ['pdf', 'html'], enumNames: ['PDF', 'HTML'] },
      size: {
        type: 'string',
        oneOf: [
          { const: 's', title: 'Small' },
          { const: 'l', title: 'Large' },
        ],
      },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 },
      copies: { type: 'integer', minimum: 1, maximum: 5 },
      ratio: { type: 'number', maximum: 1 },
      urgent: { type: 'boolean', default: true },
      email: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'date-time' },
      name: { type: 'string', minLength: 2, maxLength: 4 },
    },
    required: ['format', 'copies', 'name'],
  };
  const fields = fieldsOf(schema);
  const field = <K extends Field['kind']>(key: string, kind: K): Extract<Field, { kind: K }> => {
    const found = fields.find((f) => f.key === key);
    expect(found?.kind).toBe(kind);
    return found as Extract<Field, { kind: K }>;
  };

  it('maps each property to its prompt kind', () => {
    expect(fields.map((f) => [f.key, f.kind, f.required])).toEqual([
      ['format', 'select', true],
      ['size', 'select', false],
      ['tags', 'multiselect', false],
      ['copies', 'number', true],
      ['ratio', 'number', false],
      ['urgent', 'confirm', false],
      ['email', 'text', false],
      ['site', 'text', false],
      ['day', 'text', false],
      ['at', 'text', false],
      ['name', 'text', true],
    ]);
    expect(field('format', 'select').choices).toEqual([
      { value: 'pdf', label: 'PDF' },
      { value: 'html', label: 'HTML' },
    ]);
    expect(field('size', 'select').choices.map((c) => c.label)).toEqual(['Small', 'Large']);
    expect(field('urgent', 'confirm').default).toBe(true);
    expect(hintOf(field('copies', 'number'))).toBe('1-5, integer');
    expect(hintOf(field('email', 'text'))).toBe('email, optional');
    expect(fieldsOf(undefined)).toEqual([]);
  });

  it('checks numbers: required, numeric, integer, minimum and maximum', () => {
    const copies = field('copies', 'number');
    expect(checkNumber(copies, '')).toBe('copies is required');
    expect(checkNumber(copies, 'abc')).toBe('Enter a number');
    expect(checkNumber(copies, '2.5')).toBe('Enter a whole number');
    expect(checkNumber(copies, '0')).toBe('Must be at least 1');
    expect(checkNumber(copies, '6')).toBe('Must be at most 5');
    expect(checkNumber(copies, ' 3 ')).toBeUndefined();
    const ratio = field('ratio', 'number');
    expect(checkNumber(ratio, '')).toBeUndefined();
    expect(checkNumber(ratio, '0.5')).toBeUndefined();
    expect(checkNumber(ratio, '1e3')).toBe('Must be at most 1');
  });

  it('checks strings: formats email, uri, date, date-time and lengths', () => {
    expect(checkText(field('email', 'text'), 'me@example.com')).toBeUndefined();
    expect(checkText(field('email', 'text'), 'me@example')).toMatch(/email/);
    expect(checkText(field('email', 'text'), '')).toBeUndefined(); // optional
    expect(checkText(field('site', 'text'), 'https://example.com/x')).toBeUndefined();
    expect(checkText(field('site', 'text'), 'example.com')).toMatch(/URI/);
    expect(checkText(field('day', 'text'), '2026-02-28')).toBeUndefined();
    expect(checkText(field('day', 'text'), '2026-02-30')).toMatch(/YYYY-MM-DD/);
    expect(checkText(field('at', 'text'), '2026-02-28T10:00:00Z')).toBeUndefined();
    expect(checkText(field('at', 'text'), '2026-02-28')).toMatch(/date-time/);
    // A day the month does not have (Date.parse would roll it over to March).
    expect(checkText(field('at', 'text'), '2026-02-30T10:00:00Z')).toMatch(/date-time/);
    expect(checkText(field('name', 'text'), '')).toBe('name is required');
    expect(checkText(field('name', 'text'), 'a')).toMatch(/At least 2/);
    expect(checkText(field('name', 'text'), 'abcde')).toMatch(/At most 4/);
    expect(checkSelection(field('tags', 'multiselect'), ['a', 'b', 'c'])).toMatch(/at most 2/);
    expect(checkSelection(field('tags', 'multiselect'), ['a'])).toBeUndefined();
  });
});

describe('answers given in advance', () => {
  it('reads --answer values, then a JSON array or JSON-lines file, and hands them out in order', () => {
    const dir = scratch();
    writeFileSync(join(dir, 'a.json'), '[{"confirm":true}, "text"]');
    writeFileSync(join(dir, 'b.jsonl'), '{"action":"decline"}\n\n{"action":"reject"}\n');
    expect(loadAnswers(['1'], join(dir, 'a.json'))).toEqual([1, { confirm: true }, 'text']);
    expect(loadAnswers([], join(dir, 'b.jsonl'))).toEqual([{ action: 'decline' }, { action: 'reject' }]);
    expect(() => loadAnswers(['{'], undefined)).toThrow(UsageError);
    expect(() => loadAnswers([], join(dir, 'missing.json'))).toThrow(UsageError);
    const queue = new AnswerQueue(['x', 'y']);
    expect(queue.next()).toEqual({ value: 'x', number: 1 });
    expect(queue.next()).toEqual({ value: 'y', number: 2 });
    expect(queue.next()).toBeUndefined();
  });

  it('turns answers into elicitation and sampling results', () => {
    expect(toElicitAnswer({ confirm: true })).toEqual({ action: 'accept', content: { confirm: true } });
    expect(toElicitAnswer({ action: 'accept', content: { n: 1 } })).toEqual({ action: 'accept', content: { n: 1 } });
    expect(toElicitAnswer({ action: 'decline' })).toEqual({ action: 'decline' });
    expect(toElicitAnswer({ action: 'cancel', content: { x: 1 } })).toEqual({ action: 'cancel' });
    expect(toElicitAnswer('yes')).toBeUndefined();
    expect(toElicitAnswer({ action: 'maybe' })).toBeUndefined();
    // Content that does not fit an ElicitResult declines (undefined) instead of accepting `{}` or sending it on.
    expect(toElicitAnswer({ action: 'accept', content: 'yes' })).toBeUndefined();
    expect(toElicitAnswer({ action: 'accept', content: [1] })).toBeUndefined();
    expect(toElicitAnswer({ action: 'accept', content: { nested: { x: 1 } } })).toBeUndefined();
    expect(toElicitAnswer({ confirm: null })).toBeUndefined();
    expect(toElicitAnswer({ action: 'accept' })).toEqual({ action: 'accept', content: {} });
    expect(toElicitAnswer({ tags: ['a', 'b'], n: 1.5, ok: false })).toEqual({
      action: 'accept',
      content: { tags: ['a', 'b'], n: 1.5, ok: false },
    });
    expect(toSamplingAnswer('hello')).toEqual({
      result: expect.objectContaining({ role: 'assistant', content: { type: 'text', text: 'hello' } }),
    });
    expect(toSamplingAnswer({ action: 'reject' })).toEqual({ reject: true });
    expect(toSamplingAnswer({ content: { type: 'text', text: 'x' }, model: 'm' })).toEqual({
      result: { role: 'assistant', model: 'm', content: { type: 'text', text: 'x' } },
    });
    expect(toSamplingAnswer({ confirm: true })).toBeUndefined();
  });

  it('a URL-mode elicitation takes an action only: its result has no content', () => {
    expect(toUrlElicitAnswer({ action: 'accept' })).toEqual({ action: 'accept' });
    expect(toUrlElicitAnswer({ action: 'decline' })).toEqual({ action: 'decline' });
    expect(toUrlElicitAnswer({ action: 'cancel', content: { x: 1 } })).toEqual({ action: 'cancel' });
    // Content to accept does not fit (declined, with a note), nor does anything else.
    expect(toUrlElicitAnswer({ action: 'accept', content: {} })).toBeUndefined();
    expect(toUrlElicitAnswer({ confirm: true })).toBeUndefined();
    expect(toUrlElicitAnswer({ action: 'maybe' })).toBeUndefined();
    expect(toUrlElicitAnswer('accept')).toBeUndefined();
  });
});

describe('--timeout as the run deadline', () => {
  it('keeps a reserve for the remote cancel and the shutdown: 2.5 s, or a quarter of --timeout', () => {
    expect(reserveOf(60_000)).toEqual({ reserveMs: 2_500, cancelGraceMs: 2_000 });
    expect(reserveOf(10_000)).toEqual({ reserveMs: 2_500, cancelGraceMs: 2_000 });
    expect(reserveOf(2_000)).toEqual({ reserveMs: 500, cancelGraceMs: 400 });
    expect(reserveOf(3)).toEqual({ reserveMs: 0, cancelGraceMs: 0 });
  });

  it('gives the task what is left less the reserve, and bounds every later wait by the deadline', () => {
    let now = 1_000;
    const deadline = new RunDeadline(20_000, now, () => now);
    now += 4_000; // connecting took 4 s
    expect(deadline.left()).toBe(16_000);
    expect(deadline.taskMs()).toBe(13_500);
    expect(deadline.bound(5_000)).toBe(5_000);
    now += 14_000;
    expect(deadline.bound(5_000)).toBe(2_000);
    now += 5_000;
    expect(deadline.left()).toBe(0);
    expect(deadline.taskMs()).toBe(1);
    expect(inSeconds(2_000)).toBe('2 s');
    expect(inSeconds(2_460)).toBe('2.5 s');
  });
});

describe('output', () => {
  const plain = colors(false);

  it('renders results: text as text, structured content as JSON, media and resources as summaries', () => {
    const text = renderResult(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'audio', data: 'AAAAAAAA', mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
          { type: 'resource', resource: { uri: 'file:///b.txt', mimeType: 'text/plain', text: 'abc' } },
        ],
        structuredContent: { n: 1 },
      },
      plain,
    );
    expect(text.split('\n')).toEqual([
      'hello',
      '[image image/png, 3 B]',
      '[audio audio/wav, 6 B]',
      '[resource link file:///a.txt "a"]',
      '[resource file:///b.txt, text/plain, 3 chars]',
      '{',
      '  "n": 1',
      '}',
    ]);
    expect(renderResult({ content: [] }, plain)).toBe('(empty result)');
  });

  it('describes a sampling request as text', () => {
    expect(
      describeSampling({
        systemPrompt: 'Be brief',
        messages: [
          { role: 'user', content: { type: 'text', text: 'Summarize: x' } },
          { role: 'user', content: { type: 'image', mimeType: 'image/png' } },
        ],
        maxTokens: 10,
      }),
    ).toBe('system: Be brief\nuser: Summarize: x\nuser: [image image/png]\n(at most 10 tokens)');
  });

  it('formats elapsed times and draws the status line with a progress bar, never wider than the terminal', () => {
    expect([formatElapsed(850), formatElapsed(12_340), formatElapsed(125_000), formatElapsed(3_720_000)]).toEqual([
      '850ms',
      '12.3s',
      '2m05s',
      '1h02m',
    ]);
    const written: string[] = [];
    const line = new StatusLine(
      { write: (text: string) => written.push(text), columns: 60 },
      plain,
      Date.now() - 1_500,
      1_000_000,
    );
    let counts = { polls: 3, notifications: 1, retries: 0 };
    line.update({
      task: { taskId: 't', status: 'working', statusMessage: 'step 2/4', createdAt: '', lastUpdatedAt: '', ttl: null },
      progress: { progress: 2, total: 4 },
      counts: () => counts,
    });
    expect(line.render(Date.now())).toMatch(
      /^. working step 2\/4 · 1\.5s · 3 polls, 1 notification · \[##########----------\] 2\/4$/,
    );
    // The numbers are read again on every redraw; retries show once there are some.
    counts = { polls: 4, notifications: 1, retries: 2 };
    expect(line.render(Date.now())).toContain(' · 4 polls, 1 notification, 2 retries · ');
    // The task wire comes last, so a narrow terminal cuts it first.
    line.update({ wire: 'io.modelcontextprotocol/tasks' });
    expect(line.render(Date.now())).toMatch(/ · \[#+-+\] 2\/4 · io\.modelcontextprotocol\/tasks$/);
    line.start();
    line.print('a permanent line');
    line.stop();
    const drawn = written.map((text) => stripAnsi(text).replace('\r', '')).filter((text) => text.includes('working'));
    expect(drawn.length).toBeGreaterThan(0);
    for (const text of drawn) expect([...text].length).toBeLessThanOrEqual(59);
    expect(written.join('')).toContain('a permanent line\n');
  });

  it('maps errors to exit codes', () => {
    expect(outcomeOf(new TaskTimeoutError('t', { timeoutMs: 1, elapsedMs: 1, remoteCancel: 'cancelled' }))).toEqual({
      outcome: 'timeout',
      exitCode: EXIT.timeout,
    });
    expect(outcomeOf(new TaskCancelledError('c', {}))).toEqual({ outcome: 'cancelled', exitCode: 130 });
    expect(outcomeOf(new TaskFailedError('f', {}))).toEqual({ outcome: 'failed', exitCode: 1 });
    expect(outcomeOf(new UsageError('u')).exitCode).toBe(2);
    expect(outcomeOf(new TaskOptionError('o', { option: 'x' })).exitCode).toBe(2);
    expect(outcomeOf(new Error('other')).exitCode).toBe(1);
  });

  it('saves and reads reference files; the session id lives in the reference', () => {
    const file = join(scratch(), 'ref.json');
    const reference = {
      v: 2 as const,
      taskId: 'abc',
      toolName: 'analyze',
      createdAt: '2026-01-01T00:00:00Z',
      ttl: null,
      server: 's@1',
      wire: '2025-11-25' as const,
      sessionId: 'sid',
      capabilities: { cancel: true, list: true },
    };
    // An existing file readable by others is replaced by a new one of the owner's only: it never
    // holds the task id itself (it was written in place, then its mode changed), and nothing is left beside it.
    writeFileSync(file, 'old', { mode: 0o644 });
    chmodSync(file, 0o644);
    const before = statSync(file).ino;
    writeReference(file, { v: 2, reference, url: 'http://127.0.0.1:1/mcp' });
    expect(statSync(file).ino).not.toBe(before);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(file)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ v: 2, reference, url: 'http://127.0.0.1:1/mcp' });
    expect(readReference(file)).toEqual({ v: 2, reference, url: 'http://127.0.0.1:1/mcp' });
    // A version 1 file kept the session id beside the reference: it moves into the reference.
    const { sessionId: _sid, ...withoutSession } = reference;
    writeFileSync(
      file,
      JSON.stringify({ v: 1, reference: withoutSession, url: 'http://127.0.0.1:1/mcp', sessionId: 'old' }),
    );
    expect(readReference(file).reference).toEqual({ ...withoutSession, sessionId: 'old' });
    writeFileSync(file, JSON.stringify({ v: 1, reference, url: 'http://127.0.0.1:1/mcp', sessionId: 'old' }));
    expect(readReference(file).reference.sessionId).toBe('sid');
    writeFileSync(file, JSON.stringify(reference));
    expect(readReference(file).reference.taskId).toBe('abc');
    writeFileSync(file, '{}');
    expect(() => readReference(file)).toThrow(UsageError);
  });

  it('checks that --save-ref can be written before anything starts', () => {
    const dir = scratch();
    checkWritable(join(dir, 'new.json'), '--save-ref');
    writeFileSync(join(dir, 'old.json'), '{}');
    checkWritable(join(dir, 'old.json'), '--save-ref');
    expect(() => checkWritable(join(dir, 'missing', 'ref.json'), '--save-ref')).toThrow(
      /--save-ref: cannot write .*: no directory/,
    );
    expect(() => checkWritable(dir, '--save-ref')).toThrow(/not a regular file/);
    expect(() => checkWritable(join(dir, 'old.json', 'x.json'), '--save-ref')).toThrow(UsageError);
  });

  it('a temporary reference file has a random name (nothing of the task id) and mode 0600; it is never written through an existing path', () => {
    const first = temporaryReferencePath();
    const second = temporaryReferencePath();
    expect(dirname(first)).toBe(tmpdir());
    expect(first).toMatch(/mcp-task-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$/);
    expect(second).not.toBe(first);
    const file = join(scratch(), 'tmp-ref.json');
    const reference = {
      v: 2 as const,
      taskId: 'secret-task-id',
      toolName: 't',
      createdAt: '2026-01-01T00:00:00Z',
      ttl: null,
      server: 's@1',
      wire: '2025-11-25' as const,
    };
    writeReference(file, { v: 2, reference }, { exclusive: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(() => writeReference(file, { v: 2, reference }, { exclusive: true })).toThrow(/EEXIST/);
    const planted = join(scratch(), 'planted-link.json');
    symlinkSync(join(scratch(), 'elsewhere.json'), planted);
    expect(() => writeReference(planted, { v: 2, reference }, { exclusive: true })).toThrow(/EEXIST/);
    // A --save-ref file that already exists is overwritten, and gets mode 0600 too.
    const saved = join(scratch(), 'saved-ref.json');
    writeFileSync(saved, '{}', { mode: 0o644 });
    writeReference(saved, { v: 2, reference });
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(readReference(saved).reference.taskId).toBe('secret-task-id');
  });
});

describe('terminal hygiene', () => {
  it('makes every control character visible: C0 and DEL as control pictures, C1 as U+FFFD; newlines and tabs kept only in multi-line text', () => {
    expect(terminalSafe('a\u001b]0;title\u0007b')).toBe('a␛]0;title␇b');
    expect(terminalSafe('x\u009b31my\u007f\u0085')).toBe('x\ufffd31my␡\ufffd');
    expect(terminalSafe('over\rwritten')).toBe('over␍written');
    expect(terminalSafe('one\ntwo\tthree')).toBe('one two three');
    expect(terminalSafe('one\ntwo\tthree', { multiline: true })).toBe('one\ntwo\tthree');
    expect(terminalSafe('plain text, ünïcödé ✔')).toBe('plain text, ünïcödé ✔');
  });

  it('JSON keeps the text exactly, with DEL and C1 escaped too', () => {
    const value = { text: 'a\u001b[2J\u009b\u007f' };
    const line = jsonSafe(value);
    expect(line).toBe('{"text":"a\\u001b[2J\\u009b\\u007f"}');
    expect(JSON.parse(line)).toEqual(value);
  });
});

describe('why a connection failed', () => {
  const fetchFailed = (cause: object): Error => Object.assign(new TypeError('fetch failed'), { cause });
  it('digs the cause out of the chain the SDKs wrap it in', () => {
    const wrapped = (cause: object): Error =>
      new Error('Version negotiation probe failed: fetch failed', { cause: fetchFailed(cause) });
    expect(httpFailureReason(wrapped({ code: 'ECONNREFUSED' }))).toBe('connection refused');
    expect(httpFailureReason(wrapped({ code: 'ENOTFOUND', hostname: 'nowhere.example' }))).toBe(
      'DNS lookup failed: no such host nowhere.example',
    );
    expect(httpFailureReason(wrapped({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toBe(
      'TLS error: DEPTH_ZERO_SELF_SIGNED_CERT',
    );
    expect(httpFailureReason(wrapped({ code: 'ERR_SSL_WRONG_VERSION_NUMBER', reason: 'wrong version number' }))).toBe(
      'TLS error: wrong version number',
    );
    expect(httpFailureReason(Object.assign(new Error('the server denied access (HTTP 403)'), { status: 403 }))).toBe(
      'HTTP 403',
    );
    expect(httpFailureReason(new Error('something else'))).toBeUndefined();
    expect(
      describeConnectFailure(wrapped({ code: 'ECONNREFUSED' }), { where: 'http://h/mcp', url: 'http://h/mcp' }),
    ).toBe('cannot connect to http://h/mcp: connection refused (Version negotiation probe failed: fetch failed)');
    expect(
      describeConnectFailure(Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT', syscall: 'spawn nope' }), {
        where: 'the stdio server `nope`',
        command: 'nope',
      }),
    ).toBe('cannot connect to the stdio server `nope`: command not found: nope (spawn nope ENOENT)');
  });

  it('an HTTP server counts as lost once no exchange reached it for the bound; one success resets it', async () => {
    let fail = true;
    const reach = new Reachability(60, async () => {
      if (fail) throw fetchFailed({ code: 'ECONNREFUSED' });
      return new Response('{}');
    });
    const lost: string[] = [];
    reach.watch((why) => lost.push(why));
    await expect(reach.fetch('http://h/mcp')).rejects.toThrow('fetch failed');
    fail = false;
    await reach.fetch('http://h/mcp');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lost).toEqual([]);
    fail = true;
    await expect(reach.fetch('http://h/mcp')).rejects.toThrow('fetch failed');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lost).toEqual([
      expect.stringMatching(/^no request has reached it for 0 s \(1 failed, the last: connection refused\)$/),
    ]);
  });

  it('an HTTP server that never answers counts as lost once a request waited the bound; a held-open tasks/result alone does not count', async () => {
    const post = (method: string): RequestInit => ({
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
    });
    const held = new Reachability(60, () => new Promise<Response>(() => {}));
    const heldLost: string[] = [];
    held.watch((why) => heldLost.push(why));
    void held.fetch('http://h/mcp', post('tasks/result'));
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(heldLost).toEqual([]);
    // A tasks/get that gets no answer: the server is lost once it waited the bound.
    void held.fetch('http://h/mcp', post('tasks/get'));
    await new Promise((resolve) => setTimeout(resolve, 120));
    held.stop();
    expect(heldLost).toEqual([
      'no request has been answered for 0 s (1 still waiting for an answer: it accepts connections but does not answer)',
    ]);
  });

  it('a tools/call that may run plain (no params.task) is held open by design: waiting for it alone does not count; a task-augmented one does', async () => {
    const call = (params: Record<string, unknown>): RequestInit => ({
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    });
    const reach = new Reachability(60, () => new Promise<Response>(() => {}));
    const lost: string[] = [];
    reach.watch((why) => lost.push(why));
    void reach.fetch('http://h/mcp', call({ name: 'slow', arguments: {} }));
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(lost).toEqual([]);
    void reach.fetch('http://h/mcp', call({ name: 'slow', arguments: {}, task: { ttl: 60_000 } }));
    await new Promise((resolve) => setTimeout(resolve, 120));
    reach.stop();
    expect(lost).toHaveLength(1);
  });

  it('an HTTP request given up after waiting (an SDK request timeout aborts it) counts as unanswered from when it was sent', async () => {
    let clock = 0;
    const reach = new Reachability(
      1_600,
      (_input, init) =>
        new Promise<Response>((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
        ),
      () => clock,
    );
    const lost: string[] = [];
    reach.watch((why) => lost.push(why));
    // Cancelled at once: says nothing about the server.
    const cancelled = new AbortController();
    const quick = reach.fetch('http://h/mcp', { signal: cancelled.signal });
    cancelled.abort();
    await expect(quick).rejects.toThrow('aborted');
    // Given up after 1.5 s without an answer: the bound counts from when it was sent.
    const slow = new AbortController();
    const given = reach.fetch('http://h/mcp', { signal: slow.signal });
    clock = 1_500;
    slow.abort();
    await expect(given).rejects.toThrow('aborted');
    expect(lost).toEqual([]);
    clock = 1_600;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(lost).toEqual(['no request has reached it for 2 s (1 failed, the last: no answer (given up after 2 s))']);
  });
});

describe('leaving once stdout is written out (flush.ts)', () => {
  it('waits for what a slow reader has not taken yet, and not at all for a stream with nothing queued', async () => {
    const pipe = new PassThrough({ highWaterMark: 16 });
    pipe.write('x'.repeat(1_000));
    let done = false;
    const wait = written(pipe).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toBe(false);
    let read = '';
    pipe.on('data', (chunk: Buffer) => (read += chunk.toString()));
    await wait;
    expect(read).toBe('x'.repeat(1_000));
    await written(new PassThrough());
  });

  it('does not wait on a stream that failed', async () => {
    const broken = new Writable({
      highWaterMark: 1,
      write: (_chunk, _encoding, callback) => setTimeout(() => callback(new Error('EPIPE')), 5),
    });
    broken.on('error', () => {});
    broken.write('queued');
    broken.write('more');
    await written(broken);
    expect(broken.destroyed).toBe(true);
  });
});

describe('the terminal reporter when the run ends with a prompt still open', () => {
  it('shows the cursor again and prints the notes held back for the prompt (the server went away while a form was open)', async () => {
    const { HumanReporter } = await import('../../cli/src/reporter.js');
    const written = { stdout: '', stderr: '' };
    const stream = (name: 'stdout' | 'stderr') => {
      const out = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
      out.isTTY = true;
      out.columns = 80;
      out.on('data', (chunk: Buffer) => (written[name] += chunk.toString()));
      return out;
    };
    const reporter = new HumanReporter(
      { stdout: stream('stdout'), stderr: stream('stderr') },
      { color: false, quiet: true, interactive: true, startedAt: Date.now() },
    );
    void reporter.prompt(() => new Promise<never>(() => {}));
    reporter.note('server: crashing now');
    expect(written.stderr).toBe('');
    reporter.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(written.stdout).toContain('\x1b[?25h');
    expect(written.stderr).toContain('server: crashing now');
  });
});

describe('a question answered on the terminal (input.ts)', () => {
  /** The input callbacks with a prompt whose user presses Ctrl-C (the prompt dismissed) when `interrupt` is set. */
  async function callbacks(interrupt: boolean) {
    const { inputCallbacks } = await import('../../cli/src/input.js');
    let presses = 0;
    const inputs: unknown[] = [];
    const reporter = { interactive: true, note: () => {}, input: (event: unknown) => inputs.push(event) };
    const made = inputCallbacks({
      answers: new AnswerQueue([]),
      reporter: () => reporter as never,
      interruptions: () => presses,
      prompt: <T>(): Promise<T> => {
        if (interrupt) presses += 1;
        // What the forms answer once a prompt was dismissed.
        return Promise.resolve((interrupt ? { action: 'cancel' } : { action: 'accept', content: {} }) as T);
      },
    });
    return { ...made, inputs };
  }
  const context = (signal: AbortSignal) =>
    ({ taskId: 't1', handle: undefined, toolName: 'x', delivery: 'request', signal }) as never;
  const params = { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } as never;
  const settled = async (promise: Promise<unknown>) => {
    let state = 'pending';
    promise.then(
      () => (state = 'resolved'),
      () => (state = 'rejected'),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    return state;
  };

  it('sends the answer of a prompt closed without an interruption', async () => {
    const { onElicitation, inputs } = await callbacks(false);
    await expect(onElicitation(params, context(new AbortController().signal))).resolves.toEqual({
      action: 'accept',
      content: {},
    });
    expect(inputs).toHaveLength(1);
  });

  it('sends nothing for a form Ctrl-C closed: the question is given up once the task is cancelled (its signal)', async () => {
    const { onElicitation, onSampling, inputs } = await callbacks(true);
    const controller = new AbortController();
    const elicitation = Promise.resolve(onElicitation(params, context(controller.signal)));
    const sampling = Promise.resolve(onSampling({ messages: [], maxTokens: 5 }, context(controller.signal)));
    expect(await settled(elicitation)).toBe('pending');
    expect(await settled(sampling)).toBe('pending');
    controller.abort(new Error('cancelled'));
    await expect(elicitation).rejects.toThrow('cancelled');
    await expect(sampling).rejects.toThrow('cancelled');
    expect(inputs).toEqual([]);
  });
});

describe('keys only from a terminal this process has the foreground of (foreground.ts)', () => {
  it('reads the process group and the terminal foreground group of /proc/<pid>/stat, whatever the command name', async () => {
    const { groupsOfStat } = await import('../../cli/src/foreground.js');
    expect(groupsOfStat('4242 (node) S 4200 4242 4100 34816 4242 4194304 1 0')).toEqual({ pgrp: 4242, tpgid: 4242 });
    expect(groupsOfStat('4242 (a b) c)) T 4200 4242 4100 34816 4100 4194560 1 0')).toEqual({ pgrp: 4242, tpgid: 4100 });
    expect(groupsOfStat('4242 (node) S 1 4242 4242 0 -1 4194304')).toEqual({ pgrp: 4242, tpgid: -1 });
    expect(groupsOfStat('garbage')).toBeUndefined();
    expect(groupsOfStat('4242 (node) S 1')).toBeUndefined();
  });

  it('is in the foreground only when its group is the terminal foreground group; unknown says no', async () => {
    const { isForeground, readsKeys } = await import('../../cli/src/foreground.js');
    expect(isForeground({ pgrp: 4242, tpgid: 4242 })).toBe(true);
    // A background job (`… &` in an interactive shell): the shell's group has the terminal.
    expect(isForeground({ pgrp: 4242, tpgid: 4100 })).toBe(false);
    // No controlling terminal.
    expect(isForeground({ pgrp: 4242, tpgid: -1 })).toBe(false);
    expect(isForeground(undefined)).toBe(false);
    // Not a terminal: no keys, whatever the groups.
    expect(readsKeys({ isTTY: false })).toBe(false);
    expect(readsKeys({})).toBe(false);
  });
});

describe('stopping a stdio server the CLI started (server-process.ts)', () => {
  it('holds SIGINT, SIGTERM and SIGHUP while a server that ignores SIGTERM is stopped, so that a signal meanwhile does not end the CLI before its SIGKILL; released once it is gone', async () => {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('up')"],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const before = HELD_SIGNALS.map((signal) => process.listenerCount(signal));
    const stopped = stopChild(child, undefined, 300);
    // Before, the CLI had no handler left while it waited for the server to exit.
    expect(HELD_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before.map((count) => count + 1));
    expect(await stopped).toBe(true);
    expect(child.signalCode).toBe('SIGKILL');
    expect(HELD_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before);
  });
});
