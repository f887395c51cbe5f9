/**
 * The client vectors of `@ahp/schemas` (`vectors/client/*.jsonl`) against `AhpClient` of
 * `@ahp/core`: the client talks NDJSON over a pair of streams to a scripted harness that writes
 * what the vector's `reply` steps say, and every line the client writes is matched with the
 * vector's `expect_sent` steps. Matching is the runner's (`match` of `ahp conformance`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { AhpClient, NdjsonStreamTransport, type AhpEventInput, type EventType } from "@ahp/core";
import { describe, expect, it } from "vitest";
import { match, type Captures } from "../src/commands/conformance.js";

const CLIENT_DIR = fileURLToPath(new URL("../../../schemas/vectors/client/", import.meta.url));

type Call =
  | { op: "handshake"; capabilities: string[] }
  | { op: "send"; event_type: string; payload: unknown }
  | { op: "event"; event: Record<string, unknown> }
  | { op: "query"; query_type: string; payload: unknown }
  | { op: "batch"; events: Record<string, unknown>[] };
type Step =
  | { call: Call; as: string }
  | { expect_sent: unknown }
  | { expect_nothing_sent: true }
  | { reply: unknown }
  | { reply_text: string }
  | { expect_returns: { call: string; value: unknown } }
  | { expect_fails: { call: string; contains: string[] } }
  | { expect_pending: string }
  | { expect_timeout: string }
  | { expect_distinct: string[] };
interface ClientCase {
  id: string;
  area: string;
  title: string;
  checklist: number[];
  handshaken: boolean;
  handshake_result?: unknown;
  steps: Step[];
  branches?: { name: string; note: string; steps: Step[] }[];
}

const DEFAULT_HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: "vector-harness", version: "1.0.0", capabilities: [] },
  config: { max_depth: 10, batch_size: 100, timeout_ms: 10000 },
};

const cases: ClientCase[] = readdirSync(CLIENT_DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .sort()
  .flatMap((f) =>
    readFileSync(join(CLIENT_DIR, f), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as ClientCase),
  );

/** Fills `{"$same": name}` in a reply with the captured value. */
function fill(value: unknown, captures: Captures): unknown {
  if (Array.isArray(value)) return value.map((v) => fill(v, captures));
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (Object.keys(o).length === 1 && "$same" in o) return captures.get(o.$same as string);
  if (Object.keys(o).length === 1 && "$literal" in o) return o.$literal;
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, fill(v, captures)]));
}

type Settled = { state: "pending" } | { state: "returned"; value: unknown } | { state: "failed"; error: Error };

/** A scripted harness on the other side of the client's streams. */
class Peer {
  readonly toClient = new PassThrough();
  readonly fromClient = new PassThrough();
  readonly #lines: string[] = [];
  #buffer = "";
  #wake?: () => void;

  constructor() {
    this.fromClient.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString("utf8");
      let nl: number;
      while ((nl = this.#buffer.indexOf("\n")) >= 0) {
        this.#lines.push(this.#buffer.slice(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
      }
      this.#wake?.();
    });
  }

  /** The next line the client writes, parsed. */
  async next(): Promise<unknown> {
    while (this.#lines.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    this.#wake = undefined;
    return JSON.parse(this.#lines.shift()!) as unknown;
  }

  /** Lines written and not yet read, after a grace period in which a late write would arrive. */
  async unread(): Promise<string[]> {
    await grace();
    return [...this.#lines];
  }

  write(text: string): void {
    this.toClient.write(`${text}\n`);
  }
}

/**
 * For a negative ("nothing was sent", "still pending"): there is no condition to wait for, so the
 * client gets 100 ms of wall-clock time (not a count of event-loop turns) to do what it should not.
 */
const GRACE_MS = 100;
const grace = async () => {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
};
/** How long a call may take to settle when the vector says it does (a bound, not a wait). */
const SETTLE_DEADLINE_MS = 30_000;

async function runSteps(
  steps: Step[],
  client: AhpClient,
  peer: Peer,
  captures: Captures,
  calls: Map<string, Settled>,
  problems: string[],
  /** A branch's view of the calls the main steps started (they settle in that map, not in a copy). */
  parent?: Map<string, Settled>,
) {
  const get = (name: string) => calls.get(name) ?? parent?.get(name);
  const start = (c: Call): Promise<unknown> => {
    switch (c.op) {
      case "handshake":
        return client.handshake(c.capabilities);
      case "send":
        return client.send(c.event_type as EventType, c.payload);
      case "event":
        return client.event(c.event as unknown as AhpEventInput & { event_type: EventType });
      case "query":
        return client.query(c.query_type, c.payload);
      case "batch":
        return client.batch(c.events as unknown as AhpEventInput[]);
    }
  };
  const waitFor = async (name: string): Promise<Settled> => {
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    while (get(name)?.state === "pending" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
    return get(name) ?? { state: "pending" };
  };
  for (const [index, step] of steps.entries()) {
    const at = `step ${index + 1}`;
    if ("call" in step) {
      calls.set(step.as, { state: "pending" });
      start(step.call).then(
        (value) => calls.set(step.as, { state: "returned", value }),
        (error: unknown) => calls.set(step.as, { state: "failed", error: error as Error }),
      );
    } else if ("expect_sent" in step) {
      const sent = await peer.next();
      problems.push(...match(step.expect_sent, sent, "$", captures).map((p) => `${at}: sent ${p}`));
    } else if ("expect_nothing_sent" in step) {
      const unread = await peer.unread();
      if (unread.length > 0) problems.push(`${at}: the client wrote ${unread.join(" | ")}`);
    } else if ("reply" in step) {
      peer.write(JSON.stringify(fill(step.reply, captures)));
    } else if ("reply_text" in step) {
      peer.write(step.reply_text);
    } else if ("expect_returns" in step) {
      const s = await waitFor(step.expect_returns.call);
      if (s.state !== "returned")
        problems.push(`${at}: ${step.expect_returns.call} ${s.state === "failed" ? `failed: ${s.error.message}` : "is pending"}`);
      else problems.push(...match(step.expect_returns.value, s.value, "$", captures).map((p) => `${at}: returned ${p}`));
    } else if ("expect_fails" in step) {
      const s = await waitFor(step.expect_fails.call);
      if (s.state !== "failed")
        problems.push(`${at}: ${step.expect_fails.call} ${s.state === "returned" ? `returned ${JSON.stringify(s.value)}` : "is pending"}`);
      else
        for (const part of step.expect_fails.contains)
          if (!s.error.message.includes(part))
            problems.push(`${at}: error ${JSON.stringify(s.error.message)} does not contain ${JSON.stringify(part)}`);
    } else if ("expect_pending" in step) {
      await grace();
      const s = get(step.expect_pending);
      if (s?.state !== "pending") problems.push(`${at}: ${step.expect_pending} completed early`);
    } else if ("expect_timeout" in step) {
      problems.push(`${at}: expect_timeout is not replayed here`);
    } else {
      const values = step.expect_distinct.map((n) => JSON.stringify(captures.get(n)));
      if (new Set(values).size !== values.length)
        problems.push(`${at}: ${step.expect_distinct.join(", ")} are not distinct: ${values.join(", ")}`);
    }
  }
}

/** Runs a case (and, for cases with branches, returns the branch the client followed). */
async function runClientCase(c: ClientCase): Promise<{ problems: string[]; branch?: string }> {
  const peer = new Peer();
  const client = new AhpClient({ timeoutMs: 0 });
  await client.connect(new NdjsonStreamTransport({ readable: peer.toClient, writable: peer.fromClient }), { handshake: false });
  const captures: Captures = new Map();
  const calls = new Map<string, Settled>();
  const problems: string[] = [];
  try {
    if (c.handshaken) {
      const done = client.handshake([]);
      const sent = (await peer.next()) as { id: unknown };
      peer.write(JSON.stringify({ jsonrpc: "2.0", id: sent.id, result: c.handshake_result ?? DEFAULT_HANDSHAKE_RESULT }));
      await done;
    }
    await runSteps(c.steps, client, peer, captures, calls, problems);
    if (problems.length > 0 || c.branches === undefined) return { problems };
    const tries: { name: string; problems: string[] }[] = [];
    for (const b of c.branches) {
      const p: string[] = [];
      await runSteps(b.steps, client, peer, new Map(captures), new Map(), p, calls);
      if (p.length === 0) return { problems: [], branch: b.name };
      tries.push({ name: b.name, problems: p });
    }
    return { problems: tries.flatMap((t) => t.problems.map((p) => `${t.name}: ${p}`)) };
  } finally {
    await client.close();
  }
}

describe("client vectors against AhpClient", () => {
  it("there are client vectors for the client checklist items", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
    const items = new Set(cases.flatMap((c) => c.checklist));
    for (const n of [65, 66, 67, 68, 69, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 84]) expect(items, `item ${n}`).toContain(n);
  });

  for (const c of cases) {
    it(`${c.id}: ${c.title}`, async () => {
      const result = await runClientCase(c);
      expect(result.problems).toEqual([]);
      // AhpClient follows the recommended behaviour where the vectors allow alternatives.
      if (c.branches !== undefined) expect(result.branch).toBe("recommended");
    });
  }

  it("a client that does not follow the vectors is reported (the checks can fail)", async () => {
    const c = cases.find((x) => x.id === "answers/batch-count-mismatch")!;
    const broken: ClientCase = {
      ...c,
      steps: c.steps.map((s) => ("expect_fails" in s ? { expect_returns: { call: s.expect_fails.call, value: [] } } : s)),
    };
    const result = await runClientCase(broken);
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.problems[0]).toMatch(/failed: .*decision count mismatch/);
  });
});
