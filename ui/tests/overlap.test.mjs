// The target page's red bands: which attempts on one target ran at once.
// The engine lets one attempt run on a target at a time (a STALE one, whose
// end is unknown, is not counted), so no log the suite can seed draws a
// band; the computation is checked here on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { overlaps } from '../src/overlap.js';

const t = (s) => Date.parse(`2026-05-06T00:00:${String(s).padStart(2, '0')}Z`);

test('two attempts that share time give one band over the shared part, named', () => {
  const bands = overlaps([
    { job: 'a', attempt: 1, from: t(0), to: t(10) },
    { job: 'b', attempt: 2, from: t(4), to: t(20) },
  ]);
  assert.equal(bands.length, 1);
  assert.equal(bands[0].from, t(4));
  assert.equal(bands[0].to, t(10));
  assert.match(bands[0].label, /job a attempt 1 and job b attempt 2 ran at once from 2026-05-06T00:00:04.000Z to 2026-05-06T00:00:10.000Z/);
});

test('attempts one after the other, or touching at an end, give none', () => {
  assert.deepEqual(overlaps([
    { job: 'a', attempt: 1, from: t(0), to: t(10) },
    { job: 'a', attempt: 2, from: t(10), to: t(12) },
    { job: 'b', attempt: 1, from: t(15), to: t(20) },
  ]), []);
  assert.deepEqual(overlaps([]), []);
});

test('three at once give a band per pair', () => {
  const bands = overlaps([
    { job: 'a', attempt: 1, from: t(0), to: t(30) },
    { job: 'b', attempt: 1, from: t(5), to: t(25) },
    { job: 'c', attempt: 1, from: t(10), to: t(20) },
  ]);
  assert.equal(bands.length, 3);
  assert.deepEqual(bands.map((b) => [b.from, b.to]), [[t(5), t(25)], [t(10), t(20)], [t(10), t(20)]]);
});
