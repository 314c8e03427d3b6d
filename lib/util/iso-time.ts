/**
 * Reading task timestamps fast. Every snapshot with a new `lastUpdatedAt` has it read as a clock
 * time (to merge snapshots in order), and `Date.parse` costs about a microsecond each. The form
 * servers send (`YYYY-MM-DDTHH:MM:SS[.fraction]Z`, RFC 3339 in UTC) is read here digit by digit;
 * any other form, or a value out of range, goes to `Date.parse`, so the result is always the
 * same as `Date.parse`'s (fractions beyond milliseconds are cut, as V8 does), except for a date
 * and time without a UTC offset, which is read as UTC (see {@link slow}).
 */

/** The value of two ASCII digits at `at`, or -1. */
function two(stamp: string, at: number): number {
  const a = stamp.charCodeAt(at) - 48;
  const b = stamp.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Days in `month` (1-12) of `year`, proleptic Gregorian. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days from 1970-01-01 to the given civil date (proleptic Gregorian; H. Hinnant's method). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** A date and time with no UTC offset (`Z`, `+01:00`): `2026-01-01T10:00:00.123456`. */
const NO_OFFSET = /^[+-]?\d{4,6}-\d\d-\d\d[Tt ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?$/;

/**
 * `Date.parse(stamp)`, except that a date and time without a UTC offset is read as UTC (D22).
 * Servers whose writer drops the offset (Java's `LocalDateTime`, Python's naive `isoformat()`)
 * stamp their own clock, almost always UTC; `Date.parse` would read such a stamp as this
 * machine's local time, so the order of two snapshots would depend on where the client runs: on
 * the day clocks spring forward, a stamp in the skipped hour reads as an hour later, and the
 * snapshots after it as older (dropped as stale, [A11]).
 */
function slow(stamp: string): number {
  return NO_OFFSET.test(stamp) ? Date.parse(`${stamp}Z`) : Date.parse(stamp);
}

/**
 * Milliseconds since the epoch of an ISO 8601 timestamp: what `Date.parse(stamp)` gives (NaN for
 * what it cannot read), except that one without a UTC offset is read as UTC (D22); faster for the
 * usual UTC form.
 */
export function isoMs(stamp: string): number {
  const n = stamp.length;
  if (
    n < 20 ||
    stamp.charCodeAt(n - 1) !== 90 || // 'Z'
    stamp.charCodeAt(4) !== 45 || // '-'
    stamp.charCodeAt(7) !== 45 ||
    stamp.charCodeAt(10) !== 84 || // 'T'
    stamp.charCodeAt(13) !== 58 || // ':'
    stamp.charCodeAt(16) !== 58
  ) {
    return slow(stamp);
  }
  const high = two(stamp, 0);
  const low = two(stamp, 2);
  const month = two(stamp, 5);
  const day = two(stamp, 8);
  const hour = two(stamp, 11);
  const minute = two(stamp, 14);
  const second = two(stamp, 17);
  if (
    high < 0 ||
    low < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59
  ) {
    return slow(stamp);
  }
  const year = high * 100 + low;
  if (day > daysIn(year, month)) return slow(stamp);
  let ms = 0;
  if (n > 20) {
    // '.' and one to nine digits before the 'Z'; the first three count. (V8 reads ten or more
    // digits its own way: those go to Date.parse.)
    if (n > 30) return slow(stamp);
    if (stamp.charCodeAt(19) !== 46 || n === 21) return slow(stamp);
    for (let at = 20; at < n - 1; at += 1) {
      const digit = stamp.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) return slow(stamp);
      if (at < 23) ms += digit * (at === 20 ? 100 : at === 21 ? 10 : 1);
    }
  }
  return ((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + ms;
}
