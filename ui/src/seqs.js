// The seq beside a time that a list reply gives without one. GET /v1/jobs, /v1/holds and
// /v1/connectors answer each entity's times and, for jobs and connectors, its stream `version`,
// but not the seq of the event that recorded each time; one small read of that entity's events
// finds it. Each answer is checked (the event's time must be the time shown), so a seq is never
// guessed; when the read fails or the check does not hold, the time is shown without one.
import { api, enc } from './lib.js';

// Events never change, so an answer stands for the page's life; kept to the latest 5,000.
const known = new Map();
function remember(key, find) {
  if (!known.has(key)) {
    known.set(key, find().catch(() => { known.delete(key); return null; }));
    if (known.size > 5000) known.delete(known.keys().next().value);
  }
  return known.get(key);
}

// A few reads at a time, so that a long list does not queue the page's other calls behind it.
let running = 0;
const waiting = [];
async function read(path) {
  if (running >= 4) await new Promise((go) => waiting.push(go));
  running++;
  try { return await api(path); } finally { running--; if (waiting.length) waiting.shift()(); }
}

// The event with this version of a job's or a connector's stream.
function eventAt(kind, id, version) {
  return remember(`${kind}/${id}@${version}`, async () => (await read(`/v1/${kind}s/${enc(id)}/events?after=${version - 1}&limit=1`)).events[0] || null);
}
const seqIf = (e, iso) => (e && e.recorded_at === iso ? e.seq : null);

// An event that granted a lease until a time (a claim, a heartbeat, a reattach); LeaseExpired
// only repeats the time.
export const isLeaseGrant = (e) => e.type !== 'LeaseExpired' && !!(e.data && e.data.lease_expires_at);
export const grantsLease = (e, expiresAt) => isLeaseGrant(e) && e.data.lease_expires_at === expiresAt;

// The job that changed last at `version`: the seq of that event (its `updated_at`), and the seq
// of the event that granted its lease, found by reading back from `version` (after the grant come
// only a start and step events, so the first page back holds it).
async function lastGrant(j) {
  for (let to = j.version; to > 0;) {
    const n = Math.min(to, 64);
    const page = (await read(`/v1/jobs/${enc(j.id)}/events?after=${to - n}&limit=${n}`)).events;
    for (let i = page.length - 1; i >= 0; i--) if (grantsLease(page[i], j.lease.expires_at)) return page[i].seq;
    to -= n;
  }
  return null;
}
export function withJobSeqs(jobs) {
  return Promise.all(jobs.map(async (j) => {
    const [updated, leaseGranted] = await Promise.all([
      eventAt('job', j.id, j.version).then((e) => seqIf(e, j.updated_at)),
      j.lease ? remember(`job/${j.id}@${j.version}/lease`, () => lastGrant(j)) : null,
    ]);
    return { ...j, seqs: { updated, leaseGranted } };
  }));
}

// A hold's stream is HoldPlaced, then HoldReleased once released.
export function withHoldSeqs(holds) {
  return Promise.all(holds.map(async (h) => {
    const evs = await remember(`hold/${h.id}@${h.released ? 2 : 1}`, async () => (await read(`/v1/holds/${enc(h.id)}/events`)).events);
    const find = (type, iso) => seqIf((evs || []).find((e) => e.type === type), iso);
    return { ...h, seqs: { placed: find('HoldPlaced', h.placed_at), released: h.released ? find('HoldReleased', h.released_at) : null } };
  }));
}

// `last_synced_at` is the time of the connector's latest SyncSucceeded: the first one recorded at
// or after that time is it.
export function withConnectorSeqs(conns) {
  return Promise.all(conns.map(async (c) => {
    const iso = c.last_synced_at;
    const e = iso ? await remember(`connector/${c.id}@${iso}`, async () =>
      (await read(`/v1/events?${new URLSearchParams({ stream: `connector/${c.id}`, type: 'SyncSucceeded', since: iso, limit: '1' })}`)).events[0] || null) : null;
    return { ...c, seqs: { lastSynced: seqIf(e, iso) } };
  }));
}
