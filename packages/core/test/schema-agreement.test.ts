/**
 * The example corpus in `schemas/examples/<Type>/{valid,invalid}/*.json` is judged by the zod
 * schemas and by the checked-in JSON Schema bundle (ajv, draft 2020-12, strict): both must give
 * the expected verdict for every file. Also checked here: the zod *output* of every valid
 * example fits the bundle generated with `io: "output"`, every `$defs` type has examples, and
 * the checked-in schema files equal what the generator produces now.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { AHP_SCHEMA_TYPES, INTEGER_WIDTHS, stableJson, toJsonSchemaBundle, type JsonSchemaObject } from "../src/index.js";

const schemasDir = fileURLToPath(new URL("../../../schemas/", import.meta.url));
const examplesDir = join(schemasDir, "examples");
const bundle = JSON.parse(readFileSync(join(schemasDir, "ahp.schema.json"), "utf8")) as JsonSchemaObject & {
  $id: string;
  $defs: Record<string, unknown>;
};
const defNames = Object.keys(bundle.$defs);

/**
 * `$defs` types that need no valid / invalid example, each with the reason. Empty today: every
 * type, enumerations included, has both.
 */
const NO_VALID_EXAMPLE_NEEDED: Readonly<Record<string, string>> = {};
const NO_INVALID_EXAMPLE_NEEDED: Readonly<Record<string, string>> = {};

interface Example {
  type: string;
  expected: "valid" | "invalid";
  name: string;
  /** Path relative to schemas/examples, for messages. */
  path: string;
  value: unknown;
}

function loadExamples(): Example[] {
  const out: Example[] = [];
  for (const type of readdirSync(examplesDir).sort()) {
    for (const expected of ["valid", "invalid"] as const) {
      const dir = join(examplesDir, type, expected);
      let files: string[];
      try {
        files = readdirSync(dir).sort();
      } catch {
        continue;
      }
      for (const file of files) {
        const path = `${type}/${expected}/${file}`;
        if (!file.endsWith(".json")) throw new Error(`unexpected file in the corpus: ${path}`);
        out.push({ type, expected, name: file.slice(0, -5), path, value: JSON.parse(readFileSync(join(dir, file), "utf8")) });
      }
    }
  }
  return out;
}

const examples = loadExamples();

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

function compileAll(schema: JsonSchemaObject & { $id: string }): Map<string, ValidateFunction> {
  const ajv = newAjv();
  ajv.addSchema(schema);
  const validators = new Map<string, ValidateFunction>();
  for (const name of defNames) {
    const validate = ajv.getSchema(`${schema.$id}#/$defs/${name}`);
    if (validate === undefined) throw new Error(`ajv cannot find $defs/${name}`);
    validators.set(name, validate);
  }
  return validators;
}

const verdict = (ok: boolean) => (ok ? "valid" : "invalid");

/**
 * Instances holding an integer beyond JavaScript's exact range (|n| > 2^53 − 1). Their folder is
 * the spec's verdict, which Python's `jsonschema` gives (it reads integers exactly). In
 * JavaScript `JSON.parse` has already rounded the number before any validator sees it:
 * - zod refuses every such integer (its `z.int()` accepts safe integers only), valid or not;
 * - ajv compares the rounded number with the rounded bound: 2^64 − 1, 2^64 − 2 and 2^64 all
 *   become 2^64 (and ±(2^63 − 1), ±2^63, −2^63 − 1 become ±2^63), so a value just past a 64-bit
 *   bound is accepted.
 * Every such file must be listed here with what zod and ajv say (a guard test checks it).
 */
const BEYOND_SAFE_INTEGERS: Readonly<Record<string, { zod: "valid" | "invalid"; ajv: "valid" | "invalid" }>> = {
  "U64/valid/beyond-safe-9007199254740992.json": { zod: "invalid", ajv: "valid" },
  "U64/valid/below-max-18446744073709551614.json": { zod: "invalid", ajv: "valid" },
  "U64/valid/max-18446744073709551615.json": { zod: "invalid", ajv: "valid" },
  "U64/invalid/above-max-18446744073709551616.json": { zod: "invalid", ajv: "valid" },
  "I64/valid/min-negative-9223372036854775808.json": { zod: "invalid", ajv: "valid" },
  "I64/valid/above-min-negative-9223372036854775807.json": { zod: "invalid", ajv: "valid" },
  "I64/valid/below-max-9223372036854775806.json": { zod: "invalid", ajv: "valid" },
  "I64/valid/max-9223372036854775807.json": { zod: "invalid", ajv: "valid" },
  "I64/invalid/below-min-negative-9223372036854775809.json": { zod: "invalid", ajv: "valid" },
  "I64/invalid/above-max-9223372036854775808.json": { zod: "invalid", ajv: "valid" },
  "Decision/valid/defer-retry-after-ms-u64-max-18446744073709551615.json": { zod: "invalid", ajv: "valid" },
  "Decision/valid/defer-retry-after-ms-below-u64-max-18446744073709551614.json": { zod: "invalid", ajv: "valid" },
  "Decision/invalid/defer-retry-after-ms-above-u64-18446744073709551616.json": { zod: "invalid", ajv: "valid" },
  "RateLimitDecision/invalid/retry-after-ms-above-u64-18446744073709551616.json": { zod: "invalid", ajv: "valid" },
  "ArtifactRef/valid/size-bytes-u64-max-18446744073709551615.json": { zod: "invalid", ajv: "valid" },
  "TimeRange/valid/i64-min-and-max.json": { zod: "invalid", ajv: "valid" },
  "TimeRange/invalid/to-above-i64-9223372036854775808.json": { zod: "invalid", ajv: "valid" },
  // 1e20 is an exponent literal: JavaScript and Python both read it as a float, above every bound.
  "U64/invalid/exponent-1e20-above-max.json": { zod: "invalid", ajv: "invalid" },
};

/** True when the file's text holds an integer literal (or an exponent form) beyond ±(2^53 − 1). */
function holdsUnsafeInteger(text: string): boolean {
  for (const m of text.matchAll(/-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/g)) {
    const literal = m[0];
    if (/[.eE]/.test(literal)) {
      if (/[eE]/.test(literal) && Math.abs(Number(literal)) > Number.MAX_SAFE_INTEGER) return true;
      continue;
    }
    const n = BigInt(literal);
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) return true;
  }
  return false;
}

describe("schema corpus", () => {
  it("has at least 200 instances, in folders named after $defs types", () => {
    expect(examples.length).toBeGreaterThanOrEqual(200);
    // Lower-case folders hold the corpus of another bundle (examples/aarts/<Type> for aarts.schema.json), checked by its package.
    const folders = readdirSync(examplesDir).filter((f) => statSync(join(examplesDir, f)).isDirectory() && !/^[a-z]/.test(f));
    expect(folders.filter((f) => !(f in bundle.$defs))).toEqual([]);
    for (const folder of folders) {
      expect(readdirSync(join(examplesDir, folder)).filter((f) => f !== "valid" && f !== "invalid")).toEqual([]);
    }
  });

  it("registry and bundle name the same types", () => {
    expect(Object.keys(AHP_SCHEMA_TYPES).sort()).toEqual([...defNames].sort());
  });

  it("gives every $defs type at least one valid and one invalid example", () => {
    const count = (type: string, expected: Example["expected"]) =>
      examples.filter((e) => e.type === type && e.expected === expected).length;
    const withoutValid = defNames.filter((t) => count(t, "valid") === 0 && !(t in NO_VALID_EXAMPLE_NEEDED));
    const withoutInvalid = defNames.filter((t) => count(t, "invalid") === 0 && !(t in NO_INVALID_EXAMPLE_NEEDED));
    expect(withoutValid, `types without a valid example: ${withoutValid.join(", ")}`).toEqual([]);
    expect(withoutInvalid, `types without an invalid example: ${withoutInvalid.join(", ")}`).toEqual([]);
    // A whitelist entry for a type that now has examples is stale.
    expect(Object.keys(NO_VALID_EXAMPLE_NEEDED).filter((t) => count(t, "valid") > 0 || !(t in bundle.$defs))).toEqual([]);
    expect(Object.keys(NO_INVALID_EXAMPLE_NEEDED).filter((t) => count(t, "invalid") > 0 || !(t in bundle.$defs))).toEqual([]);
  });

  it("keeps the subtle cases of the specification tables", () => {
    // A regression guard: these files pin rules that are easy to lose in a refactor.
    const required = [
      "TaskItem/invalid/depends-on-null-list0",
      "TaskItem/valid/depends-on-omitted",
      "ContextPerceptionEvent/invalid/constraints-null-dflt",
      "ContextPerceptionEvent/valid/spec-7.3-minimal",
      "SessionStats/invalid/total-tokens-above-i32-2147483648",
      "HarnessConfig/invalid/max-depth-above-u32-4294967296",
      "AhpEvent/invalid/depth-fraction-1.5",
      "AhpEvent/invalid/depth-negative-1",
      "ReasoningType/valid/re_act",
      "ReasoningType/invalid/react-without-underscore",
      "PlanningStrategy/valid/custom-object",
      "PlanningStrategy/invalid/bare-string-custom",
      "PlanningStrategy/invalid/custom-object-two-keys",
      "PerceptionTarget/invalid/two-kind-keys",
      "Decision/invalid/tag-Allow-wrong-case",
      "Decision/invalid/defer-without-retry-after-ms",
      "IdleDecision/valid/defer-without-retry-after-ms",
      "Decision/valid/modify-modified-payload-null",
      "Decision/invalid/modify-without-modified-payload",
      "AhpEvent/valid/payload-null",
      "AhpEvent/invalid/payload-absent",
      "QueryResponse/valid/answer-null",
      "QueryResponse/invalid/answer-absent",
      "JsonRpcSuccessResponse/invalid/result-null",
      "TaskStatus/valid/in_progress",
      "TaskStatus/invalid/InProgress-wrong-case",
      "U64/valid/max-18446744073709551615",
      "U64/invalid/above-max-18446744073709551616",
      "I64/invalid/below-min-negative-9223372036854775809",
    ];
    const have = new Set(examples.map((e) => `${e.type}/${e.expected}/${e.name}`));
    expect(required.filter((r) => !have.has(r))).toEqual([]);
  });
});

describe("zod and the JSON Schema bundle agree on every example", () => {
  let validators: Map<string, ValidateFunction>;
  beforeAll(() => {
    validators = compileAll(bundle);
  });

  it.each(examples.map((e) => [e.path, e] as const))("%s", (_path, example) => {
    const zod = AHP_SCHEMA_TYPES[example.type]!.safeParse(example.value);
    const validate = validators.get(example.type)!;
    const ajvOk = validate(example.value);
    const zodDetail = zod.success ? "" : JSON.stringify(zod.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
    const ajvDetail = ajvOk ? "" : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join("; ");
    const js = BEYOND_SAFE_INTEGERS[example.path];
    expect(verdict(zod.success), `zod: ${zodDetail}`).toBe(js?.zod ?? example.expected);
    expect(verdict(ajvOk), `ajv: ${ajvDetail}`).toBe(js?.ajv ?? example.expected);
  });
});

describe("integer kinds (spec §0): exact bounds, and what JavaScript can check", () => {
  const schemaText = readFileSync(join(schemasDir, "ahp.schema.json"), "utf8");

  it("states the spec's exact bounds of U64, U32, I32 and I64 in the JSON Schema text", () => {
    for (const [name, width] of Object.entries(INTEGER_WIDTHS)) {
      // The text, not JSON.parse: 18446744073709551615 does not survive JSON.parse.
      const block = new RegExp(`"${name}": \\{[^}]*"minimum": (-?\\d+),\\s*"maximum": (-?\\d+)`).exec(schemaText);
      expect(block, `$defs/${name} with minimum and maximum`).not.toBeNull();
      expect([block![1], block![2]]).toEqual([width.minimum, width.maximum]);
    }
    expect(BigInt(INTEGER_WIDTHS.U64.maximum)).toBe(2n ** 64n - 1n);
    expect(BigInt(INTEGER_WIDTHS.I64.minimum)).toBe(-(2n ** 63n));
    expect(BigInt(INTEGER_WIDTHS.I64.maximum)).toBe(2n ** 63n - 1n);
    expect(BigInt(INTEGER_WIDTHS.U32.maximum)).toBe(2n ** 32n - 1n);
    expect(BigInt(INTEGER_WIDTHS.I32.minimum)).toBe(-(2n ** 31n));
  });

  it("every integer member of the wire types refers to one of the four kinds", () => {
    const defs = bundle.$defs;
    const inline: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (node === null || typeof node !== "object") return;
      const schema = node as Record<string, unknown>;
      if (schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"))) inline.push(where);
      for (const [k, v] of Object.entries(schema)) if (k !== "const" && k !== "default" && k !== "enum") walk(v, `${where}/${k}`);
    };
    for (const [name, def] of Object.entries(defs)) if (!(name in INTEGER_WIDTHS)) walk(def, name);
    // JSON-RPC ids may be any integer the implementation accepts; they are no spec integer kind.
    expect(inline).toEqual(["JsonRpcId/anyOf/1"]);
  });

  it("has boundary instances at, just inside and just outside every bound, judged alike by Python (see BEYOND_SAFE_INTEGERS for JavaScript)", () => {
    for (const [name, width] of Object.entries(INTEGER_WIDTHS)) {
      const values = (expected: "valid" | "invalid") =>
        examples
          .filter((e) => e.type === name && e.expected === expected)
          .map((e) => readFileSync(join(examplesDir, e.path), "utf8").trim());
      const min = BigInt(width.minimum);
      const max = BigInt(width.maximum);
      expect(values("valid"), `${name} valid`).toEqual(expect.arrayContaining([String(min), String(max), String(max - 1n)]));
      if (min < 0n) expect(values("valid"), `${name} valid`).toContain(String(min + 1n));
      expect(values("invalid"), `${name} invalid`).toEqual(expect.arrayContaining([String(min - 1n), String(max + 1n)]));
    }
  });

  it("lists every corpus file that holds an integer beyond JavaScript's exact range", () => {
    const unsafe = examples.filter((e) => holdsUnsafeInteger(readFileSync(join(examplesDir, e.path), "utf8"))).map((e) => e.path);
    expect(unsafe.sort()).toEqual(Object.keys(BEYOND_SAFE_INTEGERS).sort());
  });

  it("zod refuses U64 / I64 values it cannot hold exactly, with a clear message", () => {
    const result = AHP_SCHEMA_TYPES.U64!.safeParse(2 ** 53);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/9007199254740991/);
    expect(AHP_SCHEMA_TYPES.U64!.safeParse(2 ** 53 - 1).success).toBe(true);
    expect(AHP_SCHEMA_TYPES.I64!.safeParse(-(2 ** 53) + 1).success).toBe(true);
    expect(AHP_SCHEMA_TYPES.I64!.safeParse(-(2 ** 53)).success).toBe(false);
  });
});

describe('zod output of every valid example fits the io: "output" bundle', () => {
  const outputBundle = toJsonSchemaBundle(AHP_SCHEMA_TYPES, { id: "urn:ahp:test:output", io: "output" }) as JsonSchemaObject & {
    $id: string;
  };
  let validators: Map<string, ValidateFunction>;
  beforeAll(() => {
    validators = compileAll(outputBundle);
  });

  it("closes plain objects and makes defaulted members required", () => {
    const defs = outputBundle.$defs as Record<string, { additionalProperties?: unknown; required?: string[] }>;
    expect(defs.TaskItem?.additionalProperties).toBe(false);
    expect(defs.TaskItem?.required).toEqual(expect.arrayContaining(["depends_on", "evidence", "artifacts"]));
    expect(defs.ContextPerceptionEvent?.required).toEqual(expect.arrayContaining(["domain", "constraints"]));
  });

  // zod refuses the valid instances it cannot hold exactly (BEYOND_SAFE_INTEGERS); there is no output to check.
  const parseable = examples.filter((e) => e.expected === "valid" && BEYOND_SAFE_INTEGERS[e.path]?.zod !== "invalid");
  it.each(parseable.map((e) => [e.path, e] as const))("%s", (_path, example) => {
    const parsed = AHP_SCHEMA_TYPES[example.type]!.parse(example.value);
    const validate = validators.get(example.type)!;
    const ok = validate(parsed);
    expect(ok, (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join("; ")).toBe(true);
  });

  it("fills defaults exactly as the reference does (spec §7.3)", () => {
    const minimal = examples.find((e) => e.path === "ContextPerceptionEvent/valid/spec-7.3-minimal.json")!;
    const defaulted = examples.find((e) => e.path === "ContextPerceptionEvent/valid/spec-7.3-after-defaults.json")!;
    expect(AHP_SCHEMA_TYPES.ContextPerceptionEvent!.parse(minimal.value)).toEqual(defaulted.value);
    const task = AHP_SCHEMA_TYPES.TaskItem!.parse({ id: "t", title: "x", status: "pending" });
    expect(task).toMatchObject({ depends_on: [], evidence: [], artifacts: [] });
  });
});

describe("checked-in schema files", () => {
  interface BundlesModule {
    bundles: { file: string; id: string; build(): JsonSchemaObject }[];
    buildMeta(): JsonSchemaObject;
  }
  interface IntegersModule {
    schemaText: (value: unknown) => string;
  }

  it("equal what the generator produces now (run `pnpm schemas` when this fails)", async () => {
    // Loaded at run time: the generator lives in the schemas workspace, outside this package's tsconfig.
    const mod = (await import(new URL("../../../schemas/scripts/bundles.ts", import.meta.url).href)) as BundlesModule;
    const { schemaText } = (await import(new URL("../../../schemas/scripts/integers.ts", import.meta.url).href)) as IntegersModule;
    expect(mod.bundles.length).toBeGreaterThan(0);
    for (const b of mod.bundles) {
      const text = schemaText(b.build());
      expect(text, `schemas/${b.file} is stale`).toBe(readFileSync(join(schemasDir, b.file), "utf8"));
      expect((JSON.parse(text) as { $id: string }).$id).toBe(b.id);
      // Without bigints the generator's text is exactly @ahp/core's stableJson.
      if (!text.includes("18446744073709551615")) expect(text).toBe(stableJson(JSON.parse(text)));
    }
    expect(stableJson(mod.buildMeta()), "schemas/meta.json is stale").toBe(readFileSync(join(schemasDir, "meta.json"), "utf8"));
  });

  it("every $ref in meta.json points at an existing $defs entry", () => {
    const meta = readFileSync(join(schemasDir, "meta.json"), "utf8");
    const refs = [...meta.matchAll(/"ahp\.schema\.json#\/\$defs\/([A-Za-z0-9]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !(r in bundle.$defs))).toEqual([]);
  });
});
