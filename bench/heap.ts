/**
 * What the in-flight tasks keep alive: the diff of two V8 heap snapshots of one process (the
 * memory phase writes one before its N tasks start and one with all N in flight). Every node of
 * the second snapshot whose id the first lacks is new; the new nodes are grouped by kind (an
 * object's constructor, a closure's function name, or the node type for strings, arrays, code and
 * V8 internals) with their count and self size per task. Used by `npm run bench:profile -- --heap`.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** One kind of new node: how many per task, and their self size per task. */
export interface HeapKind {
  readonly kind: string;
  readonly perTask: number;
  readonly bytesPerTask: number;
}

function read(file: string): Snapshot {
  return JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
}

function nodeIds(snapshot: Snapshot): Set<number> {
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const idAt = fields.indexOf('id');
  const ids = new Set<number>();
  for (let i = 0; i < snapshot.nodes.length; i += width) ids.add(snapshot.nodes[i + idAt]!);
  return ids;
}

/** Groups of a node type under which names are kept apart (others are grouped by type alone). */
const NAMED = new Set(['object', 'closure', 'native']);

/** Edge types that do not keep a node alive, or only describe V8's own bookkeeping. */
const WEAK_EDGES = new Set(['weak', 'shortcut']);

/**
 * The new nodes of `afterFile` over `beforeFile`, by kind, largest first, divided by `n`. With
 * `byRetainer`, a kind also names the first strong retainer of each node (its kind and the edge,
 * e.g. `object Object <- object TaskRecord.task`), which tells which field holds what.
 */
export function heapDiff(beforeFile: string, afterFile: string, n: number, byRetainer = false): HeapKind[] {
  const before = nodeIds(read(beforeFile));
  const after = read(afterFile);
  const fields = after.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) =>
    fields.indexOf(f),
  ) as [number, number, number, number, number];
  const types = after.snapshot.meta.node_types[0];
  const kindOf = (i: number): string => {
    const type = types[after.nodes[i + typeAt]!] ?? 'unknown';
    return NAMED.has(type) ? `${type} ${after.strings[after.nodes[i + nameAt]!] || '(anonymous)'}` : `(${type})`;
  };
  const retainer = new Map<number, string>();
  if (byRetainer) {
    const edgeFields = after.snapshot.meta.edge_fields;
    const edgeWidth = edgeFields.length;
    const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f)) as [
      number,
      number,
      number,
    ];
    const edgeTypes = after.snapshot.meta.edge_types[0];
    let edge = 0;
    for (let i = 0; i < after.nodes.length; i += width) {
      const count = after.nodes[i + edgeCountAt]!;
      for (let e = 0; e < count; e += 1, edge += edgeWidth) {
        const to = after.edges[edge + eToAt]!;
        if (retainer.has(to)) continue;
        const edgeType = edgeTypes[after.edges[edge + eTypeAt]!] ?? 'unknown';
        if (WEAK_EDGES.has(edgeType)) continue;
        const raw = after.edges[edge + eNameAt]!;
        // Indexed slots (array elements, hash-table entries) are one group, whatever the index.
        const label = edgeType === 'element' || edgeType === 'hidden' ? '' : (after.strings[raw] ?? '');
        const name = label === '' || /^\d+$/.test(label) ? '[]' : label;
        retainer.set(to, `${kindOf(i)}.${name}`);
      }
    }
  }
  const groups = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < after.nodes.length; i += width) {
    if (before.has(after.nodes[i + idAt]!)) continue;
    const kind = byRetainer ? `${kindOf(i)} <- ${retainer.get(i) ?? '(root)'}` : kindOf(i);
    const group = groups.get(kind) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += after.nodes[i + sizeAt]!;
    groups.set(kind, group);
  }
  return [...groups]
    .map(([kind, { count, bytes }]) => ({ kind, perTask: count / n, bytesPerTask: bytes / n }))
    .sort((a, b) => b.bytesPerTask - a.bytesPerTask);
}

/** The diff as a printable table of the kinds above 0.05 nodes per task. */
export function heapTable(kinds: readonly HeapKind[], top: number): string {
  const shown = kinds.filter((k) => k.perTask >= 0.05).slice(0, top);
  const total = kinds.reduce((sum, k) => sum + k.bytesPerTask, 0);
  const width = Math.max(4, ...shown.map((k) => k.kind.length));
  const lines = [`${'kind'.padEnd(width)}  per task  bytes/task`];
  for (const k of shown)
    lines.push(
      `${k.kind.padEnd(width)}  ${k.perTask.toFixed(2).padStart(8)}  ${k.bytesPerTask.toFixed(0).padStart(10)}`,
    );
  lines.push(`${'all new nodes'.padEnd(width)}  ${''.padStart(8)}  ${total.toFixed(0).padStart(10)}`);
  return lines.join('\n');
}
