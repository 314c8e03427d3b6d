/**
 * Runs the wire contract (contract.ts, contract-faults.ts) against every wire factory below.
 *
 * Adding a wire is one more entry in {@link WIRE_FACTORIES}: a {@link WireFactory} that starts a
 * scripted server of that wire's protocol form, connects the wire, and implements the
 * {@link WireDriver} verbs in that server's terms. The 2026-07-28 `io.modelcontextprotocol/tasks`
 * extension wire's factory is scripted-ext.ts: the extension's scripted server
 * (spec/support/ext-server) with an SDK v2 client on the modern era, `resolveWire` picking the
 * extension wire, `createOnNextCall` making the server decide for a task, `finish` storing the result
 * or error the terminal `tasks/get` carries, `push` sending `notifications/tasks`, and `holdNext` /
 * `malformedNext` / `failNext` / `otherTaskNext` as one-shot overrides in front of its methods. The
 * contract branches on `features()`, so the ack-only cancel and the payload on the snapshot need no
 * test changes.
 */
import { describeWireContract } from './contract.js';
import { fakeWire } from './fake-server.js';
import { scripted2025 } from './scripted-2025.js';
import { scriptedExt } from './scripted-ext.js';
import type { KnownDeviations, WireFactory } from './support.js';

/**
 * Library bugs of a wire on record (with reproductions); each listed test runs as an expected
 * failure until the bug is fixed. None is open.
 */
const WIRE_2025_KNOWN: KnownDeviations = {};

/** The extension wire's bugs on record: none is open. */
const WIRE_EXT_KNOWN: KnownDeviations = {};

/** Every wire the contract runs against. */
const WIRE_FACTORIES: ReadonlyArray<{
  readonly name: string;
  readonly factory: WireFactory;
  readonly known?: KnownDeviations;
}> = [
  { name: '2025-11-25 wire over SDK v1', factory: scripted2025('v1'), known: WIRE_2025_KNOWN },
  { name: '2025-11-25 wire over SDK v2 (legacy era)', factory: scripted2025('v2'), known: WIRE_2025_KNOWN },
  {
    name: 'io.modelcontextprotocol/tasks extension wire over SDK v2 (modern era)',
    factory: scriptedExt(),
    known: WIRE_EXT_KNOWN,
  },
  { name: 'fake wire, payload fetched, cancel with snapshot', factory: fakeWire('fetch') },
  { name: 'fake wire, payload on the snapshot, cancel acknowledged', factory: fakeWire('inline') },
];

for (const { name, factory, known } of WIRE_FACTORIES) describeWireContract(name, factory, known);
