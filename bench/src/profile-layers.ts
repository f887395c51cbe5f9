/**
 * Where a round trip's time goes, per layer: reads a V8 CPU profile (`node --cpu-prof`) of
 * peers/core-roundtrip-child.mjs, maps every sample's function back to its source file through
 * the built packages' source maps, and prints self time per layer as a share of all samples
 * and in µs per round trip.
 *
 *   node --cpu-prof --cpu-prof-dir=prof --cpu-prof-interval 100 src/peers/core-roundtrip-child.mjs ours 200000
 *   node --import tsx src/profile-layers.ts prof/<file>.cpuprofile 200000
 *
 * Time in a native builtin (JSON.parse, JSON.stringify, crypto.randomUUID) counts as the self
 * time of the JavaScript function that called it, which is how V8's sampler reports it. Start-up
 * (module loading) is left out of the shares.
 */
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const maps = new Map<string, SourceMap | null>();
function sourceOf(frame: CallFrame): string {
  if (!frame.url.startsWith("file://")) return frame.url;
  let map = maps.get(frame.url);
  if (map === undefined) {
    try {
      const path = fileURLToPath(frame.url);
      map = path.includes("/dist/") ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8")) as never) : null;
    } catch {
      map = null;
    }
    maps.set(frame.url, map);
  }
  if (map === null) return frame.url;
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
  return entry.originalSource ?? frame.url;
}

/** The layer a function belongs to, by its (original) source file and name. */
function layerOf(frame: CallFrame): string {
  const name = frame.functionName;
  if (name === "(garbage collector)") return "GC";
  if (name === "(program)" || name === "(root)") return "V8/Node native (program)";
  if (name === "(idle)") return "idle";
  const source = sourceOf(frame);
  if (source.includes("/zod/")) return "validate (zod)";
  if (/validation\.ts$/.test(source) || /\/schema\//.test(source)) return "validate (zod)";
  if (/json-text\.ts$/.test(source)) return name.startsWith("stringify") ? "encode (JSON.stringify)" : "parse (JSON.parse + limits)";
  if (/linked-pair\.ts$/.test(source)) return "framing/write (in-memory pair)";
  if (/src\/(server[^/]*|errors|event-table)\.ts$/.test(source)) return "dispatch, harness side (AhpServer)";
  if (/client\.ts$/.test(source)) return "dispatch, agent side (AhpClient)";
  if (/builders\.ts$/.test(source)) return "event building (ids, timestamp)";
  if (/core-roundtrip-child\.mjs$/.test(source)) return "handler + benchmark loop";
  if (/internal\/timers|^node:timers/.test(source)) return "timers (per-call timeout)";
  if (/task_queues|internal\/process\/promises/.test(source)) return "microtasks/promises";
  if (/crypto/.test(source)) return "event building (ids, timestamp)";
  if (
    /internal\/(modules|bootstrap|main|fs|process\/pre_execution|url|options|util|streams|readline|console)|^node:(path|fs|stream|events)$/.test(
      source,
    )
  ) {
    return "start-up and I/O set-up";
  }
  if (
    source === "" &&
    /^(compileFunction|internalModuleStat|openFileHandle|link|ModuleWrap|evaluate|instantiate|fstat|read|lstat|close|getNamespace|getCLIOptionsValues|reallyExit|set natives|parse|createUnsafeArrayBuffer|isAnyArrayBuffer|get prototype|update)$/.test(
      name,
    )
  ) {
    return "start-up and I/O set-up";
  }
  if (source === "") return `native: ${name || "(anonymous)"}`;
  return `other: ${source.replace(/^.*\/node_modules\//, "")}`;
}

const [file, roundTripsArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: profile-layers.ts <file.cpuprofile> [round trips]\n");
  process.exit(2);
}
const roundTrips = Number(roundTripsArg ?? Number.NaN);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const perLayer = new Map<string, number>();
let total = 0;
let idle = 0;
let startup = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!;
  const dt = profile.timeDeltas[i] ?? 0;
  const layer = layerOf(node.callFrame);
  if (layer === "idle") {
    idle += dt;
    continue;
  }
  if (layer === "start-up and I/O set-up") {
    startup += dt;
    continue;
  }
  perLayer.set(layer, (perLayer.get(layer) ?? 0) + dt);
  total += dt;
}
const rows = [...perLayer.entries()].sort((a, b) => b[1] - a[1]);
const width = Math.max(...rows.map(([l]) => l.length));
console.log(`${"layer".padEnd(width)}  share   µs/round trip`);
for (const [layer, us] of rows) {
  const share = ((100 * us) / total).toFixed(1).padStart(5);
  const per = Number.isFinite(roundTrips) ? (us / roundTrips).toFixed(2).padStart(6) : "";
  console.log(`${layer.padEnd(width)}  ${share}%  ${per}`);
}
console.log(
  `round trips ${(total / 1000).toFixed(0)} ms; left out: start-up ${(startup / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`,
);
