import { describe, expect, it } from "vitest";
import { AuditKey, canonicalJson, checkRecordMac, recordHash, recordLine, sealRecord, sha256Hex, type AuditEntry } from "../src/index.js";

/** The canonical text written member by member, as the specification reads (the reference to compare with). */
function reference(value: unknown): string {
  if (typeof value === "string" || typeof value === "boolean" || value === null) return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("non-finite");
    return JSON.stringify(value);
  }
  if (typeof value !== "object") throw new Error(`a ${typeof value}`);
  if (Array.isArray(value))
    return `[${value.map((v: unknown) => (v === undefined || typeof v === "function" || typeof v === "symbol" ? "null" : reference(v))).join(",")}]`;
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") return reference(withToJson.toJSON());
  const members = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`);
  return `{${members.join(",")}}`;
}

const protoKey = JSON.parse('{"__proto__": {"b": 1, "a": 2}, "z": 0}') as unknown;
const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [3, { d: 1, c: 2 }] });

const VALUES: unknown[] = [
  "plain",
  'quote " backslash \\ newline \n tab \t control \u0001 lone \ud800 emoji 😀',
  0,
  -0,
  1.5e-7,
  123456789012,
  true,
  null,
  [],
  {},
  { b: 1, a: 2 },
  { a: 1, b: { d: [1, { z: 1, y: undefined, x: null }], c: "x" } },
  { "10": "ten", "9": "nine", a: "a" },
  { "1": 1 },
  { a: { "2": 2, "10": 10 } },
  [undefined, () => 1, Symbol("s"), { b: 2, a: 1 }],
  { when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) },
  { boxed: Object("text") as unknown, num: Object(5) as unknown },
  Object.assign([1, 2], { extra: "ignored" }),
  protoKey,
  nullProto,
  { é: 1, e: 2, E: 3, "": 4, "\u00ff": 5, "\u0100": 6 },
  { skipped: undefined, kept: "yes" },
];

describe("canonical JSON", () => {
  it("is the members sorted by UTF-16 code units, whatever the shape of the value", () => {
    for (const value of VALUES) expect(canonicalJson(value), JSON.stringify(value)).toBe(reference(value));
  });

  it("leaves the value it was given unchanged", () => {
    const value = { b: { d: 1, c: 2 }, a: [{ y: 1, x: 2 }] };
    const before = JSON.stringify(value);
    canonicalJson(value);
    expect(JSON.stringify(value)).toBe(before);
  });

  it("refuses what has no JSON form", () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1n, () => 1, Symbol("s"), undefined, { f: () => 1 }, { n: 1n }, cycle]) {
      expect(() => canonicalJson(bad)).toThrow(expect.objectContaining({ code: "NOT_CANONICAL" }));
    }
  });
});

describe("sealRecord", () => {
  const key = AuditKey.fromText("4d".repeat(32));
  const base: AuditEntry & { time: string } = {
    kind: "decision",
    time: "2026-01-01T00:00:00.000Z",
    session: "s1",
    agent: "a1",
    event_type: "pre_action",
    conn: { transport: "unix", id: 3, remote: "pid 7" },
    decision: "allow",
  };
  const entries: Array<AuditEntry & { time: string }> = [
    base,
    { ...base, payload: { tool_name: "bash", arguments: { command: "ls", "2": "x", "10": "y" } } },
    { ...base, data: { z: [1, { b: 1, a: 2 }], when: new Date(0) } },
    { ...base, ...({ "0weird": "top-level name starting with a digit" } as object) },
    { ...base, ...(JSON.parse('{"__proto__": {"x": 1}}') as object) },
    { kind: "note", time: "2026-01-01T00:00:00.000Z" },
  ];

  it("writes the canonical JSON of the record as its line, with a MAC that verifies and the hash of that line", () => {
    for (const entry of entries) {
      const record = sealRecord(entry, { seq: 7, prev: "0".repeat(64), key });
      const line = recordLine(record);
      expect(line.endsWith("\n")).toBe(true);
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(line).toBe(`${reference(parsed)}\n`);
      expect(canonicalJson(record)).toBe(line.slice(0, -1));
      expect(checkRecordMac(JSON.parse(line), key)).toBe(true);
      const { mac, ...rest } = parsed;
      expect(mac).toBe(key.mac(reference(rest)));
      expect(recordHash(record)).toBe(sha256Hex(line.slice(0, -1)));
      expect(parsed.seq).toBe(7);
    }
  });

  it("an altered member no longer verifies", () => {
    const record = sealRecord(base, { seq: 1, prev: "0".repeat(64), key });
    const parsed = JSON.parse(recordLine(record)) as Record<string, unknown>;
    expect(checkRecordMac({ ...parsed, decision: "block" } as never, key)).toBe(false);
  });
});
