/**
 * The bits of a task record's flags (record-layout.ts: the record's yes/no state is one small
 * integer of bits). Imported as a namespace (`import * as Flag`): plain constants rather than an
 * enum, so that a bundler writes each bit as its number where it is used (an enum compiled by tsc
 * stays an object whose members are looked up by name).
 */
export const StreamEnded = 1;
export const PollInFlight = 2;
export const TerminalFetch = 4;
export const Active = 8;
export const Stopped = 16;
export const Provisional = 32;
/** The time field's value is held as given, not as an offset from `EPOCH` (`util/epoch.ts`). */
export const RawNextPollAt = 64;
export const RawSeenAt = 128;
export const RawStartedAt = 256;
export const Resumed = 512;
export const ReadSoon = 1024;
export const LookDue = 2048;
/** A local stop (timeout, abort, dispose, close) is under way (`stop.ts`). */
export const Stopping = 4096;
/** That stop keeps the snapshot stream open until it settles. */
export const HoldStream = 8192;
/** The ttl's timer waits for the first poll's timer (`ttl-watch.ts`). */
export const TtlDeferred = 16384;
/** The wire in use was told of the engine's interest in pushed snapshots (`watch.ts`). */
export const Watched = 32768;
/** Tracking began on a connection since replaced (`reconnect.ts`). */
export const OlderConnection = 65536;
/** The `tasks/result` requests open (0 to 2: a blocking one and a terminal one), two bits from here. */
export const OpenFetchesUnit = 131072;
/** Both bits of the open `tasks/result` count (three times {@link OpenFetchesUnit}). */
export const OpenFetches = 393_216;
/** The send time's value is held as given (see {@link RawNextPollAt}). */
export const RawSentAt = 524_288;
/** The poll in flight is the ttl backstop's last look (`poll.ts`). */
export const LookSent = 1_048_576;
/** The poll in flight went out over a connection since replaced (`reconnect.ts`). */
export const PollOnOlderConnection = 2_097_152;
/** The stop under way means to cancel the remote task (`give-up.ts`). */
export const StopCancels = 4_194_304;
/**
 * The short `tasks/result` for the terminal task answered "not found" while the blocking one was
 * still open: its answer is held until that one ends, or a bound passes (`payload.ts`).
 */
export const GoneHeld = 8_388_608;
