/**
 * The AARTS example corpus (`schemas/examples/aarts/<Type>/{valid,invalid}/*.json`) judged by
 * four implementations that must agree with the expected verdict: the zod schemas, the
 * checked-in JSON Schema bundle (`schemas/aarts.schema.json`, ajv draft 2020-12 strict),
 * Python's `jsonschema`, and the package's dependency-free runtime validator. Also: the
 * checked-in bundle equals a fresh generation, and the meta document lists the 20 hook points.
 */
import { execFile, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import {
  AARTS_SCHEMA_TYPES,
  HOOK_CATALOG,
  HOOK_POINTS,
  toAhpEvent,
  validateArtifact,
  validateEvent,
  validateVerdict,
  validateVersionCheckRequest,
  validateVersionCheckResponse,
} from "@ahp/aarts";
import { stableJson } from "@ahp/core";

const schemasDir = fileURLToPath(new URL("../../../schemas/", import.meta.url));
const examplesDir = join(schemasDir, "examples", "aarts");
const bundlePath = join(schemasDir, "aarts.schema.json");
const bundle = JSON.parse(readFileSync(bundlePath, "utf8")) as { $id: string; $defs: Record<string, unknown> };

interface Example {
  type: string;
  expected: "valid" | "invalid";
  path: string;
  value: unknown;
}

const examples: Example[] = [];
for (const type of readdirSync(examplesDir).sort()) {
  for (const expected of ["valid", "invalid"] as const) {
    let files: string[];
    try {
      files = readdirSync(join(examplesDir, type, expected)).sort();
    } catch {
      continue;
    }
    for (const file of files) {
      examples.push({
        type,
        expected,
        path: `${type}/${expected}/${file}`,
        value: JSON.parse(readFileSync(join(examplesDir, type, expected, file), "utf8")),
      });
    }
  }
}

/** The runtime validator for the types it covers. */
const RUNTIME: Record<string, (v: unknown) => { ok: boolean }> = {
  AartsEvent: validateEvent,
  Verdict: validateVerdict,
  Artifact: validateArtifact,
  VersionCheckRequest: validateVersionCheckRequest,
  VersionCheckResponse: validateVersionCheckResponse,
  ...Object.fromEntries(
    HOOK_POINTS.map((h) => [
      `${h}Event`,
      (v: unknown) => {
        const r = validateEvent(v);
        // A valid event of another hook is not a valid event of this type.
        return { ok: r.ok && (v as { hook_point?: string }).hook_point === h };
      },
    ]),
  ),
};

const verdictOf = (ok: boolean) => (ok ? "valid" : "invalid");

describe("AARTS corpus", () => {
  it("has at least 60 instances, valid and invalid ones for every event type and the verdict", () => {
    expect(examples.length).toBeGreaterThanOrEqual(60);
    for (const type of [
      ...HOOK_POINTS.map((h) => `${h}Event`),
      "AartsEvent",
      "Verdict",
      "Artifact",
      "VersionCheckRequest",
      "VersionCheckResponse",
    ]) {
      expect(
        examples.some((e) => e.type === type && e.expected === "valid"),
        `${type} valid`,
      ).toBe(true);
      expect(
        examples.some((e) => e.type === type && e.expected === "invalid"),
        `${type} invalid`,
      ).toBe(true);
    }
    expect(readdirSync(examplesDir).filter((t) => !(t in bundle.$defs))).toEqual([]);
  });

  it("the registry and the bundle name the same types", () => {
    expect(Object.keys(AARTS_SCHEMA_TYPES).sort()).toEqual(Object.keys(bundle.$defs).sort());
  });
});

describe("zod, ajv and the runtime validator agree on every example", () => {
  let validators: Map<string, ValidateFunction>;
  beforeAll(() => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(bundle);
    validators = new Map(Object.keys(bundle.$defs).map((name) => [name, ajv.getSchema(`${bundle.$id}#/$defs/${name}`)!]));
  });

  it.each(examples.map((e) => [e.path, e] as const))("%s", (_path, example) => {
    const zod = AARTS_SCHEMA_TYPES[example.type]!.safeParse(example.value);
    const validate = validators.get(example.type)!;
    const ajvOk = validate(example.value);
    expect(verdictOf(zod.success), `zod: ${zod.success ? "" : JSON.stringify(zod.error.issues.slice(0, 2))}`).toBe(example.expected);
    expect(verdictOf(ajvOk), `ajv: ${JSON.stringify(validate.errors?.slice(0, 2))}`).toBe(example.expected);
    const runtime = RUNTIME[example.type];
    if (runtime !== undefined) expect(verdictOf(runtime(example.value).ok), "runtime validator").toBe(example.expected);
  });
});

describe("Python jsonschema agrees with the corpus", () => {
  const python = process.env.AHP_PYTHON ?? "/usr/bin/python3";
  const ready = spawnSync(python, ["-c", "import jsonschema; jsonschema.Draft202012Validator"], { timeout: 15_000 }).status === 0;
  const script = fileURLToPath(new URL("python/check_corpus.py", import.meta.url));

  it.skipIf(!ready && process.env.CI !== "true")("gives the expected verdict for every example", async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(python, [script, bundlePath, examplesDir], { timeout: 60_000, encoding: "utf8" }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
      );
    });
    expect(stdout.trim(), stderr).toBe(`${examples.length} passed, 0 failed`);
    expect(code).toBe(0);
  });
});

describe("checked-in files", () => {
  it("aarts.schema.json equals what the generator produces now (run `pnpm schemas` when this fails)", async () => {
    // A computed specifier: the generator lives outside this package (and outside its tsconfig rootDir).
    const generator = new URL("../../../schemas/scripts/bundles.ts", import.meta.url).href;
    const { bundles, buildMeta } = (await import(/* @vite-ignore */ generator)) as {
      bundles: { file: string; build(): unknown }[];
      buildMeta(this: void): { bundles: Record<string, unknown>; aarts: { hook_points: Record<string, unknown> } };
    };
    const entry = bundles.find((b) => b.file === "aarts.schema.json");
    expect(entry).toBeDefined();
    expect(stableJson(entry!.build())).toBe(readFileSync(bundlePath, "utf8"));
    const meta = buildMeta();
    expect(meta.bundles["aarts.schema.json"]).toEqual({ $id: "urn:ahp:schemas:2.4:aarts" });
    expect(Object.keys(meta.aarts.hook_points)).toEqual([...HOOK_POINTS]);
    expect(meta.aarts.hook_points.PreToolUse).toEqual({
      number: 10,
      blocking: "required",
      event: "aarts.schema.json#/$defs/PreToolUseEvent",
      ahp: { event_type: "pre_action", form: "request", action_type: "tool_call", capability: "pre_action" },
    });
    expect(stableJson(meta)).toBe(readFileSync(join(schemasDir, "meta.json"), "utf8"));
  });

  it("every hook's AHP route in the catalog matches the message the bridge builds", () => {
    for (const hook of HOOK_POINTS) {
      const route = HOOK_CATALOG[hook].ahp;
      const example = examples.find((e) => e.type === `${hook}Event` && e.expected === "valid")!;
      const { kind, params } = toAhpEvent(example.value as never);
      expect(kind).toBe(route.kind);
      expect(params.event_type).toBe(route.eventType);
      if (route.discriminator) expect(params.payload[route.discriminator.key]).toBe(route.discriminator.value);
    }
  });
});
