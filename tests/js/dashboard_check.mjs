// SPDX-License-Identifier: BSD-3-Clause
// dashboard_check.mjs — dpmon's page at GET / in a real headless Chromium.
//
//   node dashboard_check.mjs --base http[s]://127.0.0.1:PORT [--screenshot FILE.png]
//                            [--settle SECONDS] [--chromium /usr/bin/chromium]
//                            [--spki BASE64]
//
// Over HTTPS, Node's fetch trusts the certificate given in NODE_EXTRA_CA_CERTS
// and Chromium the one whose public key hashes (SHA-256 of its
// SubjectPublicKeyInfo, base64) to --spki, and no other.
//
// Drives Debian's Chromium with playwright-core (no browser download) in a
// fresh profile against a running dpmon whose capture replays forever, and
// checks that:
//   - the page loads and renders with no console error, no page error and
//     no failed request, and requests nothing from another origin;
//   - for one snapshot (the page's data-etag equals the ETag of the API
//     answers fetched right after), every number on the page (data-value)
//     equals the API's value at its data-path, the subnet table is sorted
//     by traffic and the host table is in the API's order;
//   - the charts update: more points and different pixels a few snapshots
//     later, the newest point being the summary's totals;
//   - the FlowSpec rules panel has a row per rule of GET /api/v1/flowspec.
// Saves a full-page screenshot if asked. Prints "ok ..."/"FAIL ..." lines;
// exits 1 on a failure.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? acc.concat([[a.slice(2), all[i + 1]]]) : acc), []));
const base = args.base;
let checks = 0, failures = 0;

function check(what, cond, detail = "") {
  checks++;
  console.log((cond ? "ok   " : "FAIL ") + what + (!cond && detail ? ": " + detail : ""));
  if (!cond) failures++;
  return cond;
}

/* Resolve "a|#key=value|b" in @p doc; '#' selects an array element. */
function resolve(doc, path) {
  let v = doc;
  for (const seg of path.split("|")) {
    if (v === undefined || v === null) return undefined;
    if (seg.startsWith("#")) {
      const [k, want] = [seg.slice(1, seg.indexOf("=")), seg.slice(seg.indexOf("=") + 1)];
      v = v.find(x => String(x[k]) === want);
    } else {
      v = v[seg];
    }
  }
  return v;
}

/* The '@' values the page derives from several fields. */
function derived(docs, src, path) {
  const s = docs.summary;
  if (path === "@nic_drops")
    return s.ports.reduce((a, p) => a + p.imissed + p.ierrors + p.rx_nombuf, 0);
  if (path === "@parse_errors_total")
    return Object.values(s.parse_errors).reduce((a, v) => a + v, 0);
  if (src === "alerts" && path === "@count") return docs.alerts.alerts.length;
  return undefined;
}

async function apiSnapshot() {
  const paths = { summary: "/api/v1/summary", subnets: "/api/v1/subnets",
                  hosts: "/api/v1/hosts?sort=bps&direction=ingress&limit=10", alerts: "/api/v1/alerts?state=active" };
  const out = { etags: [] };
  for (const [k, p] of Object.entries(paths)) {
    const r = await fetch(base + p);
    out[k] = await r.json();
    out.etags.push(r.headers.get("etag"));
  }
  return out;
}

/* Everything the test reads from the page, in one go. */
function pageState() {
  const b = document.body;
  return {
    seq: Number(b.dataset.seq), etag: b.dataset.etag,
    numbers: [...document.querySelectorAll("[data-path]")].map(e => ({
      src: e.dataset.src, path: e.dataset.path, value: e.dataset.value, text: e.textContent })),
    subnetOrder: [...document.querySelectorAll("#subnets-table tbody tr[data-prefix]")].map(r => r.dataset.prefix),
    hostOrder: [...document.querySelectorAll("#hosts-table tbody tr[data-address]")].map(r => r.dataset.address),
    charts: ["chart-bps", "chart-pps"].map(id => {
      const c = document.getElementById(id);
      return { id, points: Number(c.dataset.points), lastIn: c.dataset.lastIn, lastOut: c.dataset.lastOut,
               pixels: c.toDataURL() };
    }),
  };
}

async function waitNewSeq(page, after, timeoutMs = 15000) {
  await page.waitForFunction(s => Number(document.body.dataset.seq) > s, after, { timeout: timeoutMs });
}

/* Compare the page with the API for one snapshot; retries until both agree on it. */
async function compareWithApi(page) {
  for (let attempt = 0; attempt < 10; attempt++) {
    const before = await page.evaluate(() => Number(document.body.dataset.seq));
    await waitNewSeq(page, before);
    const st = await page.evaluate(pageState);
    const api = await apiSnapshot();
    if (!api.etags.every(e => e === st.etag)) continue;  // a merge in between: again
    check(`page and API on the same snapshot (#${st.seq}, attempt ${attempt + 1})`, true);
    check("page snapshot number == summary.snapshot_seq", st.seq === api.summary.snapshot_seq);
    check("the page shows numbers", st.numbers.length > 30, String(st.numbers.length));
    let bad = [];
    for (const n of st.numbers) {
      const want = n.path.startsWith("@") ? derived(api, n.src, n.path) : resolve(api[n.src], n.path);
      if (want === undefined || Number(n.value) !== want || !n.text || n.text === "–")
        bad.push(`${n.src}:${n.path} page=${n.value} (${n.text}) api=${want}`);
    }
    check(`every number on the page equals the API's (${st.numbers.length})`, bad.length === 0,
          bad.slice(0, 10).join("; "));
    const rank = api.subnets.subnets.slice().sort((a, b) =>
      (b.ingress.bps + b.egress.bps) - (a.ingress.bps + a.egress.bps) || (a.prefix < b.prefix ? -1 : 1));
    check("subnets table: every subnet, by traffic", JSON.stringify(st.subnetOrder) ===
          JSON.stringify(rank.map(x => x.prefix)), st.subnetOrder.join(","));
    check("hosts table: the API's top hosts in order", JSON.stringify(st.hostOrder) ===
          JSON.stringify(api.hosts.hosts.map(x => x.address)), st.hostOrder.join(","));
    check("hosts table is not empty", st.hostOrder.length > 0);
    const t = api.summary.totals;
    check("chart newest point == summary ingress/egress bps",
          Number(st.charts[0].lastIn) === t.ingress.bps && Number(st.charts[0].lastOut) === t.egress.bps);
    check("chart newest point == summary ingress/egress pps",
          Number(st.charts[1].lastIn) === t.ingress.pps && Number(st.charts[1].lastOut) === t.egress.pps);
    check("traffic is flowing (ingress bps > 0)", t.ingress.bps > 0);
    return st;
  }
  check("page and API on the same snapshot within 10 attempts", false);
  return null;
}

const profile = mkdtempSync(join(tmpdir(), "dpmon-chromium-"));
const consoleErrors = [], pageErrors = [], failed = [], foreign = [];
const context = await chromium.launchPersistentContext(profile, {
  executablePath: args.chromium || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    .concat(args.spki ? ["--ignore-certificate-errors-spki-list=" + args.spki] : []),
  viewport: { width: 1440, height: 900 },
});
try {
  const page = context.pages()[0] || await context.newPage();
  page.on("console", m => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", e => pageErrors.push(String(e)));
  page.on("requestfailed", r => failed.push(r.url() + " " + (r.failure() || {}).errorText));
  page.on("request", r => { if (!r.url().startsWith(base) && !r.url().startsWith("data:")) foreign.push(r.url()); });
  const resp = await page.goto(base + "/", { waitUntil: "load" });
  check("GET / answered 200", resp.status() === 200, String(resp.status()));
  check("page title", (await page.title()) === "dpmon");
  await waitNewSeq(page, 0);
  check("the page rendered a snapshot", true);
  const first = await compareWithApi(page);
  /* The rules panel: one row per rule of GET /api/v1/flowspec, else its empty text. */
  const rules = (await (await fetch(base + "/api/v1/flowspec")).json()).rules;
  const shown = await page.evaluate(() =>
    [...document.querySelectorAll("#rules-table tbody tr")].map(tr => tr.textContent));
  check("rules panel: the API's rules, or \"No FlowSpec rules.\"",
        rules.length ? shown.length === rules.length
                     : shown.length === 1 && shown[0] === "No FlowSpec rules.", shown.join("|"));
  if (first) {
    const s0 = await page.evaluate(() => Number(document.body.dataset.seq));
    await waitNewSeq(page, s0);
    await waitNewSeq(page, s0 + 1);
    const later = await page.evaluate(pageState);
    for (let i = 0; i < 2; i++) {
      const a = first.charts[i], b = later.charts[i];
      check(`${a.id}: more points later (${a.points} -> ${b.points})`, b.points > a.points);
      const h = x => createHash("sha256").update(x.pixels).digest("hex");
      check(`${a.id}: the drawing changed`, h(a) !== h(b));
    }
    await compareWithApi(page);
  }
  if (args.screenshot) {
    if (args.settle) await page.waitForTimeout(1000 * Number(args.settle));  // a longer chart
    await page.screenshot({ path: args.screenshot, fullPage: true });
    console.log("     screenshot: " + args.screenshot);
  }
  check("no console error", consoleErrors.length === 0, consoleErrors.join(" | "));
  check("no page error", pageErrors.length === 0, pageErrors.join(" | "));
  check("no failed request", failed.length === 0, failed.join(" | "));
  check("nothing requested from another origin", foreign.length === 0, foreign.join(" | "));
} catch (e) {
  check("dashboard test ran to the end", false, e.stack || String(e));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
