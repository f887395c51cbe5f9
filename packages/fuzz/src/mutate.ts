/**
 * Hostile inputs: a valid AHP message (messages.ts) turned into a tree (doc.ts), mutated at the
 * JSON level (odd values, duplicated and prototype keys, deep nesting, huge strings, broken
 * envelopes), rendered, and then mutated at the byte level (truncation, invalid UTF-8, BOM,
 * CRLF, blank lines, stray newlines). An input is a recipe that becomes bytes once the campaign
 * has given it a unique request id.
 */
import fc from "fast-check";
import { containers, member, nodeAt, render, toDoc, updateAt, withMember, type Doc } from "./doc.js";
import { validMessage, type MessageTemplate } from "./messages.js";

/** One unit of input: an NDJSON line (the driver adds the newline), a WebSocket frame or an HTTP body. */
export interface FuzzInput {
  bytes: Uint8Array;
  /** What was done to it, for reports and the corpus. */
  note: string;
  /** WebSocket: send as a binary frame. */
  binary?: boolean;
  /** HTTP: the Content-Type header (default `application/json`). */
  contentType?: string;
}

/** Sizes around the limits: the WebSocket/NDJSON message limit is 8 MiB, the HTTP body limit 2 MiB. */
export const MIB = 1024 * 1024;
export const HUGE_SIZES = [64 * 1024, MIB, 2 * MIB + 1, 8 * MIB + 1] as const;

/** The member every pollution attempt sets, and the fields whose pollution would change what the harness does. */
export const POLLUTION_MARK = "ahpFuzzPolluted";
const POLLUTION: Doc = toDoc({
  [POLLUTION_MARK]: true,
  session_id: "polluted",
  agent_id: "polluted",
  timestamp: "polluted",
  depth: 0,
  payload: null,
  event_type: "pre_action",
  query_type: "polluted",
  decision: "allow",
  jsonrpc: "2.0",
  method: "ahp/event",
  params: {},
  id: "polluted",
  result: { decision: "allow" },
  isAdmin: true,
});

/** Values that parse to something unexpected, or do not parse. */
const WEIRD_RAW = [
  "1e400",
  "-1e400",
  "-0",
  "18446744073709551616",
  "9007199254740993",
  "-1",
  "1.5",
  "0.1e1",
  "1E-400",
  "4294967296",
  "2147483648",
  "null",
  "true",
  "false",
  "{}",
  "[]",
  '""',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"\\u2028\\u2029"',
  '"\u0085"',
  "NaN",
  "Infinity",
  "undefined",
  "01",
  "+1",
  ".5",
  "1.",
  "0x10",
  "'x'",
  '"unterminated',
  "[1,]",
  '{"a":1,}',
  "tru",
] as const;

export type DocMutation =
  | { kind: "weird"; at: number; raw: string }
  | { kind: "delete"; at: number; member: number }
  | { kind: "duplicate"; at: number; member: number; raw: string; before: boolean }
  | { kind: "proto"; at: number; key: "__proto__" | "constructor" | "prototype" }
  | { kind: "id"; raw: string | undefined }
  | { kind: "method"; raw: string | undefined }
  | { kind: "params"; raw: string | undefined }
  | { kind: "jsonrpc"; raw: string | undefined }
  | { kind: "event_type"; value: string }
  | { kind: "deep"; at: number; depth: number; open: "[" | "{" }
  | { kind: "huge"; at: number; size: number; chunk: string }
  | { kind: "array" };

export type ByteMutation =
  | { kind: "truncate"; at: number }
  | { kind: "flip"; at: number; value: number }
  | { kind: "insert"; at: number; bytes: readonly number[] }
  | { kind: "bom" }
  | { kind: "crlf" }
  | { kind: "blank"; before: number; after: number }
  | { kind: "space" }
  | { kind: "newline"; at: number }
  | { kind: "splice"; other: string };

export interface Recipe {
  message: MessageTemplate;
  doc: DocMutation[];
  bytes: ByteMutation[];
  /** Sent as a binary WebSocket frame. */
  binary: boolean;
  /** A Content-Type other than `application/json` (HTTP). */
  contentType?: string;
}

const position = fc.nat({ max: 1_000_000 });
const weirdRaw = fc.constantFrom(...WEIRD_RAW);

const docMutation: fc.Arbitrary<DocMutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("weird" as const), at: position, raw: weirdRaw }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: position, member: position }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("duplicate" as const), at: position, member: position, raw: weirdRaw, before: fc.boolean() }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("proto" as const),
      at: position,
      key: fc.constantFrom("__proto__", "constructor", "prototype"),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("id" as const),
      raw: fc.option(fc.constantFrom("1", "0", "-0", "1e400", "18446744073709551616", "1.5", "null", "true", "{}", "[]", '["x"]', '""'), {
        nil: undefined,
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("method" as const),
      raw: fc.option(fc.constantFrom('"ahp/nope"', '"harness/event"', '"AHP/EVENT"', '"ahp/control"', "1", "null", '""'), {
        nil: undefined,
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("params" as const),
      raw: fc.option(fc.constantFrom("null", "[]", '["x"]', '"x"', "1", "{}"), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("jsonrpc" as const),
      raw: fc.option(fc.constantFrom('"1.0"', "2", "null", '""'), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("event_type" as const),
      value: fc.constantFrom("pre_tool_use", "PreAction", "pre_action", "post_action", "idle", "query", "handshake", "run_lifecycle", ""),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep" as const),
      at: position,
      depth: fc.constantFrom(64, 127, 128, 129, 1000, 10_000),
      open: fc.constantFrom("[" as const, "{" as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("array" as const) }) },
);

/** Huge strings are rare (about one input in 200): they cost time on every transport. */
const hugeMutation: fc.Arbitrary<DocMutation> = fc.record({
  kind: fc.constant("huge" as const),
  at: position,
  size: fc.constantFrom(...HUGE_SIZES),
  // Words with spaces: long runs of identifier characters in a shell command are a known slow
  // path of the default policy (see the README), kept out of the campaign's budget.
  chunk: fc.string({ minLength: 1, maxLength: 12 }).map((s) => `${s} `),
});

const invalidUtf8 = fc.constantFrom(
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0x00],
  [0xef, 0xbb, 0xbf],
);

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: position }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("flip" as const), at: position, value: fc.nat({ max: 255 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: position, bytes: invalidUtf8 }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("bom" as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("crlf" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("blank" as const), before: fc.nat({ max: 3 }), after: fc.nat({ max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("space" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("newline" as const), at: position }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("splice" as const),
      other: fc.constantFrom('{"jsonrpc":"2.0"}', "{}", "[]", "garbage", '"x"'),
    }),
  },
);

/** Recipes: about a quarter of the inputs stay valid, the rest get one to three mutations. */
export const recipe: fc.Arbitrary<Recipe> = fc
  .record({
    message: validMessage,
    doc: fc.oneof(
      { weight: 60, arbitrary: fc.constant([] as DocMutation[]) },
      { weight: 139, arbitrary: fc.array(docMutation, { minLength: 1, maxLength: 3 }) },
      { weight: 1, arbitrary: fc.tuple(hugeMutation).map((m): DocMutation[] => m) },
    ),
    bytes: fc.oneof(
      { weight: 7, arbitrary: fc.constant([] as ByteMutation[]) },
      { weight: 3, arbitrary: fc.array(byteMutation, { minLength: 1, maxLength: 2 }) },
    ),
    binary: fc.oneof({ weight: 40, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    contentType: fc.oneof(
      { weight: 30, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom("text/plain", "application/json; charset=utf-8", "application/vnd.ahp+json", "", "APPLICATION/JSON"),
      },
    ),
  })
  .map(({ contentType, ...rest }): Recipe => (contentType === undefined ? rest : { ...rest, contentType }));

/** Turns a recipe into bytes, with `id` as the request id of a request. */
export function build(r: Recipe, id: string): FuzzInput {
  const notes: string[] = [`${r.message.method}${r.message.notification ? " notification" : ""}`];
  const envelope: Record<string, unknown> = { jsonrpc: "2.0" };
  if (!r.message.notification) envelope.id = id;
  envelope.method = r.message.method;
  envelope.params = r.message.params;
  let doc = toDoc(envelope);
  for (const m of r.doc) {
    doc = applyDoc(doc, m);
    notes.push(describeDoc(m));
  }
  let bytes: Buffer = Buffer.from(render(doc), "utf8");
  for (const m of r.bytes) {
    bytes = applyBytes(bytes, m);
    notes.push(describeBytes(m));
  }
  const input: FuzzInput = { bytes, note: notes.join("; ") };
  if (r.binary) {
    input.binary = true;
    input.note += "; binary frame";
  }
  if (r.contentType !== undefined) {
    input.contentType = r.contentType;
    input.note += `; content-type ${JSON.stringify(r.contentType)}`;
  }
  return input;
}

function pick<T>(items: readonly T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

function applyDoc(doc: Doc, m: DocMutation): Doc {
  switch (m.kind) {
    case "weird":
    case "deep":
    case "huge": {
      const paths = allPaths(doc).filter((p) => p.length > 0);
      const path = pick(paths, m.at);
      if (path === undefined) return doc;
      if (m.kind === "weird") return updateAt(doc, path, () => ({ t: "raw", text: m.raw }));
      if (m.kind === "deep") return updateAt(doc, path, (inner) => ({ t: "deep", depth: m.depth, open: m.open, inner }));
      const value = m.chunk.repeat(Math.ceil(m.size / Math.max(1, Buffer.byteLength(m.chunk)))).slice(0, m.size);
      return updateAt(doc, path, () => ({ t: "str", value }));
    }
    case "delete":
    case "duplicate":
    case "proto": {
      const objects = containers(doc).filter((p) => nodeAt(doc, p).t === "obj");
      const path = pick(objects, m.at);
      if (path === undefined) return doc;
      return updateAt(doc, path, (node) => {
        if (node.t !== "obj") return node;
        const members = node.members.slice();
        if (m.kind === "proto") {
          const value: Doc = m.key === "__proto__" ? POLLUTION : { t: "obj", members: [["prototype", POLLUTION]] };
          members.splice(m.at % (members.length + 1), 0, [m.key, value]);
          return { t: "obj", members };
        }
        const index = m.member % Math.max(1, members.length);
        if (members.length === 0) return node;
        if (m.kind === "delete") members.splice(index, 1);
        else {
          const [key, value] = members[index]!;
          const twin: [string, Doc] = [key, { t: "raw", text: m.raw }];
          if (m.before) members.splice(index, 0, twin);
          else members.splice(index + 1, 0, twin);
          void value;
        }
        return { t: "obj", members };
      });
    }
    case "id":
      return withMember(doc, "id", m.raw === undefined ? undefined : { t: "raw", text: m.raw });
    case "method":
      return withMember(doc, "method", m.raw === undefined ? undefined : { t: "raw", text: m.raw });
    case "params":
      return withMember(doc, "params", m.raw === undefined ? undefined : { t: "raw", text: m.raw });
    case "jsonrpc":
      return withMember(doc, "jsonrpc", m.raw === undefined ? undefined : { t: "raw", text: m.raw });
    case "event_type": {
      const params = member(doc, "params");
      if (params === undefined || params.t !== "obj") return doc;
      return withMember(doc, "params", withMember(params, "event_type", { t: "str", value: m.value }));
    }
    case "array":
      return { t: "arr", items: [doc] };
  }
}

function allPaths(doc: Doc): number[][] {
  const paths: number[][] = [];
  const walk = (d: Doc, path: number[]): void => {
    paths.push(path);
    if (d.t === "obj") d.members.forEach(([, v], i) => walk(v, [...path, i]));
    else if (d.t === "arr") d.items.forEach((v, i) => walk(v, [...path, i]));
  };
  walk(doc, []);
  return paths;
}

function applyBytes(bytes: Buffer, m: ByteMutation): Buffer {
  const at = (n: number) => (bytes.length === 0 ? 0 : n % bytes.length);
  switch (m.kind) {
    case "truncate":
      return bytes.subarray(0, at(m.at));
    case "flip": {
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[at(m.at)] = m.value;
      return copy;
    }
    case "insert": {
      const i = at(m.at);
      return Buffer.concat([bytes.subarray(0, i), Buffer.from(m.bytes), bytes.subarray(i)]);
    }
    case "bom":
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    case "crlf":
      return Buffer.concat([bytes, Buffer.from("\r")]);
    case "blank":
      return Buffer.concat([Buffer.from("\n".repeat(m.before)), bytes, Buffer.from(" \t\r\n".repeat(m.after))]);
    case "space":
      return Buffer.concat([Buffer.from(" \t "), bytes, Buffer.from(" \t ")]);
    case "newline": {
      const i = at(m.at);
      return Buffer.concat([bytes.subarray(0, i), Buffer.from("\n"), bytes.subarray(i)]);
    }
    case "splice":
      return Buffer.concat([bytes, Buffer.from(m.other)]);
  }
}

function describeDoc(m: DocMutation): string {
  switch (m.kind) {
    case "weird":
      return `value → ${m.raw}`;
    case "duplicate":
      return `duplicated member (${m.raw})`;
    case "proto":
      return `${m.key} member`;
    case "id":
    case "method":
    case "params":
    case "jsonrpc":
      return `${m.kind} → ${m.raw ?? "(missing)"}`;
    case "event_type":
      return `event_type → ${JSON.stringify(m.value)}`;
    case "deep":
      return `nested ${m.depth} deep`;
    case "huge":
      return `string of ${m.size} bytes`;
    case "delete":
      return "member deleted";
    case "array":
      return "wrapped in an array";
  }
}

function describeBytes(m: ByteMutation): string {
  switch (m.kind) {
    case "insert":
      return `bytes ${m.bytes.map((b) => b.toString(16).padStart(2, "0")).join(" ")} inserted`;
    case "flip":
      return `byte set to ${m.value.toString(16)}`;
    case "splice":
      return `followed by ${JSON.stringify(m.other)}`;
    default:
      return m.kind;
  }
}
