#!/usr/bin/env node
/**
 * `pnpm demo [options]`: builds what the demo needs, then runs it with the options given.
 *
 * turbo's banner and the build logs are kept out (shown only when the build fails). When the build
 * takes more than a moment (the first run builds every package: one to three minutes; later runs
 * hit turbo's cache and take seconds), progress is shown: which package is being built, how many
 * of how many, and the time so far. On a terminal that is one line rewritten in place; otherwise
 * one line per package started and one every `AHP_DEMO_TICK_MS` (default 15 s) while one builds.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const NOTICE_MS = Number(process.env.AHP_DEMO_NOTICE_MS ?? 1500);
const TICK_MS = Number(process.env.AHP_DEMO_TICK_MS ?? 15_000);
const tty = process.stderr.isTTY === true;

/** What turbo's lines say: the number of packages, and each task as it starts. */
function readTurboLine(line) {
  const total = /Running build in (\d+) packages?/.exec(line);
  if (total !== null) return { total: Number(total[1]) };
  const task = /^(\S+?):build: cache (hit|miss)/.exec(line.trim());
  if (task !== null) return { task: task[1], cached: task[2] === "hit" };
  return undefined;
}

const seconds = (ms) => `${Math.round(ms / 1000)} s`;

function build() {
  const started = Date.now();
  const state = { total: undefined, seen: 0, cached: 0, building: undefined };
  let shown = false;
  let lastLine = "";
  const say = (text, { final = false } = {}) => {
    if (tty) {
      process.stderr.write(`\r\x1b[2K${text}${final ? "\n" : ""}`);
    } else if (text !== lastLine) {
      process.stderr.write(`${text}\n`);
    }
    lastLine = text;
  };
  const progress = () => {
    const of = state.total === undefined ? "" : ` of ${state.total}`;
    const what = state.building === undefined ? "checking the cache" : `building ${state.building}`;
    return `demo: ${what} (${state.seen}${of} packages, ${state.cached} from the cache, ${seconds(Date.now() - started)} so far)`;
  };
  return new Promise((resolve, reject) => {
    const child = spawn("turbo", ["run", "build", "--filter=@ahp/demo...", "--output-logs=full"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" },
    });
    // Shown if the build fails: every line but the replayed logs of packages taken from the cache.
    let output = "";
    let pending = "";
    const fromCache = new Set();
    const onData = (chunk) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const parsed = readTurboLine(line);
        if (parsed?.cached) fromCache.add(parsed.task);
        if (!fromCache.has(/^(\S+?):build: /.exec(line)?.[1])) output += `${line}\n`;
        if (parsed === undefined) continue;
        if (parsed.total !== undefined) state.total = parsed.total;
        else {
          state.seen++;
          if (parsed.cached) state.cached++;
          else state.building = parsed.task;
          if (shown && !parsed.cached) say(progress());
        }
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    let ticker;
    const notice = setTimeout(() => {
      shown = true;
      const first =
        "demo: building the packages it needs (the first run takes 1 to 3 minutes, longer on a busy machine; later runs use the cache)";
      if (tty) process.stderr.write(`${first}\n`);
      else say(first);
      say(progress());
      ticker = setInterval(() => say(progress()), tty ? 1000 : TICK_MS);
    }, NOTICE_MS);
    const stop = () => {
      clearTimeout(notice);
      clearInterval(ticker);
    };
    child.on("error", (error) => {
      stop();
      reject(error);
    });
    child.on("close", (code) => {
      stop();
      if (shown && code === 0) say(`demo: built in ${seconds(Date.now() - started)}; starting the demo`, { final: true });
      else if (shown && tty) process.stderr.write("\n");
      resolve({ code: code ?? 1, output: output + pending });
    });
  });
}

const built = await build().catch((error) => {
  const hint = error.code === "ENOENT" ? "turbo is not installed here: run pnpm install, then pnpm demo" : error.message;
  process.stderr.write(`demo: cannot build: ${hint}\n`);
  process.exit(69);
});
if (built.code !== 0) {
  process.stderr.write(built.output);
  process.stderr.write(`demo: the build failed (exit ${built.code}); the output above says why\n`);
  process.exit(built.code);
}
const demo = spawn(process.execPath, [fileURLToPath(new URL("../apps/demo/dist/main.js", import.meta.url)), ...process.argv.slice(2)], {
  stdio: "inherit",
});
demo.on("close", (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
