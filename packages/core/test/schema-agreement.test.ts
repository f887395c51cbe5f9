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
import { AHP_SCHEMA_TYPES, stableJson, toJsonSchemaBundle, type JsonSchemaObject } from "../src/index.js";

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
    expect(verdict(zod.success), `zod: ${zodDetail}`).toBe(example.expected);
    expect(verdict(ajvOk), `ajv: ${ajvDetail}`).toBe(example.expected);
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

  it.each(examples.filter((e) => e.expected === "valid").map((e) => [e.path, e] as const))("%s", (_path, example) => {
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

  it("equal what the generator produces now (run `pnpm schemas` when this fails)", async () => {
    // Loaded at run time: the generator lives in the schemas workspace, outside this package's tsconfig.
    const mod = (await import(new URL("../../../schemas/scripts/bundles.ts", import.meta.url).href)) as BundlesModule;
    expect(mod.bundles.length).toBeGreaterThan(0);
    for (const b of mod.bundles) {
      const text = stableJson(b.build());
      expect(text, `schemas/${b.file} is stale`).toBe(readFileSync(join(schemasDir, b.file), "utf8"));
      expect((JSON.parse(text) as { $id: string }).$id).toBe(b.id);
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
