/**
 * The instrumentation hook (`TaskClientOptions.instrumentation`): attached once per TaskClient,
 * then told of each call, each resumed task and each listed page (with the connection it goes out
 * on), each request it sends, its handle or its failure, and each input request handed to a
 * callback. What the hook returns is
 * wrapped here so that one of its methods that throws is reported on the `error` event and never
 * breaks a call or a request; without the option none of this is made.
 */
import type {
  CallInstrument,
  ClientInstrument,
  InputInstrument,
  InstrumentedCall,
  InstrumentedClient,
  InstrumentedInput,
  InstrumentedList,
  InstrumentedResume,
  RequestInstrument,
  TaskHandle,
  TaskInstrumentation,
} from '../../api/index.js';
import { TaskError, TaskOptionError } from '../../errors.js';
import { instrumentedConnection } from '../../port/connection-info.js';
import type { SessionPort } from '../../port/port.js';
import type { WireKind } from '../../api/index.js';
import { messageOf } from '../../util/text.js';

/** Reports a hook that threw (the `error` event). */
type Report = (error: TaskError) => void;

/** Runs one hook method; one that throws is reported and yields `undefined`. */
function guarded<T>(report: Report, what: string, run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    report(new TaskError(`The instrumentation's ${what} threw: ${messageOf(error)}`, { cause: error }));
    return undefined;
  }
}

/** Runs a hook that makes a further instrument (`guarded`); what it made, guarded in turn by `guard`. */
function made<M, G>(
  report: Report,
  what: string,
  run: () => M | null | undefined,
  guard: (made: M, report: Report) => G,
): G | undefined {
  const instrument = guarded(report, what, run);
  return instrument === undefined || instrument === null ? undefined : guard(instrument, report);
}

/**
 * Attaches `instrumentation` to `client` (the TaskClient being made).
 * @throws TaskOptionError when it is not an object with `attach()`, or when `attach()` throws.
 */
export function attachInstrumentation(
  instrumentation: TaskInstrumentation | undefined,
  client: InstrumentedClient,
  report: Report,
): ClientInstrument | undefined {
  if (instrumentation === undefined) return undefined;
  let attached: ClientInstrument | undefined;
  try {
    attached = instrumentation.attach(client);
  } catch (error) {
    throw new TaskOptionError(`The instrumentation's attach() threw: ${messageOf(error)}`, {
      option: 'instrumentation',
      cause: error,
    });
  }
  return attached === undefined || attached === null ? undefined : guardClient(attached, report);
}

/** `client` with every method guarded. */
function guardClient(client: ClientInstrument, report: Report): ClientInstrument {
  return {
    call: (call: InstrumentedCall) => made(report, 'call()', () => client.call?.(call), guardCall),
    resume: (resume: InstrumentedResume) => made(report, 'resume()', () => client.resume?.(resume), guardCall),
    list: (list: InstrumentedList) => made(report, 'list()', () => client.list?.(list), guardCall),
    input: (input: InstrumentedInput) => made(report, 'input()', () => client.input?.(input), guardInput),
  };
}

function guardCall(call: CallInstrument, report: Report): CallInstrument {
  return {
    request: (request) => made(report, 'request()', () => call.request?.(request), guardRequest),
    handle: (handle: TaskHandle) => void guarded(report, 'handle()', () => call.handle?.(handle)),
    failed: (error: unknown) => void guarded(report, 'failed()', () => call.failed?.(error)),
  };
}

/** `request` (or a notification's instrument, `what` `notification`) with every method guarded. */
function guardRequest(request: RequestInstrument, report: Report, what = 'request'): RequestInstrument {
  const meta = guarded(report, `${what} meta`, () => request.meta);
  const end: RequestInstrument['end'] = (failure, result) =>
    void guarded(report, `${what} end()`, () => request.end(failure, result));
  const guardedRequest = meta === undefined || meta === null || typeof meta !== 'object' ? { end } : { meta, end };
  // Only when the hook has it: the port reads it to tell whether anything watches the notification.
  if (request.notification === undefined) return guardedRequest;
  const notification: RequestInstrument['notification'] = (notice) =>
    made(
      report,
      'request notification()',
      () => request.notification?.(notice),
      (instrument, again) => guardRequest(instrument, again, 'notification'),
    );
  return { ...guardedRequest, notification };
}

function guardInput(input: InputInstrument, report: Report): InputInstrument {
  const end: InputInstrument['end'] = (outcome) => void guarded(report, 'input end()', () => input.end(outcome));
  const run = guarded(report, 'input run', () => input.run);
  return typeof run === 'function' ? { run: guardRun(run, report), end } : { end };
}

/**
 * `run` of an input instrument, guarded: the callback runs once whatever `run` does. What the
 * callback throws goes to the caller; what `run` throws before calling it, or a `run` that never
 * calls it, is reported, and the callback runs on its own.
 */
function guardRun(run: NonNullable<InputInstrument['run']>, report: Report): NonNullable<InputInstrument['run']> {
  return <T>(callback: () => T): T => {
    let ran = false;
    let value: T | undefined;
    let failure: { readonly error: unknown } | undefined;
    const once = (): T => {
      ran = true;
      try {
        value = callback();
        return value;
      } catch (error) {
        failure = { error };
        throw error;
      }
    };
    let threw: { readonly error: unknown } | undefined;
    try {
      run(once);
    } catch (error) {
      threw = { error };
    }
    const problem = (): TaskError =>
      threw === undefined
        ? new TaskError("The instrumentation's input run() did not run the callback")
        : new TaskError(`The instrumentation's input run() threw: ${messageOf(threw.error)}`, { cause: threw.error });
    if (!ran) {
      report(problem());
      return callback();
    }
    // What the callback threw is the callback's; what `run` threw after it answered, the hook's.
    if (failure !== undefined) throw failure.error;
    if (threw !== undefined) report(problem());
    return value as T;
  };
}

/** The instrument of a call of `toolName` on the connection behind `port`, if the hook watches it. */
export function instrumentCall(
  client: ClientInstrument | undefined,
  port: SessionPort,
  wire: WireKind,
  toolName: string,
  args: Record<string, unknown>,
): CallInstrument | undefined {
  if (client === undefined) return undefined;
  return client.call?.({ toolName, arguments: args, connection: instrumentedConnection(port, wire) });
}

/** The instrument of resumed task `taskId` on the connection behind `port`, if the hook watches it. */
export function instrumentResume(
  client: ClientInstrument | undefined,
  port: SessionPort,
  wire: WireKind,
  taskId: string,
  toolName: string | undefined,
): CallInstrument | undefined {
  if (client === undefined) return undefined;
  return client.resume?.({ taskId, toolName, connection: instrumentedConnection(port, wire) });
}

/** The instrument of one page of a listing (`method`) on the connection behind `port`, if the hook watches listings. */
export function instrumentList(
  client: ClientInstrument | undefined,
  port: SessionPort,
  wire: WireKind,
  method: InstrumentedList['method'],
): CallInstrument | undefined {
  if (client === undefined) return undefined;
  return client.list?.({ method, connection: instrumentedConnection(port, wire) });
}
