/**
 * Hidden classes that outlive an idle spell.
 *
 * V8 gives every object a hidden class (a "map") and specialises optimized code to the maps it
 * met. A class instance's map hangs off its constructor through transitions that hold it only
 * weakly: once no object has it, a full garbage collection drops it, and V8 throws away every
 * optimized function that embeds it (a "weak objects" deoptimization). The library's per-task
 * objects (records, handles, timers, open requests) all die when the last task settles, so a
 * client whose tasks come in bursts (every agent host between two turns) lost its optimized code
 * at the first full collection of each idle spell, and the next burst ran in the interpreter and
 * paid for compiling the same code again: on the benchmark's warm phase, which follows such a
 * collection, about a hundred deoptimizations and most of the library's CPU above the floor's
 * (measured when this was written; `npm run bench:profile -- --jit=1` counts the compilations per
 * phase and leaves V8's trace, deoptimizations and their reasons included, in its trace.log).
 * Node's timer objects are kept the same way by the scheduler (util/scheduler.ts, `spent`).
 *
 * One exemplar of each such class, made once per process from neutral values and kept here,
 * keeps its map alive. An exemplar holds nothing of any client: its constructor only stores
 * what it is given, and it is given placeholders. Its values must have the representation real
 * instances' values have (a small integer where they keep one, an object where they keep one):
 * a field that V8 has to widen to floating point gets a new map, and the exemplar would keep
 * the old one.
 */

const exemplars: object[] = [];

/** Keeps `exemplar` (and so its hidden class) alive for the life of the process. */
export function keepShape(exemplar: object): void {
  exemplars.push(exemplar);
}
