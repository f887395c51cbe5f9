/**
 * The generators cover every kind of hostile input the suite promises, and the answer model
 * catches the faults it exists to catch (a missing answer, a second answer, a malformed one,
 * the wrong error code), so that a clean campaign means something.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  batchInputs,
  canaries,
  checkCanaries,
  expectFrame,
  expectHttp,
  expectNdjson,
  loadCorpus,
  matchAnswers,
  recipe,
  build,
  saveCorpusCase,
} from "../src/index.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

describe("generators", () => {
  const notes = fc
    .sample(recipe, { seed: 1, numRuns: 20_000 })
    .map((r, i) => build(r, `g${i}`).note)
    .join("\n");

  it.each([
    ["truncated JSON", "truncate"],
    ["invalid UTF-8 bytes", "bytes ff inserted"],
    ["a lone surrogate", "\\ud800"],
    ["a BOM", "bom"],
    ["CRLF", "crlf"],
    ["blank lines", "blank"],
    ["strings past the 8 MiB message limit", `string of ${8 * 1024 * 1024 + 1} bytes`],
    ["strings past the 2 MiB body limit", `string of ${2 * 1024 * 1024 + 1} bytes`],
    ["nesting 10,000 deep", "nested 10000 deep"],
    ["1e400", "→ 1e400"],
    ["-0", "→ -0"],
    ["2^64", "→ 18446744073709551616"],
    ["duplicated keys", "duplicated member"],
    ["__proto__ keys", "__proto__ member"],
    ["constructor keys", "constructor member"],
    ["prototype keys", "prototype member"],
    ["numeric ids", "id → 1"],
    ["null ids", "id → null"],
    ["object ids", "id → {}"],
    ["boolean ids", "id → true"],
    ["batches", "ahp/batch"],
    ["mutated event types", "event_type →"],
    ["notifications", "notification"],
    ["binary WebSocket frames", "binary frame"],
    ["foreign content types", "content-type"],
  ])("produce %s", (_what, marker) => {
    expect(notes).toContain(marker);
  });

  it("produce every event type", () => {
    const texts = fc.sample(recipe, { seed: 2, numRuns: 3000 }).map((r) => JSON.stringify(r.message.params));
    for (const type of [
      "pre_action",
      "post_action",
      "pre_prompt",
      "confirmation",
      "run_lifecycle",
      "task_list",
      "verification",
      "heartbeat",
    ]) {
      expect(texts.some((t) => t.includes(`"event_type":"${type}"`))).toBe(true);
    }
  });

  it("produce batches at and past the batch limit of 100", () => {
    const sizes = fc
      .sample(recipe, { seed: 3, numRuns: 20_000 })
      .filter((r) => r.message.method === "ahp/batch")
      .map((r) => (r.message.params as { events: unknown[] }).events.length);
    expect(sizes).toContain(100);
    expect(sizes.some((n) => n > 100)).toBe(true);
  });

  it("regenerate the same batch from the same seed", () => {
    const a = batchInputs(7, 3, 50).map((i) => Buffer.from(i.bytes).toString("base64"));
    const b = batchInputs(7, 3, 50).map((i) => Buffer.from(i.bytes).toString("base64"));
    expect(a).toEqual(b);
    expect(batchInputs(7, 4, 50).map((i) => Buffer.from(i.bytes).toString("base64"))).not.toEqual(a);
  });
});

const ok = (id: string) => ({ jsonrpc: "2.0", id, result: { decision: "allow" } });
const err = (id: string | null, code: number) => ({ jsonrpc: "2.0", id, error: { code, message: "x" } });

describe("answer model", () => {
  const request = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "r1", method: "ahp/event", params: {} }));
  const expected = () => {
    const e = expectNdjson(request);
    if (e.kind !== "answers") throw new Error("expected answers");
    return e.answers;
  };

  it("accepts exactly one well-formed answer per request", () => {
    expect(matchAnswers(expected(), [ok("r1")])).toEqual([]);
  });

  it("flags a request without an answer", () => {
    expect(matchAnswers(expected(), [])).toEqual([expect.stringMatching(/^no answer/)]);
  });

  it("flags a second answer", () => {
    expect(matchAnswers(expected(), [ok("r1"), ok("r1")])).toEqual([expect.stringMatching(/^unexpected answer/)]);
  });

  it("pairs answers with requests that share an id whatever order they arrive in", () => {
    const units = [
      { jsonrpc: "2.0", id: 1, method: "ahp/query", params: {} },
      { jsonrpc: "2.0", id: 1, method: "", params: {} },
    ].map((m) => expectNdjson(Buffer.from(JSON.stringify(m))));
    const slots = units.flatMap((e) => (e.kind === "answers" ? e.answers : []));
    const unknownMethod = { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } };
    const queryRefused = { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Handler error" } };
    expect(matchAnswers(slots, [unknownMethod, queryRefused])).toEqual([]);
    expect(matchAnswers(slots, [queryRefused, unknownMethod])).toEqual([]);
    expect(matchAnswers(slots, [queryRefused, queryRefused])[0]).toMatch(/expected code -32601/);
  });

  it("flags a malformed answer", () => {
    expect(matchAnswers(expected(), [{ jsonrpc: "2.0", id: "r1", result: null }])[0]).toMatch(/malformed answer/);
    expect(matchAnswers(expected(), [{ jsonrpc: "2.0", id: "r1", result: 1, error: { code: 1, message: "" } }])[0]).toMatch(/malformed/);
  });

  it("requires -32700 (or the size/depth error) for broken JSON and the right code for an unknown method", () => {
    const broken = expectNdjson(Buffer.from('{"jsonrpc":"2.0","id":"b1",'));
    expect(broken.kind === "answers" && matchAnswers(broken.answers, [err(null, -32700)])).toEqual([]);
    expect(broken.kind === "answers" && matchAnswers(broken.answers, [err(null, -32600)])[0]).toMatch(/expected code -32700/);
    const unknown = expectNdjson(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "u1", method: "ahp/nope", params: {} })));
    expect(unknown.kind === "answers" && matchAnswers(unknown.answers, [ok("u1")])[0]).toMatch(/-32601/);
  });

  it("expects deep nesting to be refused, and lines past the limit to be answered -32002", () => {
    const deep = Buffer.from(`{"jsonrpc":"2.0","id":"d1","method":"ahp/event","params":${"[".repeat(10_000)}${"]".repeat(10_000)}}`);
    const e = expectNdjson(deep);
    expect(e.kind === "answers" && e.answers[0]!.codes).toEqual([-32700, -32002]);
    const huge = Buffer.alloc(8 * 1024 * 1024 + 1, 0x20);
    const h = expectNdjson(huge);
    expect(h.kind === "answers" && h.answers[0]!.codes).toEqual([-32002]);
  });

  it("expects WebSocket to close on a text frame that is not UTF-8, and HTTP to answer 413 and 415", () => {
    expect(expectFrame(Buffer.from([0x7b, 0xff, 0x7d]), { websocket: true })).toMatchObject({ kind: "close", codes: [1007] });
    expect(expectHttp(Buffer.alloc(2 * 1024 * 1024 + 1, 0x20), undefined)).toMatchObject({ statuses: [413] });
    expect(expectHttp(Buffer.from("{}"), "text/plain")).toMatchObject({ statuses: [415] });
  });

  it("canaries catch a wrong decision and a polluted Object.prototype", () => {
    const list = canaries("t");
    const byName = (n: string) => list.find((c) => c.id.endsWith(n))!;
    const answers = [
      { jsonrpc: "2.0", id: byName("handshake").id, result: { protocol_version: "2.4", harness_info: { name: "ahp-harness" } } },
      { jsonrpc: "2.0", id: byName("allow").id, result: { decision: "allow" } },
      // `rm -rf /` allowed, and params {} accepted as an event: both must be reported.
      { jsonrpc: "2.0", id: byName("block").id, result: { decision: "allow" } },
      { jsonrpc: "2.0", id: byName("proto-event").id, result: { decision: "allow" } },
    ];
    const { problems } = checkCanaries(list, answers);
    expect(problems).toEqual([
      expect.stringMatching(/rm -rf \/` was not blocked/),
      expect.stringMatching(/Object.prototype polluted/),
      expect.stringMatching(/proto-query got no answer/),
    ]);
  });
});

describe("corpus files", () => {
  it("round-trip inputs byte for byte, including huge and binary ones", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ahp-fuzz-corpus-"));
    try {
      const inputs = [
        { note: "huge", bytes: Buffer.alloc(3 * 1024 * 1024, 0x61) },
        { note: "binary", bytes: Buffer.from([0xff, 0x00, 0xfe]), binary: true, contentType: "text/plain" },
      ];
      await saveCorpusCase(dir, { transport: "ws", seed: 1, batch: 2, problems: ["p"], inputs });
      const [loaded] = await loadCorpus(dir);
      expect(loaded!.name).toBe("ws-seed1-batch2");
      expect(loaded!.inputs.map((i) => Buffer.from(i.bytes).equals(Buffer.from(inputs.find((x) => x.note === i.note)!.bytes)))).toEqual([
        true,
        true,
      ]);
      expect(loaded!.inputs[1]).toMatchObject({ binary: true, contentType: "text/plain" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
