#!/usr/bin/env node
// Installs every pinned host of the rig into its cache, in parallel, so the tests find them ready.
// Usage: node scripts/install-hosts.mjs [key ...]    (AHP_REAL_HOSTS_CACHE sets the cache folder)
// Plain Node, no dependencies: the pins are read from src/hosts.ts, and the cache layout, lock
// and atomic rename are the same as ensureHost()'s, so the tests and this script can run at once.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

const source = readFileSync(new URL("../src/hosts.ts", import.meta.url), "utf8");
const HOSTS = {};
for (const match of source.matchAll(/^\s*(\w+): \{ pkg: "([^"]+)", version: "([^"]+)" \}/gm)) {
  HOSTS[match[1]] = { pkg: match[2], version: match[3] };
}
const cache = process.env.AHP_REAL_HOSTS_CACHE || join(homedir(), ".cache", "ahp-real-hosts");
const keys = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(HOSTS);

const installed = (dir, pkg) => existsSync(join(dir, "node_modules", pkg, "package.json"));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function takeLock(lock) {
  try {
    await mkdir(lock);
    return true;
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    const info = await stat(lock).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > 11 * 60_000) await rmdir(lock).catch(() => undefined);
    return false;
  }
}

function npmInstall(prefix, spec) {
  return new Promise((resolve, reject) => {
    execFile(
      "npm",
      ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", spec],
      { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve()),
    );
  });
}

async function ensure(key) {
  const host = HOSTS[key];
  if (!host) throw new Error(`unknown host ${key} (known: ${Object.keys(HOSTS).join(", ")})`);
  const spec = `${host.pkg}@${host.version}`;
  const dir = join(cache, spec);
  if (installed(dir, host.pkg)) return "cached";
  await mkdir(join(dir, ".."), { recursive: true });
  const lock = `${dir}.lock`;
  while (!(await takeLock(lock))) {
    if (installed(dir, host.pkg)) return "installed by another process";
    await sleep(500);
  }
  try {
    if (installed(dir, host.pkg)) return "installed by another process";
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    await mkdir(tmp, { recursive: true });
    try {
      await npmInstall(tmp, spec);
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
    return "installed";
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}

const started = Date.now();
const results = await Promise.allSettled(
  keys.map(async (key) => {
    const t0 = Date.now();
    const how = await ensure(key);
    const spec = `${HOSTS[key].pkg}@${HOSTS[key].version}`;
    console.log(`${key.padEnd(16)} ${spec.padEnd(42)} ${how} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }),
);
let failed = 0;
results.forEach((result, i) => {
  if (result.status === "rejected") {
    failed += 1;
    console.error(`${keys[i]}: ${result.reason.message}`);
  }
});
console.log(`${keys.length - failed}/${keys.length} hosts ready in ${((Date.now() - started) / 1000).toFixed(1)} s (cache ${cache})`);
process.exitCode = failed ? 1 : 0;
