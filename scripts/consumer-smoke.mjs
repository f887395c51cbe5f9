#!/usr/bin/env node
/**
 * Consumer smoke test: what someone who installs our packages from npm gets.
 *
 * 0. Every bin that `pnpm install` links inside the workspace is a checked-in file, so a fresh
 *    clone installs without "Failed to create bin" warnings before anything is built.
 * 1. `pnpm pack` every publishable workspace package (every package that is not private; a new
 *    one joins without an edit here) and check that each tarball carries LICENSE and README.md.
 * 2. Install the tarballs with npm into a fresh project outside the workspace, together with
 *    TypeScript 5.9, 6.0 and 7.0 (the native port) and @types/node, as a consumer would.
 * 3. Typecheck a small program that imports every typed entry point, as ESM (`.mts`) and as
 *    CommonJS (`.cts`), with `strict` and `module: nodenext` and *no* `types` setting, under
 *    each TypeScript version (TypeScript 6.0 and 7.0 no longer load @types packages by default,
 *    so this proves our declaration files bring the Node types they use themselves).
 * 4. Run the program as ESM and `require` it from CommonJS: an agent and a harness talk over an
 *    in-memory pair and over stdio to the packed `ahp serve --stdio`.
 * 5. Run the packed `ahp` bin (`--version`, `send --fail-on block` against `ahp serve --stdio`).
 *
 * Usage: node scripts/consumer-smoke.mjs [--keep] [--ts 5.9.3,6.0.3,7.0.2]
 * Needs a build (`pnpm build`) and the npm registry. Prints one line per check and ends with
 * "N passed, N failed".
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { publishablePackages, typedEntryPoints, workspacePackages } from "./lib/workspace.mjs";

const { values } = parseArgs({ options: { keep: { type: "boolean" }, ts: { type: "string", default: "5.9.3,6.0.3,7.0.2" } } });
const TS_VERSIONS = values.ts.split(",").map((v) => v.trim());
const TYPES_NODE = "20.19.43";

let passed = 0;
let failed = 0;
function report(name, started, outcome) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (outcome.ok) {
    passed++;
    console.log(`ok   ${name}${outcome.note ? ` (${outcome.note})` : ""} [${seconds} s]`);
  } else {
    failed++;
    const error = outcome.error;
    console.log(`FAIL ${name}\n${indent(error instanceof Error ? error.message : String(error))}`);
  }
  return outcome.ok;
}
function check(name, fn) {
  const started = Date.now();
  try {
    return report(name, started, { ok: true, note: fn() });
  } catch (error) {
    return report(name, started, { ok: false, error });
  }
}
/** `check` for work that runs concurrently with other checks (its line is printed when it ends). */
async function checkAsync(name, fn) {
  const started = Date.now();
  try {
    return report(name, started, { ok: true, note: await fn() });
  } catch (error) {
    return report(name, started, { ok: false, error });
  }
}
const indent = (text) =>
  String(text)
    .trimEnd()
    .split("\n")
    .map((l) => `     ${l}`)
    .join("\n");

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) throw r.error;
  if (options.expectStatus !== undefined ? r.status !== options.expectStatus : r.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited ${r.status}\n${r.stdout}${r.stderr}`);
  }
  return r;
}

/** `run` without blocking: the child's output is collected and a non-zero exit rejects. */
function runAsync(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (status) => {
      if (status === 0) resolve({ stdout, stderr });
      else reject(new Error(`${command} ${args.join(" ")} exited ${status}\n${stdout}${stderr}`));
    });
  });
}

/** Runs `fn` over `items` with at most `limit` at a time, in order of start. */
async function eachLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
/** Packing and type checking are mostly process start-up and single-threaded compiles. */
const JOBS = Math.max(2, availableParallelism());

const packages = publishablePackages();
const work = mkdtempSync(join(tmpdir(), "ahp-consumer-"));
const tarballs = join(work, "tarballs");
const app = join(work, "app");
mkdirSync(tarballs);
mkdirSync(app);
console.log(`consumer smoke test in ${work}: ${packages.length} packages, TypeScript ${TS_VERSIONS.join(", ")}`);

try {
  // 0. A fresh clone's `pnpm install` links the bins of every workspace package another one
  // depends on before anything is built: each such bin target must be a file under version
  // control, not a build output (else install warns "Failed to create bin").
  check("every bin a workspace package installs is a checked-in file", () => {
    const all = workspacePackages();
    const used = new Set(all.flatMap((p) => Object.keys({ ...p.manifest.dependencies, ...p.manifest.devDependencies })));
    const problems = [];
    let count = 0;
    for (const pkg of all.filter((p) => used.has(p.name))) {
      const bin = typeof pkg.manifest.bin === "string" ? { [pkg.name]: pkg.manifest.bin } : (pkg.manifest.bin ?? {});
      for (const [name, target] of Object.entries(bin)) {
        count++;
        const tracked = spawnSync("git", ["ls-files", "--error-unmatch", target], { cwd: pkg.dir, encoding: "utf8" });
        if (tracked.status !== 0) problems.push(`${pkg.name}: bin ${name} -> ${target} is not a checked-in file`);
      }
    }
    if (problems.length > 0) throw new Error(problems.join("\n"));
    return `${count} bins`;
  });

  // 1. Pack.
  const packed = new Map();
  await checkAsync(`pack ${packages.length} packages`, async () => {
    for (const pkg of packages) {
      for (const entry of typedEntryPoints(pkg)) {
        if (!existsSync(join(pkg.dir, entry.types))) throw new Error(`${pkg.name}: ${entry.types} is missing; run pnpm build first`);
      }
    }
    // One destination folder per package, so concurrent packs never mistake each other's tarball.
    await eachLimited(packages, JOBS, async (pkg) => {
      const dest = mkdtempSync(join(tarballs, "p-"));
      await runAsync("pnpm", ["pack", "--pack-destination", dest], { cwd: pkg.dir });
      const files = readdirSync(dest);
      if (files.length !== 1) throw new Error(`${pkg.name}: pnpm pack wrote ${files.length} tarballs`);
      packed.set(pkg.name, join(dest, files[0]));
    });
    return `${JOBS} at a time`;
  });
  check("every tarball has LICENSE, README.md and package.json", () => {
    const problems = [];
    for (const [name, file] of packed) {
      const list = execFileSync("tar", ["tzf", file], { encoding: "utf8" }).split("\n");
      for (const needed of ["package/LICENSE", "package/README.md", "package/package.json"]) {
        if (!list.includes(needed)) problems.push(`${name}: ${needed.slice("package/".length)} is not in the tarball`);
      }
      if (list.some((f) => f.startsWith("package/src/") || f.startsWith("package/test/"))) problems.push(`${name}: ships src/ or test/`);
    }
    if (problems.length > 0)
      throw new Error(`${problems.join("\n")}\n(copy the root LICENSE into the package folder; npm always packs it)`);
  });

  // 2. A consumer project.
  const typed = packages.flatMap((pkg) => typedEntryPoints(pkg).map((entry) => ({ pkg, ...entry })));
  const tsDeps = Object.fromEntries(TS_VERSIONS.map((v) => [`ts-${v}`, `npm:typescript@${v}`]));
  writeFileSync(
    join(app, "package.json"),
    `${JSON.stringify(
      {
        name: "ahp-consumer-smoke",
        private: true,
        dependencies: { ...Object.fromEntries([...packed].map(([name, file]) => [name, `file:${file}`])), zod: "^4.4.0" },
        devDependencies: { "@types/node": TYPES_NODE, ...tsDeps },
      },
      null,
      2,
    )}\n`,
  );
  check("npm install the tarballs, zod, @types/node and TypeScript", () => {
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app });
  });

  // 3. The program: every typed entry point, then a round trip in memory and over stdio.
  const imports = typed.map((e, i) => `import * as m${i} from ${JSON.stringify(e.specifier)};`).join("\n");
  const table = `const modules: Record<string, object> = { ${typed.map((e, i) => `${JSON.stringify(e.specifier)}: m${i}`).join(", ")} };`;
  const body = (kind) => `
${table}
for (const [name, mod] of Object.entries(modules)) {
  if (Object.keys(mod).length === 0) throw new Error(name + " has no exports");
}
const hasCore = ${JSON.stringify(packed.has("@ahp/core"))};
async function main(): Promise<void> {
  const out: Record<string, unknown> = { kind: ${JSON.stringify(kind)}, modules: Object.keys(modules).length };
  if (hasCore) {
    const core = modules["@ahp/core"] as typeof import("@ahp/core");
    const server = new core.AhpServer({
      handlers: { onEvent: (event) => (JSON.stringify(event.payload).includes("rm -rf") ? { decision: "block", reason: "smoke" } : { decision: "allow" }) },
    });
    const [agentSide, harnessSide] = core.createLinkedPair();
    await server.connect(harnessSide);
    const client = new core.AhpClient();
    await client.connect(agentSide);
    const decision = await client.send("pre_action", { tool_name: "bash", arguments: { command: "rm -rf /" } });
    out.memory = decision.decision;
    await client.close();
    await server.close();
  }
  if (modules["@ahp/transport-stdio"] !== undefined && hasCore) {
    const core = modules["@ahp/core"] as typeof import("@ahp/core");
    const stdio = modules["@ahp/transport-stdio"] as typeof import("@ahp/transport-stdio");
    const client = new core.AhpClient();
    await client.connect(new stdio.StdioClientTransport({ command: process.execPath, args: [process.env.AHP_BIN ?? "", "serve", "--stdio", "--log-level", "silent"] }));
    const decision = await client.send("pre_action", { tool_name: "bash", arguments: { command: "rm -rf /" } });
    out.stdio = decision.decision;
    await client.close();
  }
  console.log(JSON.stringify(out));
}
main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;
  mkdirSync(join(app, "src"));
  writeFileSync(join(app, "src", "esm.mts"), `${imports}\n${body("esm")}`);
  writeFileSync(join(app, "src", "cjs.cts"), `${imports}\n${body("cjs")}`);
  const tsconfig = (extra) => ({
    compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", skipLibCheck: false, ...extra },
    include: ["src"],
  });
  writeFileSync(join(app, "tsconfig.json"), `${JSON.stringify(tsconfig({ noEmit: true }), null, 2)}\n`);
  writeFileSync(join(app, "tsconfig.build.json"), `${JSON.stringify(tsconfig({ outDir: "dist", rootDir: "src" }), null, 2)}\n`);

  // The 6.x compiler also emits the program that step 4 runs (its type check is the same).
  const emitter = TS_VERSIONS.find((v) => v.startsWith("6.")) ?? TS_VERSIONS[0];
  // The three compilers check the same program independently: run them side by side.
  const results = await Promise.all(
    TS_VERSIONS.map((version) => {
      const emits = version === emitter;
      return checkAsync(
        `tsc ${version}: strict, module nodenext, no "types" setting, ESM and CJS${emits ? " (and emit)" : ""}`,
        async () => {
          const tsc = join(app, "node_modules", `ts-${version}`, "bin", "tsc");
          await runAsync(process.execPath, [tsc, "-p", emits ? "tsconfig.build.json" : "tsconfig.json", "--pretty", "false"], { cwd: app });
        },
      );
    }),
  );
  const built = results[TS_VERSIONS.indexOf(emitter)];

  // 4. Run it.
  const bin = join(app, "node_modules", ".bin", "ahp");
  const ahpMain = join(app, "node_modules", "@ahp", "cli", "bin", "ahp.js");
  if (built) {
    for (const [kind, file] of [
      ["ESM (import)", "esm.mjs"],
      ["CommonJS (require)", "cjs.cjs"],
    ]) {
      check(`run as ${kind}`, () => {
        const r = run(process.execPath, [join("dist", file)], { cwd: app, env: { ...process.env, AHP_BIN: ahpMain } });
        const out = JSON.parse(r.stdout.trim().split("\n").at(-1));
        if (out.modules !== typed.length) throw new Error(`loaded ${out.modules} of ${typed.length} modules`);
        if (packed.has("@ahp/core") && out.memory !== "block") throw new Error(`in-memory decision: ${out.memory}`);
        if (packed.has("@ahp/cli") && packed.has("@ahp/transport-stdio") && out.stdio !== "block")
          throw new Error(`stdio decision: ${out.stdio}`);
        return `${out.modules} entry points, decisions ${out.memory}/${out.stdio}`;
      });
    }
  }
  if (packed.has("@ahp/cli")) {
    check("the packed ahp bin: --version, and send --fail-on block against ahp serve --stdio", () => {
      const version = run(bin, ["--version"], { cwd: app }).stdout.trim();
      const harness = `stdio:${bin} serve --stdio --log-level silent`;
      const rm = JSON.stringify({ tool_name: "bash", arguments: { command: "rm -rf /" } });
      const gate = run(bin, ["send", "--connect", harness, "--event-type", "pre_action", "--payload", rm, "--fail-on", "block"], {
        cwd: app,
        expectStatus: 1,
      });
      if (JSON.parse(gate.stdout).decision !== "block") throw new Error(`unexpected answer: ${gate.stdout}`);
      const schema = run(bin, ["schema", "--list"], { cwd: app }).stdout;
      if (!schema.includes("ahp.schema.json")) throw new Error(`ahp schema --list: ${schema}`);
      return `ahp ${version}`;
    });
  }
  if (packed.has("@ahp/aarts")) {
    check("the packed ahp-aarts-hook bin answers --version", () => {
      run(join(app, "node_modules", ".bin", "ahp-aarts-hook"), ["--version"], { cwd: app });
    });
  }
} finally {
  if (values.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
