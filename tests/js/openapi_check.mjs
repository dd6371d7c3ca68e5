// SPDX-License-Identifier: BSD-3-Clause
// openapi_check.mjs — docs/openapi.yaml against itself and a running dpmon.
//
//   node openapi_check.mjs --spec docs/openapi.yaml --base http://127.0.0.1:PORT [--cors ORIGIN]
//
// 1. Validates the document with @seriousme/openapi-schema-validator
//    (the OpenAPI 3.1 JSON schema).
// 2. Sends real requests to dpmon (successes and every kind of error, HEAD,
//    If-None-Match, a CORS preflight when --cors names an allowed origin),
//    finds each one's operation and documented response in the document,
//    and checks the status is documented, the Content-Type is one the
//    document lists, the required headers are present and match their
//    schemas, and the body matches the response schema (ajv, JSON Schema
//    2020-12, with ajv-formats).
// 3. Checks that every operation of the document was exercised.
//
// Prints one line per check ("ok ..." / "FAIL ...") and exits 1 on a failure.
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? acc.concat([[a.slice(2), all[i + 1]]]) : acc), []));
let checks = 0, failures = 0;

function check(what, cond, detail = "") {
  checks++;
  if (cond) {
    console.log("ok   " + what);
  } else {
    failures++;
    console.log("FAIL " + what + (detail ? ": " + detail : ""));
  }
  return cond;
}

/* ---- the document ---- */
const validator = new Validator();
const res = await validator.validate(args.spec);
check("docs/openapi.yaml is a valid OpenAPI document (version " + validator.version + ")",
      res.valid, JSON.stringify(res.errors));
if (!res.valid) finish();
const spec = validator.resolveRefs();   // $refs replaced by their targets
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
addFormats(ajv);

/* The operation and path template of a request path; null if undocumented. */
function findPath(path) {
  const segs = path.split("/");
  for (const [tmpl, item] of Object.entries(spec.paths)) {
    const t = tmpl.split("/");
    if (t.length === segs.length && t.every((x, i) => /^\{.*\}$/.test(x) || x === segs[i]))
      return { tmpl, item };
  }
  return null;
}

const exercised = new Set();

/* Check one real exchange against the document. */
function checkExchange(label, method, path, status, headers, text) {
  const found = findPath(path.split("?")[0].replace(/(.)\/+$/, "$1"));
  if (!check(label + ": path documented", found !== null, path)) return;
  const opMethod = method === "HEAD" ? "get" : method.toLowerCase();
  const op = found.item[opMethod];
  if (!op) {
    check(label + ": method documented or 405", status === 405, method);
    const r = found.item.get.responses["405"];
    return checkResponse(label, r, status, headers, text);
  }
  exercised.add(opMethod + " " + found.tmpl);
  const r = op.responses[String(status)];
  if (!check(label + ": status " + status + " documented for " + opMethod.toUpperCase() + " " +
             found.tmpl, r !== undefined)) return;
  checkResponse(label, r, status, headers, method === "HEAD" ? null : text);
}

function checkResponse(label, r, status, headers, text) {
  for (const [name, h] of Object.entries(r.headers || {})) {
    const v = headers.get(name);
    if (h.required) check(label + ": header " + name + " present", v !== null);
    if (v !== null && h.schema) {
      const ok = ajv.validate(h.schema, v);
      check(label + ": header " + name + " matches its schema", ok, v + " " + ajv.errorsText());
    }
  }
  if (!r.content) {
    check(label + ": no body", !text, JSON.stringify(text));
    return;
  }
  const ctype = headers.get("content-type") || "";
  const norm = s => s.replace(/\s+/g, "").toLowerCase();
  const media = Object.keys(r.content).find(m => norm(m) === norm(ctype));
  if (!check(label + ": Content-Type " + ctype + " documented", media !== undefined,
             Object.keys(r.content).join(", "))) return;
  if (text === null) return;  // HEAD
  let body = text;
  if (media.startsWith("application/json")) {
    try { body = JSON.parse(text); } catch (e) {
      return check(label + ": body is JSON", false, e.message);
    }
  }
  const ok = ajv.validate(r.content[media].schema, body);
  check(label + ": body matches the response schema", ok, ajv.errorsText(ajv.errors, { separator: "; " }));
}

async function exchange(label, method, path, { headers = {}, expect, body } = {}) {
  const r = await fetch(args.base + path, { method, headers, body, redirect: "manual" });
  const text = await r.text();
  if (expect !== undefined)
    check(label + ": status " + expect, r.status === expect, "got " + r.status + " " + text.slice(0, 200));
  checkExchange(label, method, path, r.status, r.headers, text);
  return { status: r.status, headers: r.headers, text };
}

/* ---- the requests ---- */

/* --unhealthy 1: test_openapi.py holds dpmon's merge (a test hook), so
 * only the health answers are checked: /health 503, the summary's health. */
if (args.unhealthy) {
  for (const method of ["GET", "HEAD"])
    await exchange("unhealthy " + method + " /health", method, "/health", { expect: 503 });
  const s = await exchange("unhealthy summary", "GET", "/api/v1/summary", { expect: 200 });
  check("unhealthy summary: health.status", JSON.parse(s.text).health.status === "unhealthy");
  check("unhealthy summary: no ETag", s.headers.get("etag") === null);
  finish();
}
const subnets = JSON.parse((await exchange("subnets", "GET", "/api/v1/subnets", { expect: 200 })).text);
const prefix = subnets.subnets[0].prefix;
const hosts = JSON.parse((await exchange("hosts", "GET", "/api/v1/hosts?limit=3", { expect: 200 })).text);
check("a host to ask for", hosts.hosts.length > 0);
const address = hosts.hosts[0].address;
/* test_openapi.py configures a threshold the capture exceeds: a live alert. */
const alerts = JSON.parse((await exchange("alerts", "GET", "/api/v1/alerts?state=active", { expect: 200 })).text);
check("a live alert to ask for", alerts.alerts.length > 0);
const alertId = alerts.alerts.length > 0 ? alerts.alerts[0].id : 1;
/* ... and subnet thresholds every subnet with ingress traffic exceeds: a live subnet alert. */
const subnetAlerts = JSON.parse((await exchange("subnet alerts", "GET", "/api/v1/alerts?target=subnet", { expect: 200 })).text);
check("a live subnet alert", subnetAlerts.alerts.length > 0 && subnetAlerts.alerts[0].target === "subnet");
const subnetAlertId = subnetAlerts.alerts.length > 0 ? subnetAlerts.alerts[0].id : 1;

const cases = [
  ["GET", "/health", 200], ["HEAD", "/health", 200], ["GET", "/health?x=1", 400],
  ["GET", "/api/v1/summary", 200], ["HEAD", "/api/v1/summary", 200], ["GET", "/api/v1/summary?a", 400],
  ["GET", "/api/v1/subnets/", 200],
  ["GET", "/api/v1/subnets/" + prefix, 200],
  ["GET", "/api/v1/subnets/198.18.0.0/15", 404],
  ["GET", "/api/v1/subnets/10.0.0.1/24", 400],
  ["GET", "/api/v1/subnets/10.0.0.0/33", 400],
  ["GET", "/api/v1/hosts", 200],
  ["GET", "/api/v1/hosts?subnet=" + encodeURIComponent(prefix) + "&sort=packets&direction=egress&limit=2", 200],
  ["GET", "/api/v1/hosts?limit=0", 400], ["GET", "/api/v1/hosts?sort=speed", 400],
  ["GET", "/api/v1/hosts?direction=up", 400], ["GET", "/api/v1/hosts?limit=1&limit=2", 400],
  ["GET", "/api/v1/hosts?subnet=198.18.0.0/15", 404], ["GET", "/api/v1/hosts?bogus=1", 400],
  ["GET", "/api/v1/hosts/" + address, 200],
  ["GET", "/api/v1/hosts/198.18.0.1", 404], ["GET", "/api/v1/hosts/zzz", 400],
  ["GET", "/api/v1/alerts", 200], ["GET", "/api/v1/alerts?x", 400],
  ["GET", "/api/v1/alerts?state=ended&direction=ingress&type=unknown&limit=5&address=" + address, 200],
  ["GET", "/api/v1/alerts?state=open", 400], ["GET", "/api/v1/alerts?type=flood", 400],
  ["GET", "/api/v1/alerts/" + alertId, 200], ["GET", "/api/v1/alerts/999999", 404],
  ["GET", "/api/v1/alerts/x", 400],
  ["GET", "/api/v1/alerts?target=host&state=active", 200], ["GET", "/api/v1/alerts?target=net", 400],
  ["GET", "/api/v1/alerts/" + subnetAlertId, 200],
  ["GET", "/api/v1/history", 200], ["GET", "/api/v1/history?x", 400],
  ["GET", "/metrics", 200], ["HEAD", "/metrics", 200], ["GET", "/metrics?x=1", 400],
  ["GET", "/", 200], ["GET", "/?x=1", 400],
];
const every = ["/health", "/api/v1/summary", "/api/v1/subnets", "/api/v1/subnets/" + prefix,
               "/api/v1/hosts", "/api/v1/hosts/" + address, "/api/v1/alerts", "/api/v1/alerts/" + alertId, "/api/v1/history",
               "/metrics", "/"];
for (const p of every)
  cases.push(["POST", p, 405], ["DELETE", p, 405]);
for (const [method, path, status] of cases)
  await exchange(method + " " + path, method, path, { expect: status });

/* The blackhole list: POST with a body, DELETE, and their errors. The
 * address is inside the first subnet (its network address plus one). */
const net = prefix.split("/")[0];
const inside = net.includes(":") ? net.replace(/::$/, "::1")
                                 : net.replace(/\.(\d+)$/, (m, x) => "." + (Number(x) + 1));
const json = { "Content-Type": "application/json" };
for (const [label, method, path, body, status] of [
  ["add", "POST", "/api/v1/blackholes", JSON.stringify({ address: inside }), 201],
  ["add again", "POST", "/api/v1/blackholes", JSON.stringify({ address: inside }), 200],
  ["outside", "POST", "/api/v1/blackholes", '{"address": "198.18.0.1"}', 400],
  ["not JSON", "POST", "/api/v1/blackholes", '{"address"', 400],
  ["wrong type", "POST", "/api/v1/blackholes", '{"address": 1}', 400],
  ["too big", "POST", "/api/v1/blackholes", " ".repeat(5000), 413],
  ["list", "GET", "/api/v1/blackholes", undefined, 200],
  ["head", "HEAD", "/api/v1/blackholes", undefined, 200],
  ["one", "GET", "/api/v1/blackholes/" + inside, undefined, 200],
  ["param", "GET", "/api/v1/blackholes?x=1", undefined, 400],
  ["bad address", "GET", "/api/v1/blackholes/zzz", undefined, 400],
  ["PUT", "PUT", "/api/v1/blackholes", "{}", 405],
  ["POST item", "POST", "/api/v1/blackholes/" + inside, "{}", 405],
  ["remove", "DELETE", "/api/v1/blackholes/" + inside, undefined, 200],
  ["remove again", "DELETE", "/api/v1/blackholes/" + inside, undefined, 200],
  ["gone", "GET", "/api/v1/blackholes/" + inside, undefined, 404],
  ["delete bad", "DELETE", "/api/v1/blackholes/zzz", undefined, 400],
])
  await exchange("blackholes " + label + ": " + method + " " + path.slice(0, 40), method, path,
                 { headers: method === "GET" || method === "HEAD" ? {} : json, body,
                   expect: status });
/* Refused before anything changes (docs/api.md, Security). */
await exchange("blackholes as a form: 415", "POST", "/api/v1/blackholes",
               { headers: { "Content-Type": "text/plain" },
                 body: JSON.stringify({ address: inside }), expect: 415 });
await exchange("blackholes from another site: 403", "POST", "/api/v1/blackholes",
               { headers: { ...json, Origin: "http://evil.example" },
                 body: JSON.stringify({ address: inside }), expect: 403 });
await exchange("blackholes remove from another site: 403", "DELETE",
               "/api/v1/blackholes/" + inside,
               { headers: { ...json, Origin: "http://evil.example" }, expect: 403 });

/* The FlowSpec rules: none without an alert; a manual rule and its errors;
 * DELETE is idempotent. */
const rule = JSON.stringify({ destination: inside, protocol: "udp", source_ports: [53] });
for (const [label, method, path, body, status] of [
  ["list", "GET", "/api/v1/flowspec", undefined, 200],
  ["head", "HEAD", "/api/v1/flowspec", undefined, 200],
  ["param", "GET", "/api/v1/flowspec?x=1", undefined, 400],
  ["none", "GET", "/api/v1/flowspec/1", undefined, 404],
  ["bad id", "GET", "/api/v1/flowspec/x1", undefined, 400],
  ["remove none", "DELETE", "/api/v1/flowspec/1", undefined, 200],
  ["delete bad", "DELETE", "/api/v1/flowspec/0", undefined, 400],
  ["outside", "POST", "/api/v1/flowspec", '{"destination": "198.18.0.1"}', 422],
  ["no destination", "POST", "/api/v1/flowspec", "{}", 400],
  ["POST item", "POST", "/api/v1/flowspec/1", "{}", 405],
])
  await exchange("flowspec " + label + ": " + method + " " + path, method, path,
                 { headers: method === "GET" || method === "HEAD" ? {} : json, body,
                   expect: status });
/* A manual rule, once: its id is the next of this dpmon's, whatever ran before. */
const added = await exchange("flowspec add: POST", "POST", "/api/v1/flowspec",
                             { headers: json, body: rule, expect: 201 });
await exchange("flowspec same match: POST", "POST", "/api/v1/flowspec",
               { headers: json, body: rule, expect: 409 });
let addedId = 0;
try { addedId = JSON.parse(added.text).id; } catch { /* the add's check failed already */ }
await exchange("flowspec remove: DELETE", "DELETE", "/api/v1/flowspec/" + addedId,
               { headers: json, expect: addedId ? 200 : 400 });

/* If-None-Match: 304 with the same ETag while the snapshot lasts. */
for (const path of ["/api/v1/summary", "/api/v1/hosts?limit=5", "/metrics", "/", "/health"]) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const first = await fetch(args.base + path);
    await first.text();
    const etag = first.headers.get("etag");
    const again = await fetch(args.base + path, { headers: { "If-None-Match": etag } });
    const text = await again.text();
    if (again.status === 200 && again.headers.get("etag") !== etag) continue;  // new snapshot
    check("If-None-Match " + path + ": 304", again.status === 304, "got " + again.status);
    checkExchange("If-None-Match " + path, "GET", path, again.status, again.headers, text);
    break;
  }
}

/* CORS, when dpmon was started with an allowed origin. */
if (args.cors) {
  for (const path of every) {
    const pre = await exchange("preflight " + path, "OPTIONS", path, {
      headers: { Origin: args.cors, "Access-Control-Request-Method": "GET",
                 "Access-Control-Request-Headers": "if-none-match" }, expect: 204 });
    check("preflight " + path + ": Access-Control-Allow-Origin",
          pre.headers.get("access-control-allow-origin") === args.cors);
    const get = await fetch(args.base + path, { headers: { Origin: args.cors } });
    await get.text();
    check("GET " + path + " from " + args.cors + ": Access-Control-Allow-Origin",
          get.headers.get("access-control-allow-origin") === args.cors);
    check("GET " + path + ": Access-Control-Expose-Headers ETag",
          get.headers.get("access-control-expose-headers") === "ETag");
  }
  const bh = await exchange("preflight POST /api/v1/blackholes", "OPTIONS", "/api/v1/blackholes", {
    headers: { Origin: args.cors, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "content-type" }, expect: 204 });
  check("preflight /api/v1/blackholes: POST and DELETE allowed",
        bh.headers.get("access-control-allow-methods") === "GET, HEAD, POST, DELETE");
  await exchange("preflight DELETE /api/v1/blackholes/{address}", "OPTIONS",
                 "/api/v1/blackholes/" + inside, {
    headers: { Origin: args.cors, "Access-Control-Request-Method": "DELETE" }, expect: 204 });
  await exchange("preflight DELETE /api/v1/flowspec/{id}", "OPTIONS", "/api/v1/flowspec/1", {
    headers: { Origin: args.cors, "Access-Control-Request-Method": "DELETE" }, expect: 204 });
  await exchange("preflight GET /api/v1/flowspec", "OPTIONS", "/api/v1/flowspec", {
    headers: { Origin: args.cors, "Access-Control-Request-Method": "GET" }, expect: 204 });
  const other = await fetch(args.base + "/api/v1/summary", { headers: { Origin: "http://not-allowed.example" } });
  await other.text();
  check("GET from an origin not listed: no Access-Control-Allow-Origin",
        other.headers.get("access-control-allow-origin") === null);
}

/* Every operation of the document was exercised. */
for (const [tmpl, item] of Object.entries(spec.paths))
  for (const m of ["get", "post", "delete", "options"])
    if (item[m] && (m !== "options" || args.cors))
      check("exercised: " + m.toUpperCase() + " " + tmpl, exercised.has(m + " " + tmpl));

finish();

function finish() {
  console.log(`${checks} checks, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}
