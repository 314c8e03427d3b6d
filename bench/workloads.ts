/** The workloads of issue 5: fixed and random durations, with and without status notifications. */
import type { Workload } from './scenario.js';

export const WORKLOADS: readonly Workload[] = [
  { id: 'random-notify', duration: { kind: 'random', minMs: 200, maxMs: 600 }, notify: true, pollInterval: 1000 },
  { id: 'fixed-notify', duration: { kind: 'fixed', ms: 1500 }, notify: true, pollInterval: 1000 },
  { id: 'random-poll', duration: { kind: 'random', minMs: 200, maxMs: 600 }, notify: false, pollInterval: 1000 },
  { id: 'fixed-poll', duration: { kind: 'fixed', ms: 1500 }, notify: false, pollInterval: 1000 },
];
