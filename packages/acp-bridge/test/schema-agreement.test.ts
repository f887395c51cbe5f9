/**
 * The acp-bridge example corpus (`schemas/examples/acp-bridge/<Type>/{valid,invalid}/*.json`)
 * judged by four implementations that must agree with the expected verdict: the zod schemas,
 * the checked-in bundle `schemas/acp-bridge.schema.json` (ajv draft 2020-12 strict), Python's
 * `jsonschema`, and the bridge's own runtime validator (V1–V17) for the types it covers. Also:
 * the checked-in bundle and meta document equal a fresh generation.
 */
import { execFile, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { stableJson } from "@ahp/core";
import {
  ACP_BRIDGE_SCHEMA_TYPES,
  RESUME_CAUSES,
  validateAwaitResumptionRequest,
  validateResumeConditions,
  validateResumeEnrichment,
  validateSuspendRequest,
} from "../src/index.js";

const schemasDir = fileURLToPath(new URL("../../../schemas/", import.meta.url));
const examplesDir = join(schemasDir, "examples", "acp-bridge");
const bundlePath = join(schemasDir, "acp-bridge.schema.json");
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

const all = { resumeCauses: RESUME_CAUSES };
/** The runtime validator (what the bridge runs on the wire) for the types it covers. */
const RUNTIME: Record<string, (v: unknown) => boolean> = {
  ResumeConditions: (v) => validateResumeConditions(v, "resumeWhen", all).ok && v !== null,
  ResumeTimeoutSpec: (v) => validateResumeConditions({ timeout: v }, "resumeWhen", all).ok && v !== null,
  EventName: (v) => typeof v === "string" && validateResumeConditions({ onEvent: v }, "resumeWhen", all).ok,
  SessionSuspendRequest: (v) => validateSuspendRequest(v, all).ok,
  SessionAwaitResumptionRequest: (v) => validateAwaitResumptionRequest(v, all).ok,
  ResumeEnrichment: (v) => validateResumeEnrichment({ "ahpHarness/resume": v }).ok,
};

const verdictOf = (ok: boolean) => (ok ? "valid" : "invalid");

describe("acp-bridge corpus", () => {
  it("has valid and invalid instances for every request, response and record type", () => {
    expect(examples.length).toBeGreaterThanOrEqual(80);
    for (const type of [
      "ResumeConditions",
      "ResumeTimeoutSpec",
      "SessionSuspendRequest",
      "SessionSuspendResponse",
      "SessionAwaitResumptionRequest",
      "SessionAwaitResumptionResponse",
      "ResumeEnrichment",
      "ResumeOutcome",
      "LifecycleEvent",
      "AgentSuspendCapabilities",
      "ClientSuspendCapabilities",
      "StoredSuspension",
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
    expect(Object.keys(ACP_BRIDGE_SCHEMA_TYPES).sort()).toEqual(Object.keys(bundle.$defs).sort());
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
    const zod = ACP_BRIDGE_SCHEMA_TYPES[example.type]!.safeParse(example.value);
    const validate = validators.get(example.type)!;
    const ajvOk = validate(example.value);
    expect(verdictOf(zod.success), `zod: ${zod.success ? "" : JSON.stringify(zod.error.issues.slice(0, 2))}`).toBe(example.expected);
    expect(verdictOf(ajvOk), `ajv: ${JSON.stringify(validate.errors?.slice(0, 2))}`).toBe(example.expected);
    const runtime = RUNTIME[example.type];
    if (runtime !== undefined) expect(verdictOf(runtime(example.value)), "runtime validator").toBe(example.expected);
  });
});

// A Python process and the schema generator: on a busy machine each takes far longer than usual.
describe("Python jsonschema agrees with the corpus", { timeout: 120_000 }, () => {
  const python = process.env.AHP_PYTHON ?? "/usr/bin/python3";
  const ready = spawnSync(python, ["-c", "import jsonschema; jsonschema.Draft202012Validator"], { timeout: 60_000 }).status === 0;
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

describe("checked-in files", { timeout: 120_000 }, () => {
  it("acp-bridge.schema.json and meta.json equal what the generator produces now (run `pnpm schemas` when this fails)", async () => {
    const generator = new URL("../../../schemas/scripts/bundles.ts", import.meta.url).href;
    const { bundles, buildMeta } = (await import(/* @vite-ignore */ generator)) as {
      bundles: { file: string; build(): unknown }[];
      buildMeta: () => { bundles: Record<string, unknown>; acp_bridge: { methods: Record<string, unknown> } };
    };
    const entry = bundles.find((b) => b.file === "acp-bridge.schema.json");
    expect(entry).toBeDefined();
    expect(stableJson(entry!.build())).toBe(readFileSync(bundlePath, "utf8"));
    const meta = buildMeta();
    expect(meta.bundles["acp-bridge.schema.json"]).toEqual({ $id: "urn:ahp:schemas:2.4:acp-bridge" });
    expect(Object.keys(meta.acp_bridge.methods)).toEqual([
      "session/suspend",
      "_ahpHarness/session/suspend",
      "session/await_resumption",
      "_ahpHarness/session/await_resumption",
      "_ahpHarness/session/suspension",
    ]);
    expect(stableJson(meta)).toBe(readFileSync(join(schemasDir, "meta.json"), "utf8"));
  });
});
