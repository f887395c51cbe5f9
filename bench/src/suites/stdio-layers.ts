/**
 * Where the sequential stdio round trip's extra time goes, layer by layer, by ablation: each
 * side of ours is taken apart into variants that add one of its layers at a time to the floor,
 * and every variant is measured against the floor in paired blocks (as the `stdio` suite's
 * sequential target).
 *
 * - Harness side: a raw client (the floor's) against each variant of bench/src/peers/
 *   layer-harness.mjs, from the floor's peer up to serveStdio(AhpServer) as shipped.
 * - Agent side: the raw client, the raw client with only the work the protocol asks of every
 *   agent (UUID ids, the event and the decision checked), and AhpClient + StdioClientTransport,
 *   as shipped and with one of its per-call costs left out, each against the floor's peer; and
 *   AhpClient against the shipped harness (both sides ours, as the `stdio` suite measures them).
 * - Both sides: the ratio the required work alone would give (the harness's "floor + both" and
 *   the agent's required work, added), and the same estimate for ours as shipped.
 *
 * Each peer process runs with bench/src/peers/timeline-preload.mjs, which records when each
 * request reached its 'data' listener and when its answer was written, on the monotonic clock
 * this process reads too. So a round trip splits into: agent side out (call to the peer's
 * 'data': building, checking, encoding and writing the request, and the wake-up of the peer),
 * harness (the peer's 'data' to its write) and agent side back (the write to the settled call:
 * the wake-up of the agent, decoding and checking the answer). The wake-ups are the same for
 * every variant, so per block the difference of a segment's median to the base's is what the
 * variant adds there. The figures are reported, with no target: they say where to look.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { AhpClient, AhpEventSchema, DecisionSchema, decode, type AhpClientOptions } from "@ahp/core";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { percentile, type Row, type Suite } from "../harness.js";
import { RawNdjsonClient, payload, rawEvent } from "../ndjson-bench.js";

const peerScript = (name: string) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));
const PRELOAD = peerScript("timeline-preload.mjs");
const HARNESS = peerScript("layer-harness.mjs");

/** The harness variants, in the order layers are added (see layer-harness.mjs). */
const HARNESS_VARIANTS: ReadonlyArray<readonly [variant: string, label: string]> = [
  ["floor", "floor peer"],
  ["validate", "floor + event and decision schema checks"],
  ["encode", "floor + answer built as an object and stringified"],
  ["validate-encode", "floor + both"],
  ["decoder", "core's NdjsonDecoder + floor's answer"],
  ["transport", "NdjsonServerTransport, answer object posted"],
  ["server", "AhpServer on NdjsonServerTransport"],
  ["shipped", "serveStdio(AhpServer), as shipped"],
];

/** The agent variants: AhpClient options and StdioClientTransport's `flushLines`. */
const AGENT_VARIANTS: ReadonlyArray<readonly [label: string, options: AhpClientOptions, flushLines?: number]> = [
  ["AhpClient + StdioClientTransport, as shipped", {}],
  ["same, without the call timeout (timeoutMs: 0)", { timeoutMs: 0 }],
  ["same, without the outgoing event check (validateEvents: false)", { validateEvents: false }],
  ["same, with counter ids instead of UUIDs", { generateId: counterIds() }],
  ["same, every line written at once (flushLines: 1)", {}, 1],
];

/** The agent variant with only the work the protocol asks of every agent (see {@link requiredWork}). */
const REQUIRED_AGENT = "raw client + UUID ids, event and decision schema checks";

/** Ids as long as a UUID, from a counter: no random bytes per call. */
function counterIds(): () => string {
  let n = 0;
  return () => String(++n).padStart(36, "0");
}

/** One contender: a connection to a peer process that records its timeline. */
interface Timed {
  label: string;
  request(): Promise<unknown>;
  close(): Promise<void>;
  /** Where the peer writes its timeline when it exits. */
  timeline: string;
  /** Requests the peer answers before the first timed one (a handshake). */
  before: number;
  /** Per round trip: when the call was made and when it settled (µs, monotonic). */
  sent: number[];
  settled: number[];
}

const nowUs = () => Number(process.hrtime.bigint()) / 1000;

function spawnHarness(variant: string, timeline: string): ChildProcessByStdio<Writable, Readable, null> {
  return spawn(process.execPath, ["--import", PRELOAD, HARNESS, variant], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, AHP_TIMELINE_OUT: timeline },
  });
}

/**
 * The raw client with only what the protocol asks of every agent: a UUID per request (spec: a
 * fresh UUID v4 string id), the event checked before it is sent and the decision when it comes.
 */
function requiredWork(client: RawNdjsonClient): Promise<unknown> {
  const event = rawEvent();
  if (!decode(AhpEventSchema, event).ok) return Promise.reject(new Error("invalid event"));
  return client.request("ahp/event", event, randomUUID()).then((result) => {
    if (!decode(DecisionSchema, result).ok) throw new Error("invalid decision");
    return result;
  });
}

function rawContender(label: string, variant: string, timeline: string, required = false): Timed {
  const child = spawnHarness(variant, timeline);
  const client = new RawNdjsonClient(child.stdout, child.stdin);
  return {
    label,
    timeline,
    before: 0,
    sent: [],
    settled: [],
    request: required ? () => requiredWork(client) : () => client.request("ahp/event", rawEvent()),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.stdin.end();
      }),
  };
}

async function clientContender(
  label: string,
  options: AhpClientOptions,
  flushLines: number | undefined,
  timeline: string,
  harnessVariant = "floor",
): Promise<Timed> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", PRELOAD, HARNESS, harnessVariant],
    env: { ...process.env, AHP_TIMELINE_OUT: timeline },
    ...(flushLines === undefined ? {} : { flushLines }),
  });
  // A request's limit only matters on a loaded machine (a pipelined burst can wait past 10 s).
  const client = new AhpClient({ timeoutMs: 120_000, ...options });
  await client.connect(transport);
  return {
    label,
    timeline,
    before: 1,
    sent: [],
    settled: [],
    request: () => client.send("pre_action", payload),
    close: () => client.close(),
  };
}

/** Per contender and block: the medians of its segments in that block (µs). */
interface Segments {
  out: number[];
  harness: number[];
  back: number[];
  roundTrip: number[];
}

/**
 * Warms every contender up, then runs `blocks` blocks of `blockSize` sequential round trips of
 * each contender in turn (the order rotating by one every block), closes them and reads back
 * the peers' timelines.
 */
async function runPaired(contenders: Timed[], blocks: number, blockSize: number, warmup: number): Promise<Segments[]> {
  const timed = async (c: Timed) => {
    const start = nowUs();
    await c.request();
    c.sent.push(start);
    c.settled.push(nowUs());
  };
  for (const c of contenders) for (let i = 0; i < warmup; i++) await timed(c);
  const spans: Array<Array<[from: number, to: number]>> = contenders.map(() => []);
  for (let b = 0; b < blocks; b++) {
    for (let j = 0; j < contenders.length; j++) {
      const k = (b + j) % contenders.length;
      const c = contenders[k]!;
      const from = c.sent.length;
      for (let i = 0; i < blockSize; i++) await timed(c);
      spans[k]!.push([from, c.sent.length]);
    }
  }
  for (const c of contenders) await c.close();
  return Promise.all(contenders.map((c, k) => segmentsOf(c, spans[k]!)));
}

async function readTimeline(c: Timed): Promise<{ data: number[]; writes: number[] }> {
  // The peer writes its timeline as it exits, which may come a moment after the close.
  for (let waited = 0; !existsSync(c.timeline) && waited < 10_000; waited += 20) await sleep(20);
  const timeline = JSON.parse(readFileSync(c.timeline, "utf8")) as { data: number[]; writes: number[] };
  const expected = c.before + c.sent.length;
  if (timeline.data.length !== expected || timeline.writes.length !== expected) {
    throw new Error(
      `${c.label}: the peer saw ${timeline.data.length} chunks and made ${timeline.writes.length} writes for ${expected} sequential requests`,
    );
  }
  return timeline;
}

async function segmentsOf(c: Timed, spans: Array<[number, number]>): Promise<Segments> {
  const { data, writes } = await readTimeline(c);
  const median = (values: number[]) => spread(values).median;
  const result: Segments = { out: [], harness: [], back: [], roundTrip: [] };
  for (const [from, to] of spans) {
    const out: number[] = [];
    const harness: number[] = [];
    const back: number[] = [];
    const roundTrip: number[] = [];
    for (let i = from; i < to; i++) {
      const d = data[c.before + i]!;
      const w = writes[c.before + i]!;
      out.push(d - c.sent[i]!);
      harness.push(w - d);
      back.push(c.settled[i]! - w);
      roundTrip.push(c.settled[i]! - c.sent[i]!);
    }
    result.out.push(median(out));
    result.harness.push(median(harness));
    result.back.push(median(back));
    result.roundTrip.push(median(roundTrip));
  }
  return result;
}

/** Median and quartiles of a per-block series, sorted copy. */
function spread(values: number[]): { median: number; q1: number; q3: number } {
  const sorted = [...values].sort((x, y) => x - y);
  return { median: percentile(sorted, 0.5), q1: percentile(sorted, 0.25), q3: percentile(sorted, 0.75) };
}

/** `+1.23 µs (q1–q3 0.90–1.50)`: what `of` adds over `base`, block by block. */
function added(of: number[], base: number[]): string {
  const d = spread(of.map((v, b) => v - base[b]!));
  const sign = d.median >= 0 ? "+" : "";
  return `${sign}${d.median.toFixed(2)} µs (q1–q3 ${d.q1.toFixed(2)}–${d.q3.toFixed(2)})`;
}

function rows(
  side: string,
  labels: string[],
  segments: Segments[],
  blockSize: number,
  describe: (s: Segments, base: Segments) => string,
): Row[] {
  const base = segments[0]!;
  return segments.map((s, k) => {
    const rt = spread(s.roundTrip);
    const row: Row = {
      suite: "stdio-layers",
      case: `${side}: ${labels[k]}, sequential`,
      measurement: { opsPerSec: 1e6 / rt.median, p50Us: rt.median },
    };
    if (k === 0) return { ...row, note: `base of this side; ${describe(s, s)}` };
    const ratio = spread(s.roundTrip.map((v, b) => v / base.roundTrip[b]!));
    return {
      ...row,
      floor: { opsPerSec: 1e6 / spread(base.roundTrip).median, p50Us: spread(base.roundTrip).median },
      ratio: ratio.median,
      note: `${describe(s, base)}; ratio = median over ${s.roundTrip.length} paired blocks of ${blockSize} (q1–q3 ${ratio.q1.toFixed(2)}–${ratio.q3.toFixed(2)})`,
    };
  });
}

/**
 * Both sides together, estimated from the two sides' ratios: each side's extra time over its base
 * is a share of a round trip, and the shares add (1 + (h − 1) + (a − 1)). The `stdio` suite's
 * sequential row measures ours as shipped directly; the second estimate can be set against it.
 */
function combined(
  what: string,
  harnessRows: Row[],
  harnessSide: Timed[],
  harnessVariant: string,
  agentRows: Row[],
  agentSide: Timed[],
  agentLabel: string,
): Row {
  const harnessLabel = HARNESS_VARIANTS.find(([variant]) => variant === harnessVariant)![1];
  const harness = harnessRows[harnessSide.findIndex((c) => c.label === harnessLabel)]!;
  const agent = agentRows[agentSide.findIndex((c) => c.label === agentLabel)]!;
  const ratio = harness.ratio! + agent.ratio! - 1;
  return {
    suite: "stdio-layers",
    case: `both sides: ${what}, estimated`,
    measurement: { opsPerSec: harness.floor!.opsPerSec / ratio, p50Us: harness.floor!.p50Us! * ratio },
    floor: harness.floor!,
    ratio,
    note: `ratio = ${harness.ratio!.toFixed(3)} (harness side: ${harnessLabel}) + ${agent.ratio!.toFixed(3)} (agent side: ${agentLabel}) − 1`,
  };
}

export const suite: Suite = {
  name: "stdio-layers",
  async run({ quick }) {
    const blocks = quick ? 3 : 120;
    const blockSize = quick ? 40 : 100;
    const warmup = quick ? 100 : 2000;
    const dir = mkdtempSync(join(tmpdir(), "ahp-layers-"));
    try {
      const harness = HARNESS_VARIANTS.map(([variant, label]) => rawContender(label, variant, join(dir, `harness-${variant}.json`)));
      const harnessSegments = await runPaired(harness, blocks, blockSize, warmup);
      const agent: Timed[] = [
        rawContender("raw client (the floor's)", "floor", join(dir, "agent-raw.json")),
        rawContender(REQUIRED_AGENT, "floor", join(dir, "agent-required.json"), true),
      ];
      for (const [k, [label, options, flushLines]] of AGENT_VARIANTS.entries()) {
        agent.push(await clientContender(label, options, flushLines, join(dir, `agent-${k}.json`)));
      }
      agent.push(
        await clientContender(
          "AhpClient against serveStdio(AhpServer): both sides ours",
          {},
          undefined,
          join(dir, "agent-both.json"),
          "shipped",
        ),
      );
      const agentSegments = await runPaired(agent, blocks, blockSize, warmup);
      const harnessRows = rows(
        "harness side",
        harness.map((c) => c.label),
        harnessSegments,
        blockSize,
        (s, base) =>
          s === base
            ? `harness data → write ${spread(s.harness).median.toFixed(2)} µs`
            : `harness data → write ${spread(s.harness).median.toFixed(2)} µs, ${added(s.harness, base.harness)} over the floor's`,
      );
      const agentRows = rows(
        "agent side",
        agent.map((c) => c.label),
        agentSegments,
        blockSize,
        (s, base) =>
          s === base
            ? `call → peer's data ${spread(s.out).median.toFixed(2)} µs, peer's data → write ${spread(s.harness).median.toFixed(2)} µs, peer's write → settled ${spread(s.back).median.toFixed(2)} µs`
            : `call → peer's data ${added(s.out, base.out)}, peer's data → write ${added(s.harness, base.harness)}, peer's write → settled ${added(s.back, base.back)} over the raw client against the floor's peer`,
      );
      return [
        ...harnessRows,
        ...agentRows,
        combined("the required work alone", harnessRows, harness, "validate-encode", agentRows, agent, REQUIRED_AGENT),
        combined("ours as shipped", harnessRows, harness, "shipped", agentRows, agent, AGENT_VARIANTS[0]![0]),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
