/**
 * Task timestamps are read with lib/util/iso-time.ts, a fast reader for the usual UTC form that
 * must give exactly what `Date.parse` gives for every string (the ordering of snapshots, [A11],
 * and the ttl bound depend on it), except that a date and time without a UTC offset is read as
 * UTC, never as this machine's local time (D22). Checked against `Date.parse` over generated timestamps: every
 * year from 0000 to 9999, months and days in and out of range, leap days, hours 24 and seconds 60,
 * fractions of 0 to 21 digits (V8 reads ten or more its own way), a bare '.', offsets and other forms. Deterministic (seeded).
 */
import { describe, expect, it } from 'vitest';
import { isoMs } from '../../lib/util/iso-time.js';

function seeded(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state % below;
  };
}

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

describe('isoMs reads timestamps exactly as Date.parse does', () => {
  it('over 200,000 generated timestamps', () => {
    const random = seeded(7);
    const mismatches: string[] = [];
    for (let i = 0; i < 200_000; i += 1) {
      const digits = random(22);
      let fraction = '';
      for (let k = 0; k < digits; k += 1) fraction += String(random(10));
      const dot = digits > 0 ? `.${fraction}` : random(8) === 0 ? '.' : '';
      const zone = ['Z', 'Z', 'Z', 'Z', '+01:00', '-05:30', 'z', ''][random(8)]!;
      const stamp = `${pad(random(10_000), 4)}-${pad(random(14), 2)}-${pad(random(33), 2)}T${pad(random(26), 2)}:${pad(random(61), 2)}:${pad(random(62), 2)}${dot}${zone}`;
      const expected = zone === '' ? Date.parse(`${stamp}Z`) : Date.parse(stamp);
      if (!Object.is(isoMs(stamp), expected)) mismatches.push(stamp);
    }
    expect(mismatches).toEqual([]);
  });

  it('on the edges: leap days, the first and last instants of years, odd forms', () => {
    const stamps = [
      '2024-02-29T12:00:00Z',
      '2023-02-29T12:00:00Z',
      '2000-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '1969-12-31T23:59:59.999Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T00:00:60Z',
      '2026-04-31T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-01T00:00:00.Z',
      '2026-01-01T00:00:00.1Z',
      '2026-01-01T00:00:00.12Z',
      '2026-01-01T00:00:00.123456789Z',
      '2026-01-01T00:00:00.0123456789Z',
      '2026-01-01T00:00:07.0999999999Z',
      '2026-01-01 00:00:00Z',
      '+002026-01-01T00:00:00Z',
      '2026-01-01T00:00Z',
      '2026-01-01',
      '',
      'not a time',
      '2026-1-01T00:00:00Z',
      '2026-01-01T00:00:00ZZ',
      '20260101T000000Z',
      '2026-01-01T00:00:00.-1Z',
    ];
    for (const stamp of stamps) expect([stamp, isoMs(stamp)]).toEqual([stamp, Date.parse(stamp)]);
  });

  it('reads a date and time without a UTC offset as UTC, wherever the client runs (D22)', () => {
    const zone = process.env.TZ;
    try {
      for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
        process.env.TZ = tz;
        expect(isoMs('2026-03-08T02:30:00.123456')).toBe(Date.parse('2026-03-08T02:30:00.123Z'));
        expect(isoMs('2026-03-08 03:10:00')).toBe(Date.parse('2026-03-08T03:10:00Z'));
        expect(isoMs('2026-03-08T03:10')).toBe(Date.parse('2026-03-08T03:10:00Z'));
        expect(isoMs('+002026-03-08T03:10:00')).toBe(Date.parse('2026-03-08T03:10:00Z'));
        // Forms with an offset, or a date alone (UTC already), are read as Date.parse reads them.
        expect(isoMs('2026-03-08T03:10:00+01:00')).toBe(Date.parse('2026-03-08T02:10:00Z'));
        expect(isoMs('2026-03-08')).toBe(Date.parse('2026-03-08T00:00:00Z'));
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
