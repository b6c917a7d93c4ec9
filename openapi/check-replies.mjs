// Drives a scenario over a running runledgerd and validates every reply
// against the OpenAPI document that server serves: the status must be one the
// document lists for the operation, and the body must match its schema (ajv,
// JSON Schema 2020-12 as OpenAPI 3.1 uses). Exits 1 on any mismatch.
//
//   node check-replies.mjs OPEN_URL AUTH_URL OPERATOR_TOKEN READER_TOKEN
//
// OPEN_URL is a server without authentication, AUTH_URL one with
// --auth-tokens holding the two tokens.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [openUrl, authUrl, operatorToken, readerToken] = process.argv.slice(2);
if (!openUrl || !authUrl || !operatorToken || !readerToken) {
  console.error("usage: node check-replies.mjs OPEN_URL AUTH_URL OPERATOR_TOKEN READER_TOKEN");
  process.exit(2);
}

const doc = await (await fetch(`${openUrl}/v1/openapi.json`)).json();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "doc", components: { schemas: doc.components.schemas } });

const compiled = new Map();
function resolve(node) {
  while (node && node.$ref) {
    node = node.$ref
      .slice(2)
      .split("/")
      .reduce((n, key) => n[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return node;
}
function validator(schema) {
  const text = JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"doc#/');
  if (!compiled.has(text)) compiled.set(text, ajv.compile(JSON.parse(text)));
  return compiled.get(text);
}

const failures = [];
const seen = new Set();
let checked = 0;

// One call: `pattern` is the document's path of `path`.
async function call(base, method, pattern, path, body, headers = {}) {
  const init = { method: method.toUpperCase(), headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let json = null;
  try {
    json = text === "" ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  check(method, pattern, path, res, text, json);
  return { status: res.status, json };
}

function check(method, pattern, path, res, text, json) {
  checked++;
  const where = `${method.toUpperCase()} ${path} -> ${res.status}`;
  seen.add(`${method} ${pattern} ${res.status}`);
  const op = doc.paths[pattern]?.[method];
  if (!op) return failures.push(`${where}: no operation ${method} ${pattern} in the document`);
  const response = op.responses[String(res.status)];
  if (!response) return failures.push(`${where}: status not in the document`);
  const r = resolve(response);
  if (!r.content) {
    if (text !== "") failures.push(`${where}: a body where the document has none`);
    return;
  }
  const media = Object.keys(r.content)[0];
  const type = res.headers.get("content-type") || "";
  if (!type.startsWith(media)) failures.push(`${where}: Content-Type ${type}, documented ${media}`);
  if (media !== "application/json") return;
  if (json === undefined || json === null) return failures.push(`${where}: no JSON body: ${text}`);
  const validate = validator(r.content[media].schema);
  if (!validate(json)) {
    failures.push(`${where}: ${ajv.errorsText(validate.errors)}\n    body: ${text.slice(0, 1500)}`);
  }
}

const run = Date.now().toString(36);
const o = openUrl;

// Jobs and the worker calls.
const job = `oa-${run}`;
await call(o, "post", "/v1/jobs", "/v1/jobs", {
  id: job, kind: "sync", target: `oa/${run}`, plan: ["FETCH", "LOAD"], input: { rows: 3 },
});
await call(o, "post", "/v1/jobs", "/v1/jobs", {
  id: job, kind: "sync", target: `oa/${run}`, plan: ["FETCH", "LOAD"], input: { rows: 3 },
});
await call(o, "post", "/v1/jobs", "/v1/jobs", { id: `${job}-b`, kind: "sync", target: `oa/${run}` });
const claim = await call(o, "post", "/v1/jobs/claim", "/v1/jobs/claim", {
  worker: "w1", kinds: ["sync"], lease_s: 600,
}, { "X-Runledger-Actor": "worker one", "Idempotency-Key": `claim-${run}` });
const token = claim.json?.lease_token;
const id = claim.json?.job?.id ?? job;
await call(o, "post", "/v1/jobs/claim", "/v1/jobs/claim", { worker: "w2" });
await call(o, "get", "/v1/jobs/{id}", `/v1/jobs/${job}-b`);
const w = (action, pattern, extra = {}) =>
  call(o, "post", `/v1/jobs/{id}/${pattern}`, `/v1/jobs/${id}/${action}`, { lease_token: token, ...extra });
await w("heartbeat", "heartbeat", { lease_s: 300 });
await w("start", "start", { execution_handle: "pid-4711" });
await w("steps/FETCH/start", "steps/{step}/start");
await w("steps/FETCH/done", "steps/{step}/done", { output: { rows: 3 } });
await w("steps/LOAD/start", "steps/{step}/start");
await w("steps/LOAD/failed", "steps/{step}/failed", { error: "disk full", retryable: false });
await call(o, "post", "/v1/jobs/{id}/rerun", `/v1/jobs/${id}/rerun`, { reason: "again" });
await call(o, "post", "/v1/jobs/{id}/cancel", `/v1/jobs/${job}-b/cancel`, { reason: "not needed" });
const second = await call(o, "post", "/v1/jobs/claim", "/v1/jobs/claim", { worker: "w3", lease_s: 600 });
if (second.json?.lease_token) {
  const sid = second.json.job.id;
  const t = second.json.lease_token;
  await call(o, "post", "/v1/jobs/{id}/start", `/v1/jobs/${sid}/start`, { lease_token: t, execution_handle: "pid-1" });
  await call(o, "post", "/v1/jobs/{id}/yield", `/v1/jobs/${sid}/yield`, { lease_token: t, reason: "maintenance" });
  await call(o, "post", "/v1/jobs/{id}/cancel", `/v1/jobs/${sid}/cancel`, {});
}
await call(o, "post", "/v1/jobs", "/v1/jobs", { id: `${job}-r`, kind: `oa-release-${run}`, target: `oa/${run}/r` });
const third = await call(o, "post", "/v1/jobs/claim", "/v1/jobs/claim", {
  worker: "w4", kinds: [`oa-release-${run}`], lease_s: 600,
});
if (third.json?.lease_token) {
  const tid = third.json.job.id;
  await call(o, "post", "/v1/jobs/{id}/release", `/v1/jobs/${tid}/release`, { lease_token: third.json.lease_token });
}
// A cancel met by a running attempt, acknowledged; an unknown outcome, reattached.
for (const kind of [`oa-cancel-${run}`, `oa-stale-${run}`]) {
  await call(o, "post", "/v1/jobs", "/v1/jobs", { id: kind, kind, target: `oa/${kind}`, plan: ["RUN"] });
  const c = await call(o, "post", "/v1/jobs/claim", "/v1/jobs/claim", { worker: "w5", kinds: [kind], lease_s: 600 });
  const t = c.json?.lease_token;
  await call(o, "post", "/v1/jobs/{id}/start", `/v1/jobs/${kind}/start`, { lease_token: t, execution_handle: `pid-${kind}` });
  if (kind.startsWith("oa-cancel")) {
    await call(o, "post", "/v1/jobs/{id}/cancel", `/v1/jobs/${kind}/cancel`, { reason: "stop" });
    await call(o, "post", "/v1/jobs/{id}/heartbeat", `/v1/jobs/${kind}/heartbeat`, { lease_token: t });
    await call(o, "post", "/v1/jobs/{id}/cancel-ack", `/v1/jobs/${kind}/cancel-ack`, { lease_token: t });
  } else {
    await call(o, "post", "/v1/jobs/{id}/outcome-unknown", `/v1/jobs/${kind}/outcome-unknown`, {
      lease_token: t, kind: "EXECUTION_STATE_UNKNOWN", detail: "the host went away",
    });
    await call(o, "get", "/v1/targets/{target}/gate", `/v1/targets/${encodeURIComponent(`oa/${kind}`)}/gate`);
    await call(o, "post", "/v1/jobs/{id}/reattach", `/v1/jobs/${kind}/reattach`, {
      worker: "w6", execution_handle: `pid-${kind}`, observed: "running", lease_s: 600,
    });
    await call(o, "get", "/v1/targets/{target}/gate", `/v1/targets/${encodeURIComponent(`oa/${kind}`)}/gate`);
  }
}
await call(o, "get", "/v1/jobs", "/v1/jobs");
await call(o, "get", "/v1/jobs", "/v1/jobs?limit=1");
await call(o, "get", "/v1/jobs", "/v1/jobs?state=FAILED&kind=sync");
await call(o, "get", "/v1/jobs/{id}", `/v1/jobs/${id}?as_of=1`);
await call(o, "get", "/v1/jobs/{id}/events", `/v1/jobs/${id}/events?limit=2`);

// Connectors and a sync.
const conn = `oa-c-${run}`;
await call(o, "post", "/v1/connectors", "/v1/connectors", { id: conn, name: "shop" });
await call(o, "post", "/v1/connectors", "/v1/connectors", { id: conn, name: "shop" });
await call(o, "patch", "/v1/connectors/{id}", `/v1/connectors/${conn}`, { sync_schedule_s: 3600 });
const sync = await call(o, "post", "/v1/connectors/{id}/sync", `/v1/connectors/${conn}/sync`, "");
const reports = `/v1/connectors/${conn}/syncs/${sync.json?.sync_id}`;
const rp = (what, body) =>
  call(o, "post", `/v1/connectors/{id}/syncs/{sync_id}/${what}`, `${reports}/${what}`, body);
await rp("progress", { documents: { running: ["d1", "d2"], failed: [{ id: "d3", error: "bad" }] } });
await rp("succeeded", { documents: { indexed: ["d1", "d2"] } });
await rp("progress", {});
const again = await call(o, "post", "/v1/connectors/{id}/sync", `/v1/connectors/${conn}/sync`, {});
await call(o, "post", "/v1/connectors/{id}/sync", `/v1/connectors/${conn}/sync`, {});
await call(o, "post", "/v1/connectors/{id}/syncs/{sync_id}/failed",
  `/v1/connectors/${conn}/syncs/${again.json?.sync_id}/failed`, { error: "timeout" });
await call(o, "get", "/v1/connectors/{id}", `/v1/connectors/${conn}`);
await call(o, "get", "/v1/connectors", "/v1/connectors?status=active");
await call(o, "get", "/v1/connectors/{id}/documents", `/v1/connectors/${conn}/documents`);
await call(o, "get", "/v1/connectors/{id}/documents", `/v1/connectors/${conn}/documents?status=failed`);
await call(o, "get", "/v1/connectors/{id}/events", `/v1/connectors/${conn}/events`);
await call(o, "post", "/v1/connectors/{id}/sync/abort", `/v1/connectors/${conn}/sync/abort`, {});
await call(o, "delete", "/v1/connectors/{id}", `/v1/connectors/${conn}`);

// Holds and the gate.
const target = `oa/${run}/h`;
const hold = await call(o, "post", "/v1/holds", "/v1/holds", {
  target, kind: "RESULT_UNKNOWN", reason: "check the warehouse",
});
const gatePath = `/v1/targets/${encodeURIComponent(target)}/gate`;
await call(o, "get", "/v1/targets/{target}/gate", gatePath);
await call(o, "get", "/v1/holds", "/v1/holds?open=true&limit=1");
await call(o, "post", "/v1/holds/{id}/release", `/v1/holds/${hold.json?.id}/release`, {
  note: "checked", execution_stopped: true, outcome: "FAILED",
});
await call(o, "get", "/v1/holds/{id}", `/v1/holds/${hold.json?.id}`);
await call(o, "get", "/v1/holds/{id}/events", `/v1/holds/${hold.json?.id}/events`);
await call(o, "get", "/v1/holds", "/v1/holds");
await call(o, "get", "/v1/targets/{target}/gate", gatePath);
await call(o, "get", "/v1/targets/{target}/gate", `/v1/targets/${encodeURIComponent(`oa/${run}`)}/gate`);

// The log, operations.
await call(o, "get", "/v1/events", "/v1/events?limit=20");
await call(o, "get", "/v1/events", "/v1/events?stream=job/&type=JobEnqueued&type=JobCancelRequested");
await call(o, "get", "/v1/events", "/v1/events?since=2000-01-01T00:00:00Z&limit=1");
await call(o, "get", "/v1/health", "/v1/health");
await call(o, "get", "/v1/whoami", "/v1/whoami");
await call(o, "get", "/v1/openapi.json", "/v1/openapi.json");

// Refusals.
await call(o, "get", "/v1/jobs/{id}", "/v1/jobs/oa-none");
await call(o, "get", "/v1/holds/{id}", "/v1/holds/oa-none");
await call(o, "post", "/v1/jobs/{id}/heartbeat", `/v1/jobs/${id}/heartbeat`, { lease_token: "a".repeat(32) });
await call(o, "post", "/v1/jobs/{id}/steps/{step}/start", `/v1/jobs/${id}/steps/NOPE/start`, { lease_token: token });
await call(o, "post", "/v1/jobs", "/v1/jobs", { id: job, kind: "other", target: "x" });
await call(o, "post", "/v1/jobs", "/v1/jobs", { kind: "sync" });
await call(o, "post", "/v1/jobs", "/v1/jobs", { kind: "sync", target: "t", colour: "red" });
await call(o, "post", "/v1/jobs", "/v1/jobs", "{not json");
await call(o, "post", "/v1/jobs", "/v1/jobs", "kind=sync", { "Content-Type": "text/plain" });
await call(o, "get", "/v1/jobs", "/v1/jobs?stat=RUNNING");
await call(o, "get", "/v1/events", "/v1/events?limit=0");
await call(o, "post", "/v1/connectors/{id}/sync", "/v1/connectors/oa-none/sync", {});
await call(o, "post", "/v1/holds/{id}/release", `/v1/holds/${hold.json?.id}/release`, { note: "twice" });

// With authentication: 401 without a token, 403 for a reader's command.
const a = authUrl;
const bearer = (t) => ({ Authorization: `Bearer ${t}` });
await call(a, "get", "/v1/jobs", "/v1/jobs");
await call(a, "get", "/v1/whoami", "/v1/whoami", undefined, bearer(readerToken));
await call(a, "get", "/v1/whoami", "/v1/whoami", undefined, bearer(operatorToken));
await call(a, "post", "/v1/jobs", "/v1/jobs", { kind: "sync", target: "t" }, bearer(readerToken));
await call(a, "post", "/v1/jobs", "/v1/jobs", { kind: "sync", target: "t" }, bearer(operatorToken));
await call(a, "get", "/v1/health", "/v1/health");

// Every kind of outcome the scenario means to reach was reached.
for (const expected of [
  "post /v1/jobs 201", "post /v1/jobs 200", "post /v1/jobs/claim 200", "post /v1/jobs/claim 204",
  "post /v1/jobs/{id}/steps/{step}/failed 200", "post /v1/jobs/{id}/rerun 201",
  "post /v1/connectors/{id}/syncs/{sync_id}/progress 409", "get /v1/targets/{target}/gate 200",
  "get /v1/jobs/{id} 404", "post /v1/jobs 409", "post /v1/jobs 422", "post /v1/jobs 400",
  "post /v1/jobs 415", "get /v1/jobs 401", "post /v1/jobs 403", "get /v1/whoami 200",
  "post /v1/jobs/{id}/cancel-ack 200", "post /v1/jobs/{id}/outcome-unknown 200",
  "post /v1/jobs/{id}/reattach 200", "post /v1/jobs/{id}/yield 200", "post /v1/jobs/{id}/release 200",
]) {
  if (!seen.has(expected)) failures.push(`the scenario did not reach ${expected}`);
}

const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
const covered = new Set([...seen].map((s) => s.split(" ").slice(0, 2).join(" "))).size;
console.log(`openapi: ${checked} replies checked, ${covered} of ${operations} operations exercised`);
const exercised = new Set([...seen].map((s) => s.split(" ").slice(0, 2).join(" ")));
const missed = Object.entries(doc.paths).flatMap(([p, item]) =>
  Object.keys(item).filter((m) => !exercised.has(`${m} ${p}`)).map((m) => `${m} ${p}`));
console.log(`openapi: not exercised: ${missed.join(", ")}`);
if (failures.length > 0) {
  for (const f of failures) console.error(`FAIL ${f}`);
  console.error(`openapi: ${failures.length} replies do not match the document`);
  process.exit(1);
}
console.log("openapi: every reply matches the document");
