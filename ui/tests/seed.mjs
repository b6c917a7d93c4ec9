// The fixed scenario, made over the public API only.
import { sleep } from './client.mjs';

export const TARGET = 'shop-a/orders/2026-05-06T00';

async function waitFor(fn, what, ms = 10000) {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function seed(api, { bigEvents = 10000 } = {}) {
  const out = {};
  // 1. The twice-run job: attempt 1 runs, its lease expires while RUNNING (STALE + hold),
  // the hold is released with evidence (execution stopped, outcome FAILED), an operator reruns,
  // attempt 2 runs to success.
  await api.post('/v1/jobs', { id: 'orders-00', kind: 'sync', target: TARGET, plan: ['FETCH', 'LOAD'], reuse_on_rerun: [] }, { 'X-Runledger-Actor': 'scheduler' });
  let c = await api.post('/v1/jobs/claim', { worker: 'w1', kinds: ['sync'], lease_s: 2 });
  let tok = c.lease_token;
  await api.post('/v1/jobs/orders-00/start', { lease_token: tok, execution_handle: 'pid-4711' });
  await api.post('/v1/jobs/orders-00/steps/FETCH/start', { lease_token: tok });
  await api.post('/v1/jobs/orders-00/steps/FETCH/done', { lease_token: tok, output: { rows: 120 } });
  await api.post('/v1/jobs/orders-00/heartbeat', { lease_token: tok, lease_s: 1 });
  await api.post('/v1/jobs/orders-00/steps/LOAD/start', { lease_token: tok });
  const stale = await waitFor(async () => { const j = await api.get('/v1/jobs/orders-00'); return j.state === 'STALE' ? j : null; }, 'lease expiry');
  const holds = await api.get(`/v1/holds?target=${encodeURIComponent(TARGET)}&open=true`);
  out.staleHold = holds.holds[0].id;
  await api.post(`/v1/holds/${out.staleHold}/release`, { note: 'pid 4711 gone on host a-3; nothing written', execution_stopped: true, outcome: 'FAILED' }, { 'X-Runledger-Actor': 'alice' });
  await api.post('/v1/jobs/orders-00/rerun', { reason: 'lease lost on a-3' }, { 'X-Runledger-Actor': 'alice' });
  c = await api.post('/v1/jobs/claim', { worker: 'w2', kinds: ['sync'], lease_s: 30 });
  tok = c.lease_token;
  await api.post('/v1/jobs/orders-00/start', { lease_token: tok, execution_handle: 'pid-5120' });
  for (const s of ['FETCH', 'LOAD']) {
    await api.post(`/v1/jobs/orders-00/steps/${s}/start`, { lease_token: tok });
    await api.post(`/v1/jobs/orders-00/steps/${s}/done`, { lease_token: tok, output: { rows: 118 } });
  }
  out.twice = 'orders-00';
  void stale;

  // 2. An open hold placed by an operator on another target, for the release tests.
  const h = await api.post('/v1/holds', { target: 'shop-b/refunds', kind: 'EXECUTION_STATE_UNKNOWN', reason: 'refund export may still be writing' }, { 'X-Runledger-Actor': 'bob' });
  out.openHold = h.id;

  // 3. A connector whose sync failed, one that succeeded, one syncing now.
  await api.post('/v1/connectors', { id: 'crm', name: 'CRM contacts' });
  let s = await api.post('/v1/connectors/crm/sync', {});
  await api.post(`/v1/connectors/crm/syncs/${s.sync_id}/progress`, { documents: { pending: ['a', 'b', 'c'] } });
  await api.post(`/v1/connectors/crm/syncs/${s.sync_id}/succeeded`, { documents: { indexed: ['a', 'b', 'c'] } });
  s = await api.post('/v1/connectors/crm/sync', {});
  await api.post(`/v1/connectors/crm/syncs/${s.sync_id}/progress`, { documents: { running: ['a', 'd'] } });
  await api.post(`/v1/connectors/crm/syncs/${s.sync_id}/failed`, { error: 'source answered 503 for page 7' });
  await api.call('POST', `/v1/connectors/crm/syncs/${s.sync_id}/progress`, {});
  out.failedConnector = 'crm';
  await api.post('/v1/connectors', { id: 'wiki', name: 'Team wiki' });
  s = await api.post('/v1/connectors/wiki/sync', {});
  await api.post(`/v1/connectors/wiki/syncs/${s.sync_id}/progress`, { documents: { pending: ['p1', 'p2'] } });

  // 4. A few more jobs: one queued, one failed, one running.
  await api.post('/v1/jobs', { id: 'refunds-01', kind: 'export', target: 'shop-b/refunds', plan: ['EXPORT'] });
  await api.post('/v1/jobs', { id: 'invoices-07', kind: 'load', target: 'shop-a/invoices', plan: ['LOAD'], max_attempts: 1 });
  c = await api.post('/v1/jobs/claim', { worker: 'w3', kinds: ['load'], lease_s: 60 });
  await api.post('/v1/jobs/invoices-07/start', { lease_token: c.lease_token });
  await api.post('/v1/jobs/invoices-07/steps/LOAD/start', { lease_token: c.lease_token });
  await api.post('/v1/jobs/invoices-07/steps/LOAD/failed', { lease_token: c.lease_token, error: 'duplicate key in invoices_2026_05', retryable: false });

  // 5. The job with 10,000 events: a running attempt with heartbeats, sent 16 at a time.
  await api.post('/v1/jobs', { id: 'backfill-big', kind: 'backfill', target: 'warehouse/backfill', plan: ['SCAN'] });
  c = await api.post('/v1/jobs/claim', { worker: 'w9', kinds: ['backfill'], lease_s: 3600 });
  tok = c.lease_token;
  await api.post('/v1/jobs/backfill-big/start', { lease_token: tok, execution_handle: 'task-9' });
  await api.post('/v1/jobs/backfill-big/steps/SCAN/start', { lease_token: tok });
  // JobEnqueued, JobLeased, JobStarted, StepStarted: 4 events so far.
  const want = bigEvents - 4;
  let sent = 0;
  const worker = async () => {
    while (sent < want) {
      sent++;
      await api.post('/v1/jobs/backfill-big/heartbeat', { lease_token: tok, lease_s: 3600 });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  out.big = 'backfill-big';
  out.bigToken = tok;
  return out;
}
