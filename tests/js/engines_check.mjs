// SPDX-License-Identifier: BSD-3-Clause
// engines_check.mjs — every npm package of tests/js runs on Debian 12's nodejs.
//
//   node engines_check.mjs [--node-version X.Y.Z]
//
// The README's test command must pass on stock Debian 12 (bookworm), whose
// nodejs is 18.x. A package whose package.json says engines.node ">=20" may
// refuse to run there (playwright-core does), and a machine with a newer
// Node.js from elsewhere hides it. So the reference version is never the
// running node's: it is the nodejs version of Debian 12 itself, read from
// apt-cache and restricted to Debian's own bookworm archives (o=Debian,
// n=bookworm, bookworm-updates or bookworm-security; other repositories such
// as a Node.js vendor's are ignored). The oldest upstream version found there
// is taken. Without apt-cache or without any bookworm list (no apt-get update
// yet, or not Debian), DEBIAN12_NODEJS below is used; --node-version
// overrides both.
//
// Checks, with the semver package (as npm checks engines):
//   - tests/js/package.json's own engines.node admits that version;
//   - so does every installed package under node_modules (nested ones too);
//   - every version that package.json's engines.node admits is one every
//     installed package admits too (semver.subset), so that range stays true.
// Prints "ok ..."/"FAIL ..." lines, then "N checks, N failed"; exits 1 on a
// failure.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";

// Debian 12's nodejs when apt-cache cannot tell: 18.20.4+dfsg-1~deb12u2 in
// bookworm (the point releases), 18.20.4+dfsg-1~deb12u3 in bookworm-security,
// as `apt-cache policy nodejs` lists them.
const DEBIAN12_NODEJS = "18.20.4";
const BOOKWORM_SUITES = new Set(["bookworm", "bookworm-updates", "bookworm-security"]);

const here = dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? acc.concat([[a.slice(2), all[i + 1]]]) : acc), []));
let checks = 0, failures = 0;

function check(what, cond, detail = "") {
  checks++;
  console.log((cond ? "ok   " : "FAIL ") + what + (!cond && detail ? ": " + detail : ""));
  if (!cond) failures++;
  return cond;
}

function aptCache(...argv) {
  return execFileSync("apt-cache", argv, {
    encoding: "utf8", stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, LC_ALL: "C", LANG: "C" },
  });
}

/* "1:18.20.4+dfsg-1~deb12u2" -> "18.20.4" (epoch, Debian suffixes dropped). */
function upstream(debVersion) {
  const m = /^(?:\d+:)?(\d+\.\d+\.\d+)/.exec(debVersion);
  return m ? semver.valid(m[1]) : null;
}

/* Debian 12's nodejs per apt-cache: { version, from } or null. */
function debianNodejs() {
  let files, table;
  try {
    files = aptCache("policy");
    table = aptCache("policy", "nodejs");
  } catch {
    return null;
  }
  // "Package files:": ' 500 URI SUITE/COMP ARCH Packages' then its
  // '     release v=12,o=Debian,...,n=bookworm,...' line.
  const debianFiles = new Map();
  let file = null;
  for (const line of files.split("\n")) {
    const f = /^\s*-?\d+\s+(\S.*\sPackages)\s*$/.exec(line);
    if (f) { file = f[1]; continue; }
    const r = /^\s+release\s+(.*)$/.exec(line);
    if (r && file) {
      const rel = Object.fromEntries(r[1].split(",").map(kv => [kv.slice(0, kv.indexOf("=")),
                                                                kv.slice(kv.indexOf("=") + 1)]));
      if (rel.o === "Debian" && BOOKWORM_SUITES.has(rel.n)) debianFiles.set(file, rel.n);
      file = null;
    }
  }
  // "Version table:": '     VERSION PRIO' then one '        PRIO FILE' line per source.
  const found = [];
  let version = null;
  for (const line of table.split("\n")) {
    const v = /^\s(?:\*\*\*|\s\s\s)\s+(\S+)\s+-?\d+\s*$/.exec(line);
    if (v) { version = v[1]; continue; }
    const s = /^\s+-?\d+\s+(\S.*\sPackages)\s*$/.exec(line);
    if (s && version && debianFiles.has(s[1]) && upstream(version))
      found.push({ version: upstream(version), from: `${version} in ${debianFiles.get(s[1])}` });
  }
  if (found.length === 0) return null;
  found.sort((a, b) => semver.compare(a.version, b.version));
  return found[0];
}

/* Every installed package: { name, dir, pkg } (scoped and nested ones too). */
function installed(nodeModules, out = []) {
  if (!existsSync(nodeModules)) return out;
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || !(entry.isDirectory() || entry.isSymbolicLink())) continue;
    const dir = join(nodeModules, entry.name);
    if (entry.name.startsWith("@")) {
      installed(dir, out);
      continue;
    }
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8"));
    out.push({ name: pkg.name || relative(here, dir), dir, pkg });
    installed(join(dir, "node_modules"), out);
  }
  return out;
}

/* The engines.node range of a package.json, or null when it sets none. */
function nodeRange(pkg) {
  const r = pkg.engines && pkg.engines.node;
  return r === undefined || r === null ? null : String(r);
}

let ref;
if (args["node-version"]) {
  ref = { version: semver.valid(semver.coerce(args["node-version"])), from: "--node-version" };
} else {
  ref = debianNodejs() ||
    { version: DEBIAN12_NODEJS, from: "the built-in constant (no Debian 12 nodejs in apt-cache)" };
}
console.log(`     Debian 12 nodejs: ${ref.version} (${ref.from}); running node ${process.version}, ` +
            "not used as the reference");
const debian = ref.version;

const top = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
const topRange = nodeRange(top);
check("tests/js/package.json sets engines.node", topRange !== null);
if (topRange !== null) {
  check(`tests/js/package.json engines.node "${topRange}" admits Debian 12's nodejs ${debian}`,
        semver.validRange(topRange) !== null &&
        semver.satisfies(debian, topRange, { includePrerelease: true }),
        `package ${top.name} requires node "${topRange}", Debian 12 has nodejs ${debian}`);
}

const pkgs = installed(join(here, "node_modules"));
check("node_modules holds the installed packages", pkgs.length > 0,
      "run bash scripts/deps.sh (npm ci in tests/js)");
for (const { name, dir, pkg } of pkgs) {
  const range = nodeRange(pkg);
  const id = `${name}@${pkg.version} (${relative(here, dir)})`;
  if (range === null) {  // no engines.node: no claim to check
    console.log(`     ${id}: no engines.node`);
    continue;
  }
  if (!check(`${id} engines.node "${range}" admits Debian 12's nodejs ${debian}`,
             semver.validRange(range) !== null &&
             semver.satisfies(debian, range, { includePrerelease: true }),
             `package ${name}@${pkg.version} requires node "${range}", Debian 12 has nodejs ` +
             `${debian}: pin a version that supports it in tests/js/package.json`))
    continue;
  if (topRange !== null && semver.validRange(topRange) !== null)
    check(`tests/js/package.json engines.node "${topRange}" within ${name}'s "${range}"`,
          semver.subset(topRange, range, { includePrerelease: true }),
          `tests/js/package.json claims node "${topRange}", but ${name}@${pkg.version} requires ` +
          `"${range}": narrow engines.node or pin another version`);
}
console.log(`${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
