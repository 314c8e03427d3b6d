/**
 * A vitest setup file (vitest.config.ts): after every test, no scripted server may have refused a
 * request as malformed or unexpected (spec/support/violations.ts). It runs after the suite's own
 * afterEach hooks (vitest runs them as a stack), so what a clean-up sends is checked too.
 */
import { afterEach, expect } from 'vitest';
import { takeViolations } from './violations.js';

afterEach(() => {
  expect(takeViolations(), 'requests a scripted server refused (method: why)').toEqual([]);
});
