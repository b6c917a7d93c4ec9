// Shared plumbing: the API client, auth, the live event stream, time and URL helpers.

// ---------- a tiny store: modules set values, components re-render ----------
const subs = new Set();
export const store = {
  token: sessionStorage.getItem('runledger.token') || '',
  needToken: false,
  authMessage: '',
  role: null, // 'operator' | 'limited' | null (unknown yet)
  live: { status: 'connecting', lastSeq: null },
  route: { path: location.pathname, search: location.search },
  theme: localStorage.getItem('runledger.theme') || 'auto',
  now: Date.now(),
};
export function subscribe(fn) { subs.add(fn); return () => subs.delete(fn); }
export function notify() { for (const fn of [...subs]) fn(); }

// ---------- API ----------
export class ApiError extends Error {
  constructor(status, body, text) {
    super((body && body.error) || text || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

function randomKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return 'ui-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function authHeaders() {
  return store.token ? { Authorization: `Bearer ${store.token}` } : {};
}

export async function api(path, { method = 'GET', body, action = false, signal } = {}) {
  const headers = { Accept: 'application/json', ...authHeaders() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (action) headers['Idempotency-Key'] = randomKey();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  const text = res.status === 204 ? '' : await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (res.status === 401) {
    store.needToken = true;
    store.authMessage = (json && json.error) || 'A token is required.';
    notify();
  }
  if (!res.ok) throw new ApiError(res.status, json, text);
  return json;
}

export function setToken(tok) {
  store.token = tok;
  if (tok) sessionStorage.setItem('runledger.token', tok); else sessionStorage.removeItem('runledger.token');
  store.needToken = false;
  store.authMessage = '';
  store.role = null;
  notify();
  probeRole();
  restartLive();
}

// Which role is this? GET /v1/whoami names the caller and its role (every caller is an operator
// when authentication is off); only an operator sees the actions.
export async function probeRole() {
  try {
    const me = await api('/v1/whoami');
    store.role = me.role === 'operator' ? 'operator' : 'limited';
  } catch (e) {
    store.role = e.status === 401 ? null : 'limited';
  }
  notify();
}
export const mayAct = () => store.role === 'operator';

// ---------- live events, read with fetch so that a bearer token can be sent ----------
const liveListeners = new Set();
let liveCtrl = null;
let liveRunning = false;
let liveWake = null;

export function onLive(fn) { liveListeners.add(fn); return () => liveListeners.delete(fn); }
function emit(ev) { for (const fn of [...liveListeners]) { try { fn(ev); } catch (e) { console.warn(e); } } }
function setLive(status) { if (store.live.status !== status) { store.live = { ...store.live, status }; notify(); } }

const sleepOrWake = (ms) => new Promise((r) => { const t = setTimeout(r, ms); liveWake = () => { clearTimeout(t); r(); }; });

export function restartLive() {
  if (liveCtrl) liveCtrl.abort();
  if (liveWake) liveWake();
}

export function startLive() {
  if (liveRunning) return;
  liveRunning = true;
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) { if (liveCtrl) liveCtrl.abort(); setLive('paused (tab hidden)'); }
    else if (liveWake) liveWake();
  });
  runLive();
}

async function runLive() {
  let backoff = 250;
  for (;;) {
    if (document.hidden || store.needToken) { setLive(document.hidden ? 'paused (tab hidden)' : 'waiting for a token'); await sleepOrWake(60000); continue; }
    try {
      if (store.live.lastSeq === null) {
        const h = await fetch('/v1/health', { headers: { Accept: 'application/json' } }).then((r) => r.json());
        store.live = { ...store.live, lastSeq: h.last_seq || 0 };
      }
      liveCtrl = new AbortController();
      const res = await fetch(`/v1/events/live?after=${store.live.lastSeq}`, { headers: { Accept: 'text/event-stream', ...authHeaders() }, signal: liveCtrl.signal, cache: 'no-store' });
      if (res.status === 401) {
        const body = await res.json().catch(() => null);
        store.needToken = true;
        store.authMessage = (body && body.error) || store.authMessage || 'A token is required.';
        notify();
        continue;
      }
      if (!res.ok) throw new Error(`live: HTTP ${res.status}`);
      setLive('live');
      backoff = 250;
      await readStream(res.body.getReader());
    } catch (e) {
      if (e && e.name === 'AbortError') { /* hidden tab or new token */ }
    }
    liveCtrl = null;
    if (!document.hidden) setLive('reconnecting');
    await sleepOrWake(backoff);
    backoff = Math.min(backoff * 2, 4000);
  }
}

async function readStream(reader) {
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let m;
    while ((m = /\r?\n\r?\n/.exec(buf))) {
      const block = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      let data = '', event = 'message';
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const c = line.indexOf(':');
        const field = c < 0 ? line : line.slice(0, c);
        let val = c < 0 ? '' : line.slice(c + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'data') data += (data ? '\n' : '') + val;
        else if (field === 'event') event = val;
      }
      if (event === 'end') return;
      if (!data) continue;
      let ev;
      try { ev = JSON.parse(data); } catch { continue; }
      const last = store.live.lastSeq || 0;
      if (ev.seq <= last) continue; // never twice
      store.live = { ...store.live, lastSeq: ev.seq };
      emit(ev);
      scheduleNotify();
    }
  }
}
let notifyTimer = null;
function scheduleNotify() { if (!notifyTimer) notifyTimer = setTimeout(() => { notifyTimer = null; notify(); }, 200); }

// ---------- URL and navigation ----------
export function query() { return new URLSearchParams(store.route.search); }
export function tzMode() { const t = query().get('tz'); return t === 'local' || t === 'rel' ? t : 'utc'; }

// An in-app href that keeps the time zone choice.
export function href(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const tz = tzMode();
  if (tz !== 'utc' && !q.has('tz')) q.set('tz', tz);
  const s = q.toString();
  return path + (s ? '?' + s : '');
}
export function navigate(url, replace = false) {
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  store.route = { path: location.pathname, search: location.search };
  notify();
  if (!replace) window.scrollTo(0, 0);
}
// Change some query parameters of the current page.
export function setQuery(patch, replace = true) {
  const q = query();
  for (const [k, v] of Object.entries(patch)) { if (v === undefined || v === null || v === '') q.delete(k); else q.set(k, String(v)); }
  const s = q.toString();
  navigate(location.pathname + (s ? '?' + s : ''), replace);
}
window.addEventListener('popstate', () => { store.route = { path: location.pathname, search: location.search }; notify(); });

export const enc = encodeURIComponent;

// ---------- time ----------
const pad = (n, w = 2) => String(n).padStart(w, '0');
export function fmtTime(iso, mode = tzMode(), now = store.now) {
  if (!iso) return '—';
  if (mode === 'utc') return iso; // exactly as the API gives it
  const d = new Date(iso);
  if (mode === 'local') {
    const off = -d.getTimezoneOffset();
    const sign = off >= 0 ? '+' : '-';
    const a = Math.abs(off);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
  }
  const diff = now - d.getTime();
  return diff >= 0 ? `${fmtDur(diff)} ago` : `in ${fmtDur(-diff)}`;
}
export function fmtDur(ms) {
  if (ms == null || isNaN(ms)) return '—';
  ms = Math.max(0, Math.round(ms));
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(3)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${pad(Math.floor(s % 60))} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${pad(m % 60)} m`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
export const ms = (iso) => (iso ? Date.parse(iso) : null);

// Countdowns and relative times move once a second.
setInterval(() => { store.now = Date.now(); if (store.tick || tzMode() === 'rel') notify(); }, 1000);
