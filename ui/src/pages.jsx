import { useState, useEffect, useMemo, useRef } from 'preact/hooks';
import { api, store, query, setQuery, href, navigate, enc, fmtTime, fmtDur, ms, onLive, mayAct } from './lib.js';
import { State, Link, JobLink, HoldLink, TargetLink, ConnLink, SeqLink, Time, ErrorBox, useApi, Action, JsonToggle, JsonLines, EventsTable, StreamLink, Pager, Field, Icon } from './components.jsx';
import { Timeline, jobTimeline, Lanes, attemptsOf, heldLabel, holdLabel, at, ATTEMPT_ENDS, SEGMENT_EVENTS } from './timeline.jsx';
import { overlaps } from './overlap.js';
import { withJobSeqs, withHoldSeqs, withConnectorSeqs, grantsLease } from './seqs.js';

const ACTIVE = ['QUEUED', 'LEASED', 'RUNNING', 'STALE'];
const JOB_STATES = ['QUEUED', 'LEASED', 'RUNNING', 'STALE', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'YIELDED'];
const isJob = (ev) => ev.stream.startsWith('job/');

function Loading({ r }) { return r.loading && !r.data ? <p class="muted" role="status">Loading…</p> : <ErrorBox error={r.error} />; }

// ---------------- Now ----------------
export function NowPage() {
  store.tick = true;
  useEffect(() => () => { store.tick = false; }, []);
  const r = useApi(async () => {
    const [leased, running, stale, holds, cerr, csync, failed] = await Promise.all([
      api('/v1/jobs?state=LEASED&limit=1000'), api('/v1/jobs?state=RUNNING&limit=1000'), api('/v1/jobs?state=STALE&limit=1000'),
      api('/v1/holds?open=true'), api('/v1/connectors?status=error'), api('/v1/connectors?sync_status=running'), api('/v1/jobs?state=FAILED&limit=1000'),
    ]);
    const latestFailed = failed.jobs.sort((a, b) => (b.updated_at > a.updated_at ? 1 : -1)).slice(0, 10);
    const conns = [...cerr.connectors, ...csync.connectors.filter((c) => c.status !== 'error')];
    const [active, staleJobs, failedJobs, openHolds, shownConns] = await Promise.all([withJobSeqs([...leased.jobs, ...running.jobs]), withJobSeqs(stale.jobs),
      withJobSeqs(latestFailed), withHoldSeqs(holds.holds), withConnectorSeqs(conns)]);
    return { active, leasedN: leased.jobs.length, runningN: running.jobs.length, stale: staleJobs, holds: openHolds, cerrN: cerr.connectors.length, csyncN: csync.connectors.length, conns: shownConns,
      failed: failedJobs, failedN: failed.jobs.length };
  }, [], () => true);
  const d = r.data;
  return <>
    <h1>Now</h1>
    <Loading r={r} />
    {d ? <>
      <ul class="counts">
        <li><Link to={href('/ui/jobs', { state: 'LEASED' })}><State s="LEASED" /> <b>{d.leasedN}</b></Link></li>
        <li><Link to={href('/ui/jobs', { state: 'RUNNING' })}><State s="RUNNING" /> <b>{d.runningN}</b></Link></li>
        <li><Link to={href('/ui/jobs', { state: 'STALE' })}><State s="STALE" /> <b>{d.stale.length}</b></Link></li>
        <li><Link to={href('/ui/holds', { open: 'true' })}><State s="open" label="open holds" /> <b>{d.holds.length}</b></Link></li>
        <li><Link to={href('/ui/connectors', { status: 'error' })}><State s="error" label="connectors in error" /> <b>{d.cerrN}</b></Link></li>
        <li><Link to={href('/ui/connectors', { sync_status: 'running' })}><State s="running" label="syncing" /> <b>{d.csyncN}</b></Link></li>
        <li><Link to={href('/ui/jobs', { state: 'FAILED' })}><State s="FAILED" /> <b>{d.failedN}</b></Link></li>
      </ul>
      <h2>Attempts leased or running</h2>
      {d.active.length ? <div class="scroll" tabindex="0" role="region" aria-label="active attempts"><table>
        <thead><tr><th scope="col">job</th><th scope="col">state</th><th scope="col">attempt</th><th scope="col">kind</th><th scope="col">target</th><th scope="col">worker</th><th scope="col">lease expires</th><th scope="col">in</th></tr></thead>
        <tbody>{d.active.map((j) => <tr><td><JobLink id={j.id} /></td><td><State s={j.state} /></td><td>{j.attempt}</td><td>{j.kind}</td><td><TargetLink t={j.target} /></td><td>{j.lease ? j.lease.worker : '—'}</td>
          <td>{j.lease ? <Time iso={j.lease.expires_at} seq={j.seqs.leaseGranted} /> : '—'}</td><td class="countdown">{j.lease ? (ms(j.lease.expires_at) >= store.now ? fmtDur(ms(j.lease.expires_at) - store.now) : 'expiring') : ''}</td></tr>)}</tbody>
      </table></div> : <p class="muted">None.</p>}
      <h2>Stale jobs (outcome unknown)</h2>
      {d.stale.length ? <JobsTable jobs={d.stale} /> : <p class="muted">None.</p>}
      <h2>Open holds</h2>
      {d.holds.length ? <HoldsTable holds={d.holds} /> : <p class="muted">None.</p>}
      <h2>Connectors in error or syncing</h2>
      {d.conns.length ? <ConnTable conns={d.conns} /> : <p class="muted">None.</p>}
      <h2>Latest failures</h2>
      {d.failed.length ? <JobsTable jobs={d.failed} /> : <p class="muted">None.</p>}
    </> : null}
  </>;
}

function JobsTable({ jobs }) {
  return <div class="scroll" tabindex="0" role="region" aria-label="jobs"><table class="jobs">
    <thead><tr><th scope="col">job</th><th scope="col">state</th><th scope="col">attempts</th><th scope="col">kind</th><th scope="col">target</th><th scope="col">updated</th><th scope="col">error</th></tr></thead>
    <tbody>{jobs.map((j) => <tr data-job={j.id}><td><JobLink id={j.id} /></td><td><State s={j.state} /></td>
      <td>{j.attempts.length > 1 ? <span class="badge tone-stale" data-ran={j.attempts.length}><Icon name="warn" />ran {j.attempts.length} times</span> : '1'}</td>
      <td>{j.kind}</td><td><TargetLink t={j.target} /></td><td><Time iso={j.updated_at} seq={j.seqs && j.seqs.updated} /></td><td class="clip">{j.error || ''}</td></tr>)}</tbody>
  </table></div>;
}

// ---------------- Jobs ----------------
export function JobsPage() {
  const q = query();
  const state = q.get('state') || '', kind = q.get('kind') || '', target = q.get('target') || '', after = q.get('after') || '';
  const r = useApi(() => {
    const p = new URLSearchParams({ limit: '50' });
    if (state) p.set('state', state); if (kind) p.set('kind', kind); if (target) p.set('target', target); if (after) p.set('after', after);
    return api('/v1/jobs?' + p).then(async (r) => ({ ...r, jobs: await withJobSeqs(r.jobs) }));
  }, [state, kind, target, after], isJob);
  const [k, setK] = useState(kind), [t, setT] = useState(target);
  useEffect(() => { setK(kind); setT(target); }, [kind, target]);
  const prev = useRef([]);
  return <>
    <h1>Jobs</h1>
    <form class="filters" onSubmit={(e) => { e.preventDefault(); setQuery({ kind: k, target: t, after: '' }, false); }}>
      <label>state <select value={state} onChange={(e) => setQuery({ state: e.target.value, after: '' }, false)}>
        <option value="">any</option>{JOB_STATES.map((s) => <option value={s}>{s}</option>)}</select></label>
      <label>kind <input value={k} onInput={(e) => setK(e.target.value)} /></label>
      <label>target <input value={t} onInput={(e) => setT(e.target.value)} /></label>
      <button type="submit">Filter</button>
      {state || kind || target ? <Link to={href('/ui/jobs')}>clear</Link> : null}
    </form>
    <Loading r={r} />
    {r.data ? <>
      {r.data.jobs.length ? <JobsTable jobs={r.data.jobs} /> : <p class="muted">No job matches.</p>}
      <Pager onPrev={after ? () => setQuery({ after: prev.current.pop() || '' }, false) : null}
        onNext={r.data.next ? () => { prev.current.push(after); setQuery({ after: r.data.next }, false); } : null} />
    </> : null}
  </>;
}

// ---------------- One job ----------------
const PAGE = 100;
export function JobPage({ id }) {
  const q = query();
  const asOf = q.get('as_of') ? Number(q.get('as_of')) : null;
  const [job, setJob] = useState(null);
  const [err, setErr] = useState(null);
  const [events, setEvents] = useState([]); // every event of the job loaded so far, in version order
  const [complete, setComplete] = useState(false);
  const [holds, setHolds] = useState([]);
  const [page, setPage] = useState(0);
  const evRef = useRef([]);
  evRef.current = events;

  async function loadJob() {
    try { const j = await api(`/v1/jobs/${enc(id)}`); setJob(j); setErr(null); return j; } catch (e) { setErr(e); return null; }
  }
  const loadHolds = async (j) => withHoldSeqs((await api(`/v1/holds?target=${enc(j.target)}`)).holds);
  async function loadEventsFrom(after, first) {
    // The first page is small, so the first screen comes at once; the rest follows in big pages.
    let a = after, lim = first ? PAGE : 10000;
    for (;;) {
      const r = await api(`/v1/jobs/${enc(id)}/events?after=${a}&limit=${lim}`);
      if (r.events.length) setEvents((old) => { const last = old.length ? old[old.length - 1].version : 0; return old.concat(r.events.filter((e) => e.version > last)); });
      if (r.events.length < lim) break;
      a = r.next_after; lim = 10000;
    }
    setComplete(true);
  }
  useEffect(() => {
    setJob(null); setEvents([]); setComplete(false); setPage(0); setErr(null);
    let alive = true;
    (async () => {
      // the view and the first page of events at once; the rest of the events after the first paint
      const first = api(`/v1/jobs/${enc(id)}/events?after=0&limit=${PAGE}`);
      first.catch(() => {});
      const j = await loadJob();
      if (!j || !alive) return;
      loadHolds(j).then((h) => alive && setHolds(h)).catch(() => {});
      try {
        const r = await first;
        if (!alive) return;
        setEvents(r.events);
        if (r.events.length < PAGE) { setComplete(true); return; }
        await new Promise((res) => setTimeout(res, 50));
        if (alive) await loadEventsFrom(r.next_after, false);
      } catch (e) { if (alive) setErr(e); }
    })();
    return () => { alive = false; };
  }, [id]);
  // live: append new events of this job, refresh its view
  useEffect(() => {
    let t = null;
    const off = onLive((ev) => {
      if (ev.stream === `job/${id}` || (job && ev.stream.startsWith('hold/'))) {
        if (!t) t = setTimeout(async () => {
          t = null;
          const j = await loadJob();
          const last = evRef.current.length ? evRef.current[evRef.current.length - 1].version : 0;
          if (complete) await loadEventsFrom(last, false).catch(() => {});
          if (j) loadHolds(j).then(setHolds).catch(() => {});
        }, 150);
      }
    });
    return () => { off(); if (t) clearTimeout(t); };
  }, [id, complete, job && job.target]);

  const model = useMemo(() => (job ? jobTimeline(job, events, holds, store.now) : null), [job, events, holds, complete]);
  const pages = Math.max(1, Math.ceil(events.length / PAGE));
  const shown = events.slice(page * PAGE, page * PAGE + PAGE);
  if (err && !job) return <><h1>Job {id}</h1><ErrorBox error={err} /></>;
  if (!job) return <><h1>Job {id}</h1><p class="muted" role="status">Loading…</p></>;
  const pick = (seq) => setQuery({ as_of: seq });
  return <>
    <h1>Job {id} <State s={job.state} /></h1>
    <p class="sub">kind <b>{job.kind}</b> · target <TargetLink t={job.target} /> · attempt {job.attempt} of at most {job.max_attempts}
      {job.attempts.length > 1 ? <> · <span class="badge tone-stale"><Icon name="warn" />ran {job.attempts.length} times</span></> : null}</p>
    <div class="actions">
      {['QUEUED', 'LEASED', 'RUNNING'].includes(job.state) && !job.cancel_requested ?
        <Action label="Cancel job" danger confirm={`Cancel job ${id}?`} run={() => api(`/v1/jobs/${enc(id)}/cancel`, { method: 'POST', body: { reason: 'cancelled from the console' }, action: true })} done={loadJob} /> : null}
      {['SUCCEEDED', 'FAILED', 'CANCELLED', 'YIELDED'].includes(job.state) ?
        <Action label="Rerun job" confirm={`Run job ${id} once more (attempt ${job.attempt + 1})?`} run={() => api(`/v1/jobs/${enc(id)}/rerun`, { method: 'POST', body: { reason: 'rerun from the console' }, action: true })} done={loadJob} /> : null}
    </div>
    <ErrorBox error={err} />
    {model ? <Timeline model={model} title={`Timeline of ${id}`} onPickSeq={pick} /> : null}
    <TimeTravel id={id} job={job} events={events} complete={complete} asOf={asOf} />
    <h2>Events <span class="muted small">({events.length}{complete ? '' : '+, loading'} · version order)</span></h2>
    <Pager label="event pages" onPrev={page > 0 ? () => setPage(page - 1) : null} onNext={page < pages - 1 ? () => setPage(page + 1) : null} />
    <p class="muted small">page {page + 1} of {pages}{complete ? '' : '+'}; click a type to see the job as of that event</p>
    <EventsTable events={shown} onPick={pick} picked={asOf} showStream={false} caption={`events of job ${id}`} />
  </>;
}

// The seq of the event that recorded each time of a job's view (as of its version), found by
// what the event did, not by its time: several events can share a millisecond (a step's
// StepSucceeded and its attempt's AttemptSucceeded). A seq is shown only when that event's time
// is the time shown; the lease expiry's is the event that granted it.
function viewSeqs(job, events) {
  const found = new Map();
  for (const e of events) {
    if (e.version > job.version) break;
    const n = e.data.attempt, step = e.data.step;
    if (e.type === 'JobEnqueued') found.set('created', e);
    if (e.version === job.version) found.set('updated', e);
    if (job.lease && grantsLease(e, job.lease.expires_at)) found.set('lease', e);
    if (e.type === 'JobStarted') found.set(`started ${n}`, e);
    if (ATTEMPT_ENDS.has(e.type)) found.set(`finished ${n}`, e);
    if (e.type === 'StepStarted') found.set(`step started ${n} ${step}`, e);
    if (e.type === 'StepSucceeded' || e.type === 'StepFailed') found.set(`step finished ${n} ${step}`, e);
  }
  return (key, iso) => { const e = found.get(key); return e && (iso === null || e.recorded_at === iso) ? e.seq : null; };
}

function JobView({ job, changed = new Set(), events }) {
  const c = (k) => (changed.has(k) ? 'chg' : '');
  const seqOf = useMemo(() => viewSeqs(job, events), [job, events]);
  const T = ({ iso, of }) => <Time iso={iso} seq={iso ? seqOf(of, iso) : null} />;
  return <div class="view">
    <dl class="kv">
      <dt class={c('state')}>state</dt><dd class={c('state')}><State s={job.state} /></dd>
      <dt class={c('attempt')}>attempt</dt><dd class={c('attempt')}>{job.attempt} · client token <span class="mono">{job.client_token}</span></dd>
      <dt class={c('lease')}>lease</dt><dd class={c('lease')}>{job.lease ? <>worker {job.lease.worker}, expires <Time iso={job.lease.expires_at} seq={seqOf('lease', null)} /></> : 'none'}</dd>
      <dt class={c('cancel_requested')}>cancel requested</dt><dd class={c('cancel_requested')}>{job.cancel_requested ? `yes: ${job.cancel_reason || ''}` : 'no'}</dd>
      <dt class={c('blocked_by')}>blocked by</dt><dd class={c('blocked_by')}>{job.blocked_by ? (job.blocked_by.job ? <>job <JobLink id={job.blocked_by.job} /></> : <>hold <HoldLink id={job.blocked_by.hold} /></>) : 'nothing'}</dd>
      <dt class={c('execution_handle')}>execution handle</dt><dd class={c('execution_handle')}>{job.execution_handle || '—'}</dd>
      <dt class={c('error')}>error</dt><dd class={c('error')}>{job.error || '—'}</dd>
      <dt class={c('created_at')}>created</dt><dd class={c('created_at')}><T iso={job.created_at} of="created" /></dd>
      <dt class={c('updated_at')}>updated</dt><dd class={c('updated_at')}><T iso={job.updated_at} of="updated" /> · version {job.version}</dd>
    </dl>
    <div class="scroll" tabindex="0" role="region" aria-label="attempts and steps"><table class={c('attempts')}>
      <caption>Attempts</caption>
      <thead><tr><th scope="col">#</th><th scope="col">state</th><th scope="col">started</th><th scope="col">finished</th><th scope="col">ran</th><th scope="col">error</th></tr></thead>
      <tbody>{job.attempts.map((a) => <tr><td>{a.attempt}</td><td><State s={a.state} /></td><td><T iso={a.started_at} of={`started ${a.attempt}`} /></td><td><T iso={a.finished_at} of={`finished ${a.attempt}`} /></td>
        <td>{a.started_at && a.finished_at ? fmtDur(ms(a.finished_at) - ms(a.started_at)) : ''}</td><td>{a.error || ''}</td></tr>)}</tbody>
    </table>
    <table class={c('steps')}>
      <caption>Steps of attempt {job.attempt}</caption>
      <thead><tr><th scope="col">step</th><th scope="col">state</th><th scope="col">started</th><th scope="col">finished</th><th scope="col">output / error</th></tr></thead>
      <tbody>{job.steps.map((s) => <tr><td>{s.name}</td><td><State s={s.state} />{s.reused_from ? ` from attempt ${s.reused_from}` : ''}</td><td><T iso={s.started_at} of={`step started ${job.attempt} ${s.name}`} /></td><td><T iso={s.finished_at} of={`step finished ${job.attempt} ${s.name}`} /></td>
        <td class="mono clip">{s.error || (s.output !== undefined ? JSON.stringify(s.output) : '')}</td></tr>)}</tbody>
    </table></div>
  </div>;
}

function diffKeys(a, b) {
  const s = new Set();
  if (!a || !b) return s;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) s.add(k);
  return s;
}

function TimeTravel({ id, job, events, complete, asOf }) {
  const [snap, setSnap] = useState(null);
  const [err, setErr] = useState(null);
  const idx = asOf === null ? events.length - 1 : events.findIndex((e) => e.seq === asOf);
  useEffect(() => {
    if (asOf === null) { setSnap(null); return; }
    let alive = true;
    const i = events.findIndex((e) => e.seq === asOf);
    const prevSeq = i > 0 ? events[i - 1].seq : null;
    Promise.all([api(`/v1/jobs/${enc(id)}?as_of=${asOf}`), prevSeq ? api(`/v1/jobs/${enc(id)}?as_of=${prevSeq}`) : Promise.resolve(null)])
      .then(([cur, prev]) => { if (alive) { setSnap({ seq: asOf, cur, changed: prev ? diffKeys(prev, cur) : new Set(Object.keys(cur)) }); setErr(null); } })
      .catch((e) => alive && setErr(e));
    return () => { alive = false; };
  }, [id, asOf, events.length > 0 && events.findIndex((e) => e.seq === asOf) > 0]);
  const go = (i) => { if (i >= 0 && i < events.length) setQuery({ as_of: events[i].seq }); };
  const ev = idx >= 0 ? events[idx] : null;
  return <section class="travel" aria-label="time travel">
    <h2>{asOf === null ? 'Now' : <>As of seq <span data-testid="asof-seq">{asOf}</span></>}</h2>
    <div class="toolbar">
      <label for="tt-slider">time travel</label>
      <input id="tt-slider" type="range" min="0" max={Math.max(0, events.length - 1)} value={Math.max(0, idx)} disabled={!events.length}
        aria-valuetext={ev ? `seq ${ev.seq}, ${ev.type}, ${ev.recorded_at}` : ''}
        onInput={(e) => go(Number(e.target.value))} />
      <button type="button" onClick={() => go((idx < 0 ? events.length : idx) - 1)} aria-label="previous event">◀</button>
      <button type="button" onClick={() => go(idx + 1)} aria-label="next event">▶</button>
      <button type="button" disabled={asOf === null} onClick={() => setQuery({ as_of: '' })}>Now</button>
      {ev ? <span>seq <SeqLink seq={ev.seq} /> · {ev.type} · <Time iso={ev.recorded_at} /></span> : null}
      {!complete ? <span class="muted small">loading the rest of the events…</span> : null}
    </div>
    <ErrorBox error={err} />
    {asOf !== null && snap && snap.seq === asOf ? <>
      <p class="muted small">exactly <span class="mono">GET /v1/jobs/{id}?as_of={asOf}</span>; fields changed by this event are highlighted</p>
      <JobView job={snap.cur} changed={snap.changed} events={events} />
      <details open><summary>JSON as of seq {asOf}</summary><JsonLines value={snap.cur} changed={snap.changed} testid="asof-json" /></details>
    </> : asOf === null ? <>
      <JobView job={job} events={events} />
      <details><summary>JSON now</summary><JsonLines value={job} testid="job-json" /></details>
    </> : <p class="muted" role="status">Loading seq {asOf}…</p>}
  </section>;
}

// ---------------- Target ----------------
// The events that shape a job's attempts (claims, starts, ends: not its heartbeats or steps), read
// through the log's filters, so that a job with many heartbeats costs what its attempts do.
async function segmentEvents(job) {
  const out = [];
  for (let after = 0; ;) {
    const p = new URLSearchParams({ stream: `job/${job.id}`, after: String(after), limit: '10000' });
    for (const t of SEGMENT_EVENTS) p.append('type', t);
    const r = await api('/v1/events?' + p);
    out.push(...r.events);
    if (r.events.length < 10000) return out;
    after = r.next_after;
  }
}

export function TargetPage({ target }) {
  // reload on what changes this target: its jobs, holds, and a job newly enqueued on it
  const jobStreams = useRef(new Set());
  const r = useApi(async () => {
    const [gate, holds, jobs] = await Promise.all([api(`/v1/targets/${enc(target)}/gate`), api(`/v1/holds?target=${enc(target)}`), api(`/v1/jobs?target=${enc(target)}&limit=1000`)]);
    jobStreams.current = new Set(jobs.jobs.map((j) => `job/${j.id}`));
    const [withSeqs, runs, holdsWithSeqs] = await Promise.all([withJobSeqs(jobs.jobs), Promise.all(jobs.jobs.map(segmentEvents)), withHoldSeqs(holds.holds)]);
    return { gate, holds: holdsWithSeqs, jobs: withSeqs, runs };
  }, [target], (ev) => ev.stream.startsWith('hold/') || jobStreams.current.has(ev.stream) || (ev.type === 'JobEnqueued' && ev.data.target === target));
  const d = r.data;
  let chart = null;
  if (d) {
    const now = store.now;
    const lanes = [], held = [];
    let t0 = Infinity, t1 = -Infinity;
    d.jobs.forEach((j, i) => {
      const { attempts, markers } = attemptsOf(j, d.runs[i], now);
      t0 = Math.min(t0, ms(j.created_at));
      t1 = Math.max(t1, ms(j.updated_at));
      const enqueued = markers.find((m) => m.kind === 'enqueue');
      const enq = { t: ms(j.created_at), label: `job ${j.id} enqueued ${at(j.created_at, enqueued && enqueued.seq)}` };
      // one lane per attempt ever claimed, so that each shows its own state in words
      const claimed = attempts.filter((a) => a.bar);
      if (!claimed.length) { lanes.push({ name: j.id, bars: [], points: [enq] }); return; }
      claimed.forEach((a, k) => {
        for (const h of a.held) held.push({ job: j.id, attempt: a.attempt, from: h.from, to: h.to });
        t1 = Math.max(t1, a.bar.to);
        lanes.push({ name: `${j.id} #${a.attempt}`, points: k === 0 ? [enq] : [],
          bars: [{ from: a.bar.from, to: a.bar.to, segs: a.segs, state: a.state, word: a.state + (a.segs.some((s) => s.open) ? ' →' : ''), label: heldLabel(j.id, a) }] });
      });
    });
    for (const h of d.holds) {
      const from = ms(h.placed_at), to = h.released ? ms(h.released_at) : now;
      t0 = Math.min(t0, from); t1 = Math.max(t1, to);
      lanes.push({ name: `hold ${h.id}`, bars: [{ from, to, state: h.released ? 'released' : 'open', word: h.released ? 'released' : 'open', outlined: true, label: holdLabel(h) }] });
    }
    const bands = overlaps(held);
    if (lanes.length && t1 > t0) chart = <Lanes title={`Who held ${target} when`} lanes={lanes} bands={bands} t0={t0} t1={t1}
      legend={<p class="muted small">Bars: each attempt from its claim to its end (or now): LEASED, RUNNING, and STALE hatched with “?” (a STALE attempt no longer holds the target; its hold does); outlined bars: holds; red band: two attempts holding the target at once.{bands.length ? ` ${bands.length} overlap(s).` : ' No overlap.'}</p>} />;
  }
  return <>
    <h1>Target <span class="mono">{target}</span></h1>
    <Loading r={r} />
    {d ? <>
      <section aria-label="gate" class="gate">
        <h2>Gate: {d.gate.may_start ? <State s="yes" label="new work may start" /> : <State s="no" label="new work may not start" />}</h2>
        {d.gate.reasons.length ? <ul>{d.gate.reasons.map((x) => <li>{x.code === 'hold' ? <>open hold <HoldLink id={x.hold} /> <State s={x.kind} /></> : <>attempt active: job <JobLink id={x.job} /> <State s={x.state} /></>}</li>)}</ul> : null}
        {d.gate.recovery_needed && d.gate.recovery_needed.length ? <p>Recovery needed: {d.gate.recovery_needed.map((x) => <><HoldLink id={x.hold} /> ({x.kind}) </>)}</p> : null}
      </section>
      {chart}
      <h2>Holds on this target</h2>
      {d.holds.length ? <HoldsTable holds={d.holds} /> : <p class="muted">None.</p>}
      <h2>Jobs on this target</h2>
      {d.jobs.length ? <JobsTable jobs={d.jobs} /> : <p class="muted">None.</p>}
    </> : null}
  </>;
}

// ---------------- Holds ----------------
function HoldsTable({ holds }) {
  return <div class="scroll" tabindex="0" role="region" aria-label="holds"><table>
    <thead><tr><th scope="col">hold</th><th scope="col">state</th><th scope="col">kind</th><th scope="col">target</th><th scope="col">job</th><th scope="col">reason</th><th scope="col">placed</th><th scope="col">released</th></tr></thead>
    <tbody>{holds.map((h) => <tr data-hold={h.id}><td><HoldLink id={h.id} /></td><td><State s={h.released ? 'released' : 'open'} /></td><td><State s={h.kind} /></td><td><TargetLink t={h.target} /></td>
      <td>{h.job ? <JobLink id={h.job} /> : '—'}</td><td class="clip">{h.reason}</td><td>{h.placed_by}, <Time iso={h.placed_at} seq={h.seqs && h.seqs.placed} /></td><td>{h.released ? <>{h.released_by}, <Time iso={h.released_at} seq={h.seqs && h.seqs.released} /></> : '—'}</td></tr>)}</tbody>
  </table></div>;
}

export function HoldsPage() {
  const q = query();
  const open = q.get('open') || '', target = q.get('target') || '';
  const r = useApi(async () => {
    const p = new URLSearchParams(); if (open) p.set('open', open); if (target) p.set('target', target);
    const res = await api('/v1/holds?' + p);
    return { ...res, holds: await withHoldSeqs(res.holds) };
  }, [open, target], (e) => e.stream.startsWith('hold/'));
  return <>
    <h1>Holds</h1>
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label>show <select value={open} onChange={(e) => setQuery({ open: e.target.value }, false)}><option value="">all</option><option value="true">open</option><option value="false">released</option></select></label>
      <label>target <input value={target} onChange={(e) => setQuery({ target: e.target.value }, false)} /></label>
    </form>
    <Loading r={r} />
    {r.data ? (r.data.holds.length ? <HoldsTable holds={r.data.holds} /> : <p class="muted">No hold matches.</p>) : null}
  </>;
}

export function HoldPage({ id }) {
  const asOf = query().get('as_of');
  const r = useApi(async () => {
    const h = await api(`/v1/holds/${enc(id)}` + (asOf ? `?as_of=${asOf}` : ''));
    const ev = await api(`/v1/holds/${enc(id)}/events`);
    let job = null;
    if (h.job) job = await api(`/v1/jobs/${enc(h.job)}`).catch(() => null);
    return { h, events: ev.events, job };
  }, [id, asOf], (e) => e.stream === `hold/${id}`);
  if (!r.data) return <><h1>Hold {id}</h1><Loading r={r} /></>;
  const { h, events, job } = r.data;
  const seqOf = (type) => { const e = events.find((x) => x.type === type); return e && e.seq; };
  return <>
    <h1>Hold {id} <State s={h.released ? 'released' : 'open'} /></h1>
    {asOf ? <p class="banner">As of seq <SeqLink seq={asOf} /> · <Link to={href(`/ui/holds/${enc(id)}`)}>now</Link></p> : null}
    <ErrorBox error={r.error} />
    <dl class="kv">
      <Field k="kind"><State s={h.kind} /> {h.kind === 'EXECUTION_STATE_UNKNOWN' ? '(blocks the target)' : '(does not block; recovery needed)'}</Field>
      <Field k="target"><TargetLink t={h.target} /></Field>
      <Field k="job">{h.job ? <><JobLink id={h.job} /> attempt {h.attempt}</> : '—'}</Field>
      <Field k="reason">{h.reason}</Field>
      <Field k="placed">{h.placed_by}, <Time iso={h.placed_at} seq={seqOf('HoldPlaced')} /></Field>
      <Field k="released">{h.released ? <>{h.released_by}, <Time iso={h.released_at} seq={seqOf('HoldReleased')} /></> : 'no'}</Field>
      <Field k="evidence">{h.released ? <>note “{h.release_note}” · execution stopped: {h.execution_stopped ? 'yes' : 'no'} · outcome: {h.outcome || '—'}</> : '—'}</Field>
    </dl>
    {!h.released && !asOf && mayAct() ? <ReleaseForm hold={h} job={job} done={r.reload} /> : null}
    <h2>Events</h2>
    <EventsTable events={events} showStream={false} caption={`events of hold ${id}`} />
  </>;
}

// The evidence domain.md asks for: a note always; execution_stopped true for EXECUTION_STATE_UNKNOWN;
// an outcome exactly when the hold's attempt is still STALE, and never otherwise.
function ReleaseForm({ hold, job, done }) {
  const [note, setNote] = useState('');
  const [stopped, setStopped] = useState(false);
  const [outcome, setOutcome] = useState('');
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  const att = job && hold.attempt ? job.attempts.find((a) => a.attempt === hold.attempt) : null;
  const needOutcome = !!(att && att.state === 'STALE');
  const problems = [];
  if (!note.trim()) problems.push('a note is required');
  // the API's limit is in UTF-8 bytes, not characters: 'é' is two
  const noteBytes = new TextEncoder().encode(note).length;
  if (noteBytes > 4096) problems.push(`the note is at most 4,096 bytes of UTF-8 (this one is ${noteBytes.toLocaleString('en')})`);
  if (hold.kind === 'EXECUTION_STATE_UNKNOWN' && !stopped) problems.push('confirm that the execution stopped (a stop request is not a stop)');
  if (needOutcome && !outcome) problems.push(`choose the outcome of job ${hold.job} attempt ${hold.attempt}, which is STALE`);
  return <form class="release" aria-label="release the hold" onSubmit={async (e) => {
    e.preventDefault();
    if (problems.length) return;
    if (!window.confirm(`Release hold ${hold.id}${needOutcome ? ` and resolve attempt ${hold.attempt} as ${outcome}` : ''}?`)) return;
    setBusy(true); setErr(null);
    const body = { note };
    if (hold.kind === 'EXECUTION_STATE_UNKNOWN' || stopped) body.execution_stopped = stopped;
    if (needOutcome) body.outcome = outcome;
    try { await api(`/v1/holds/${enc(hold.id)}/release`, { method: 'POST', body, action: true }); done(); } catch (x) { setErr(x); }
    setBusy(false);
  }}>
    <h2>Release with evidence</h2>
    <label for="rel-note">Note (what you checked)</label>
    <textarea id="rel-note" rows="3" value={note} onInput={(e) => setNote(e.target.value)} required />
    <label class="check"><input type="checkbox" checked={stopped} onChange={(e) => setStopped(e.target.checked)} /> The execution has stopped{hold.kind === 'EXECUTION_STATE_UNKNOWN' ? ' (required for this kind)' : ''}</label>
    {needOutcome ? <label>Outcome of the stale attempt <select value={outcome} onChange={(e) => setOutcome(e.target.value)}><option value="">choose…</option><option value="SUCCEEDED">SUCCEEDED</option><option value="FAILED">FAILED</option></select></label>
      : <p class="muted small">No outcome: this hold has no attempt that is still STALE, and the API refuses an outcome that resolves nothing.</p>}
    {problems.length ? <ul class="problems" aria-live="polite">{problems.map((p) => <li>{p}</li>)}</ul> : null}
    <button type="submit" class="danger" disabled={busy || problems.length > 0}>Release hold</button>
    <ErrorBox error={err} />
  </form>;
}

// ---------------- Connectors ----------------
function ConnTable({ conns }) {
  return <div class="scroll" tabindex="0" role="region" aria-label="connectors"><table>
    <thead><tr><th scope="col">connector</th><th scope="col">name</th><th scope="col">status</th><th scope="col">sync</th><th scope="col">last error</th><th scope="col">last synced</th><th scope="col">documents</th></tr></thead>
    <tbody>{conns.map((c) => <tr data-conn={c.id}><td><ConnLink id={c.id} /></td><td>{c.name}</td><td><State s={c.status} /></td><td><State s={c.sync_status} /></td><td class="clip">{c.last_error || '—'}</td><td><Time iso={c.last_synced_at} seq={c.seqs && c.seqs.lastSynced} /></td>
      <td>{c.documents.indexed} indexed · {c.documents.pending} pending · {c.documents.running} running · {c.documents.failed} failed</td></tr>)}</tbody>
  </table></div>;
}

export function ConnectorsPage() {
  const q = query();
  const status = q.get('status') || '', sync = q.get('sync_status') || '';
  const r = useApi(async () => {
    const p = new URLSearchParams(); if (status) p.set('status', status); if (sync) p.set('sync_status', sync);
    const res = await api('/v1/connectors?' + p);
    return { ...res, connectors: await withConnectorSeqs(res.connectors) };
  }, [status, sync], (e) => e.stream.startsWith('connector/'));
  return <>
    <h1>Connectors</h1>
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label>status <select value={status} onChange={(e) => setQuery({ status: e.target.value }, false)}><option value="">any</option>{['active', 'paused', 'error', 'deleting'].map((s) => <option value={s}>{s}</option>)}</select></label>
      <label>sync <select value={sync} onChange={(e) => setQuery({ sync_status: e.target.value }, false)}><option value="">any</option><option value="idle">idle</option><option value="running">running</option></select></label>
    </form>
    <Loading r={r} />
    {r.data ? (r.data.connectors.length ? <ConnTable conns={r.data.connectors} /> : <p class="muted">No connector matches.</p>) : null}
  </>;
}

function syncBars(events, now) {
  const syncs = new Map();
  const points = [];
  let t0 = Infinity, t1 = -Infinity;
  for (const e of events) {
    const t = ms(e.recorded_at);
    t0 = Math.min(t0, t); t1 = Math.max(t1, t);
    const id = e.data.sync_id;
    if (e.type === 'SyncStarted') syncs.set(id, { id, from: t, to: null, state: 'running', trigger: e.data.trigger, marks: [], fromIso: e.recorded_at, seq: e.seq, progress: 0 });
    else if (e.type === 'SyncProgressed' && syncs.has(id)) { const s = syncs.get(id); s.progress++; s.marks.push({ t, kind: 'progress', label: `progress ${e.recorded_at} seq ${e.seq}` }); }
    else if (['SyncSucceeded', 'SyncFailed', 'SyncAborted'].includes(e.type) && syncs.has(id)) { const s = syncs.get(id); s.to = t; s.toIso = e.recorded_at; s.toSeq = e.seq; s.state = { SyncSucceeded: 'succeeded', SyncFailed: 'failed', SyncAborted: 'aborted' }[e.type]; s.error = e.data.error; }
    else if (e.type === 'SyncLockBroken') { const old = syncs.get(e.data.sync_id || e.data.superseded_sync_id || e.data.old_sync_id); if (old) { old.to = t; old.toIso = e.recorded_at; old.state = 'superseded'; old.toSeq = e.seq; } }
    else if (e.type === 'SyncReportIgnored') { const s = syncs.get(id); const m = { t, kind: 'ignored', label: `ignored late ${e.data.report} report (${e.data.reason}) ${e.recorded_at} seq ${e.seq}` }; if (s) s.marks.push(m); else points.push(m); }
    else if (e.type === 'SyncSkipped' || e.type === 'ScheduleGap') points.push({ t, label: `${e.type} ${e.data.reason || `${e.data.slots_missed} slots missed`} ${e.recorded_at} seq ${e.seq}` });
  }
  for (const s of syncs.values()) if (s.to === null) { s.to = now; t1 = Math.max(t1, now); }
  return { syncs: [...syncs.values()], points, t0, t1 };
}

export function ConnectorPage({ id }) {
  const asOf = query().get('as_of');
  const r = useApi(async () => {
    const [c, ev, docs] = await Promise.all([api(`/v1/connectors/${enc(id)}` + (asOf ? `?as_of=${asOf}` : '')), api(`/v1/connectors/${enc(id)}/events`), api(`/v1/connectors/${enc(id)}/documents`).catch(() => ({ documents: [] }))]);
    return { c, events: ev.events, docs: docs.documents };
  }, [id, asOf], (e) => e.stream === `connector/${id}`);
  if (!r.data) return <><h1>Connector {id}</h1><Loading r={r} /></>;
  const { c, events, docs } = r.data;
  const sb = syncBars(events, store.now);
  // the events that recorded the connector's times: the sync that succeeded last, the one running
  const seqOf = (type, pick) => { const e = events.find((x) => x.type === type && pick(x)); return e && e.seq; };
  const syncedSeq = seqOf('SyncSucceeded', (e) => e.recorded_at === c.last_synced_at);
  const startedSeq = c.sync ? seqOf('SyncStarted', (e) => e.data.sync_id === c.sync.sync_id) : null;
  const act = (label, confirm, path, method, body) => <Action label={label} confirm={confirm} run={() => api(path, { method, body, action: true })} done={r.reload} />;
  return <>
    <h1>Connector {id} <State s={c.status} /> <State s={c.sync_status} /></h1>
    {asOf ? <p class="banner">As of seq <SeqLink seq={asOf} /> · <Link to={href(`/ui/connectors/${enc(id)}`)}>now</Link></p> : null}
    <ErrorBox error={r.error} />
    {!asOf ? <div class="actions">
      {c.status === 'paused' ? act('Resume', `Resume connector ${id}?`, `/v1/connectors/${enc(id)}`, 'PATCH', { status: 'active' }) : c.status !== 'deleting' ? act('Pause', `Pause connector ${id}?`, `/v1/connectors/${enc(id)}`, 'PATCH', { status: 'paused' }) : null}
      {c.sync_status === 'idle' && c.status !== 'paused' ? act('Start sync', `Start a sync of ${id}?`, `/v1/connectors/${enc(id)}/sync`, 'POST', {}) : null}
      {c.sync_status === 'running' ? act('Abort sync', `Abort the running sync of ${id}? Its pending and running documents are marked failed.`, `/v1/connectors/${enc(id)}/sync/abort`, 'POST', {}) : null}
    </div> : null}
    <dl class="kv">
      <Field k="name">{c.name}</Field>
      <Field k="last error">{c.last_error ? <span class="errtext">{c.last_error}</span> : '—'}</Field>
      <Field k="last synced"><Time iso={c.last_synced_at} seq={syncedSeq} /></Field>
      <Field k="schedule">{c.sync_schedule_s ? `every ${fmtDur(c.sync_schedule_s * 1000)}` : 'none'}</Field>
      <Field k="current sync">{c.sync ? <>{c.sync.sync_id} ({c.sync.trigger}) since <Time iso={c.sync.started_at} seq={startedSeq} /></> : 'none'}</Field>
      <Field k="documents">{c.documents.indexed} indexed · {c.documents.pending} pending · {c.documents.running} running · {c.documents.failed} failed</Field>
    </dl>
    {sb.syncs.length || sb.points.length ? <Lanes title={`Syncs of ${id}`} t0={sb.t0} t1={sb.t1}
      lanes={[...sb.syncs.map((s) => ({ name: `${s.id.slice(5, 13)} ${s.trigger}`, bars: [{ from: s.from, to: s.to, state: s.state, word: s.state, marks: s.marks, label: `sync ${s.id} ${s.state} (trigger ${s.trigger}): started ${s.fromIso} seq ${s.seq}, ${s.toIso ? `ended ${s.toIso} seq ${s.toSeq}` : 'running'}, ${s.progress} progress reports${s.error ? ', error: ' + s.error : ''}` }] })),
        ...(sb.points.length ? [{ name: 'skips and gaps', bars: [], points: sb.points }] : [])]}
      legend={<p class="muted small">One bar per sync, coloured by its end (succeeded, failed, aborted, superseded hatched, running); thin lines: progress reports and ignored late reports; diamonds: skipped slots and schedule gaps.</p>} /> : null}
    {sb.syncs.length ? <div class="scroll" tabindex="0" role="region" aria-label="syncs"><table><caption>Syncs</caption>
      <thead><tr><th scope="col">sync</th><th scope="col">trigger</th><th scope="col">result</th><th scope="col">started</th><th scope="col">ended</th><th scope="col">took</th><th scope="col">progress reports</th><th scope="col">ignored late reports</th></tr></thead>
      <tbody>{sb.syncs.map((s) => <tr><td class="mono">{s.id}</td><td>{s.trigger}</td><td><State s={s.state} /></td><td><Time iso={s.fromIso} seq={s.seq} /></td><td><Time iso={s.toIso} seq={s.toSeq} /></td><td>{s.toIso ? fmtDur(s.to - s.from) : ''}</td><td>{s.progress}</td><td>{s.marks.filter((m) => m.kind === 'ignored').length}</td></tr>)}</tbody>
    </table></div> : null}
    <h2>Documents</h2>
    {docs.length ? <div class="scroll" tabindex="0" role="region" aria-label="documents"><table><thead><tr><th scope="col">document</th><th scope="col">status</th><th scope="col">error</th></tr></thead>
      <tbody>{docs.slice(0, 200).map((d) => <tr><td class="mono">{d.id}</td><td>{d.status}</td><td>{d.error || ''}</td></tr>)}</tbody></table></div> : <p class="muted">None.</p>}
    <h2>Events</h2>
    <EventsTable events={events} showStream={false} caption={`events of connector ${id}`} />
  </>;
}

// ---------------- Events ----------------
const TYPES = ['JobEnqueued', 'JobLeased', 'LeaseRenewed', 'LeaseReleased', 'LeaseExpired', 'JobStarted', 'StepStarted', 'StepSucceeded', 'StepFailed', 'CancelRequested', 'AttemptCancelled', 'AttemptSucceeded', 'AttemptFailed', 'RetryScheduled', 'RerunRequested', 'AttemptStale', 'ExecutionReattached', 'AttemptResolved', 'AttemptYielded',
  'ConnectorCreated', 'ConnectorUpdated', 'ConnectorStatusChanged', 'SyncStarted', 'SyncProgressed', 'SyncSucceeded', 'SyncFailed', 'SyncAborted', 'SyncReportIgnored', 'SyncSkipped', 'SyncLockBroken', 'ScheduleGap', 'ConnectorDeletionStarted', 'ConnectorDeleted', 'HoldPlaced', 'HoldReleased'];
const MAX_ROWS = 300;

export function EventsPage() {
  const q = query();
  const stream = q.get('stream') || '', type = q.get('type') || '', actor = q.get('actor') || '';
  const from = q.get('from') ? Number(q.get('from')) : null, since = q.get('since') || '';
  const browsing = from !== null || !!since;
  const [rows, setRows] = useState([]);
  const [pending, setPending] = useState([]);
  const [paused, setPaused] = useState(false);
  const [err, setErr] = useState(null);
  const [nextAfter, setNextAfter] = useState(null);
  const st = useRef({ last: 0, busy: Promise.resolve(), paused: false });
  st.current.paused = paused;
  const match = (e) => (!stream || (stream.endsWith('/') ? e.stream.startsWith(stream) : e.stream === stream)) && (!type || e.type === type) && (!actor || e.actor === actor);
  const params = (after, limit) => { const p = new URLSearchParams({ after: String(after), limit: String(limit) }); if (stream) p.set('stream', stream); if (type) p.set('type', type); return p; };

  useEffect(() => {
    let alive = true;
    setRows([]); setPending([]); setErr(null); setNextAfter(null);
    // live events wait for this first read (they are chained on st.current.busy)
    st.current.busy = (async () => {
      try {
        if (browsing) {
          const p = params(from !== null ? Math.max(0, from - 1) : 0, 100);
          if (since) p.set('since', since);
          const r = await api('/v1/events?' + p);
          if (!alive) return;
          const evs = r.events.filter(match);
          setRows(evs); setNextAfter(r.next_after);
          return;
        }
        const h = await fetch('/v1/health').then((x) => x.json());
        const last = h.last_seq || 0;
        let got = [];
        if (!stream && !type) {
          const r = await api('/v1/events?' + params(Math.max(0, last - 100), 100));
          got = r.events;
        } else {
          // The API reads filters forward from `after`: read the last 100,000 seqs of the log
          // (an exact stream from its start) and keep the latest matches.
          let after = stream && !stream.endsWith('/') ? 0 : Math.max(0, last - 100000);
          for (let i = 0; i < 50 && after < last; i++) {
            const r = await api('/v1/events?' + params(after, 1000));
            got = got.concat(r.events).slice(-200);
            if (r.next_after <= after) break;
            after = r.next_after;
          }
        }
        if (!alive) return;
        st.current.last = last;
        setRows(got.filter((e) => e.seq <= last).filter(match).slice(-100));
      } catch (e) { if (alive) setErr(e); }
    })();
    return () => { alive = false; };
  }, [stream, type, actor, from, since]);

  // the live tail: events after the last one shown, in seq order, no gap and no duplicate
  useEffect(() => {
    if (browsing) return undefined;
    let buf = [];
    let timer = null;
    const flush = () => {
      timer = null;
      const take = buf; buf = [];
      st.current.busy = st.current.busy.then(async () => {
        let add = [];
        for (const e of take) {
          if (e.seq <= st.current.last) continue;
          if (e.seq > st.current.last + 1) { // fill a gap from the log before going on
            const r = await api('/v1/events?' + new URLSearchParams({ after: String(st.current.last), limit: String(Math.min(10000, e.seq - st.current.last - 1)) }));
            add = add.concat(r.events);
          }
          add.push(e);
          st.current.last = e.seq;
        }
        add = add.filter(match);
        if (!add.length) return;
        if (st.current.paused) setPending((p) => p.concat(add));
        else setRows((old) => old.concat(add).slice(-MAX_ROWS));
      }).catch((e) => setErr(e));
    };
    const off = onLive((e) => { buf.push(e); if (!timer) timer = setTimeout(flush, 100); });
    return () => { off(); if (timer) clearTimeout(timer); };
  }, [stream, type, actor, browsing]);

  const [jump, setJump] = useState('');
  return <>
    <h1>Events</h1>
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label>stream <select value={stream.endsWith('/') || !stream ? stream : 'exact'} onChange={(e) => setQuery({ stream: e.target.value }, false)}>
        <option value="">all</option><option value="job/">jobs</option><option value="connector/">connectors</option><option value="hold/">holds</option>{stream && !stream.endsWith('/') ? <option value="exact">{stream}</option> : null}</select></label>
      <label>type <select value={type} onChange={(e) => setQuery({ type: e.target.value }, false)}><option value="">any</option>{TYPES.map((t) => <option value={t}>{t}</option>)}</select></label>
      <label>actor <input value={actor} onChange={(e) => setQuery({ actor: e.target.value }, false)} /></label>
    </form>
    <form class="filters" onSubmit={(e) => {
      e.preventDefault();
      const v = jump.trim();
      if (/^\d+$/.test(v)) setQuery({ from: v, since: '' }, false);
      else if (v) { const d = new Date(v); if (!isNaN(d)) setQuery({ since: d.toISOString(), from: '' }, false); else setErr(new Error(`not a seq or a time: ${v}`)); }
    }}>
      <label>jump to a seq or a time <input value={jump} placeholder="1234 or 2026-12-05T09:00:00Z" onInput={(e) => setJump(e.target.value)} /></label>
      <button type="submit">Go</button>
      {browsing ? <button type="button" onClick={() => setQuery({ from: '', since: '' }, false)}>Back to the live tail</button> : null}
    </form>
    <ErrorBox error={err} />
    {browsing ? <>
      <Pager label="log pages" onPrev={rows.length && rows[0].seq > 1 ? () => setQuery({ from: Math.max(1, rows[0].seq - 100), since: '' }, false) : null}
        onNext={nextAfter !== null && rows.length ? () => setQuery({ from: nextAfter + 1, since: '' }, false) : null} />
      <EventsTable events={rows} picked={from} caption="the log by seq" />
    </> : <>
      <div class="toolbar live" aria-live="polite">
        <span class={`badge ${store.live.status === 'live' ? 'tone-ok' : 'tone-leased'}`}><Icon name={store.live.status === 'live' ? 'play' : 'pause'} />{paused ? 'paused' : store.live.status}</span>
        <button type="button" onClick={() => { if (paused) { setRows((old) => old.concat(pending).slice(-MAX_ROWS)); setPending([]); } setPaused(!paused); }}>{paused ? 'Resume' : 'Pause'}</button>
        {paused ? <span data-testid="new-count"><b>{pending.length}</b> new</span> : null}
        <span class="muted small">newest first; the page keeps the latest {MAX_ROWS}</span>
      </div>
      <EventsTable events={rows.slice().reverse()} caption="the latest events, live" />
    </>}
  </>;
}

export function EventPage({ seq }) {
  const r = useApi(async () => {
    const [one, around] = await Promise.all([api(`/v1/events?after=${seq - 1}&limit=1`), api(`/v1/events?after=${Math.max(0, seq - 11)}&limit=21`)]);
    return { e: one.events[0] && one.events[0].seq === seq ? one.events[0] : null, around: around.events };
  }, [seq]);
  if (!r.data) return <><h1>Event #{seq}</h1><Loading r={r} /></>;
  const e = r.data.e;
  if (!e) return <><h1>Event #{seq}</h1><p>No event has seq {seq} yet.</p></>;
  return <>
    <h1>Event #{seq} <span class="mono">{e.type}</span></h1>
    <dl class="kv">
      <Field k="stream"><StreamLink stream={e.stream} seq={e.seq} /> (as of this event) · version {e.version}</Field>
      <Field k="recorded"><Time iso={e.recorded_at} seq={e.seq} /></Field>
      <Field k="actor">{e.actor}</Field>
      <Field k="command id"><span class="mono">{e.command_id}</span></Field>
    </dl>
    <pre class="json" data-testid="event-json">{JSON.stringify(e, null, 2)}</pre>
    <h2>Around it</h2>
    <Pager label="neighbours" onPrev={seq > 10 ? () => navigate(href(`/ui/events/${seq - 10}`)) : seq > 1 ? () => navigate(href('/ui/events/1')) : null} onNext={() => navigate(href(`/ui/events/${seq + 10}`))} />
    <EventsTable events={r.data.around} picked={seq} caption="previous 10 and next 10" />
  </>;
}
