/**
 * Validation of every frame the host sends against the vendored JSON Schemas (2020-12), with the
 * two relaxations of the fixtures README: the dangling `{"$ref":"#/$defs/"}` entry of
 * `StateAction` is dropped, and `SessionStatus` is a non-negative integer (a bitset). Also checks
 * that no optional field is `null` and that host-originated envelopes carry no `origin` key.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { FIXTURE_DIR } from "./fixtures.js";

type Schema = { $id: string; $defs: Record<string, unknown> };

function load(name: string): Schema {
  const schema = JSON.parse(readFileSync(`${FIXTURE_DIR}schema/${name}.schema.json`, "utf8")) as Schema;
  const defs = schema.$defs;
  const stateAction = defs.StateAction as { oneOf?: Array<{ $ref?: string }> } | undefined;
  if (stateAction?.oneOf !== undefined) stateAction.oneOf = stateAction.oneOf.filter((entry) => entry.$ref !== "#/$defs/");
  if (defs.SessionStatus !== undefined) defs.SessionStatus = { type: "integer", minimum: 0, description: "bitset (relaxed)" };
  return schema;
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const schemas: Record<string, Schema> = {};
for (const name of ["state", "actions", "commands", "notifications", "errors"]) {
  schemas[name] = load(name);
  ajv.addSchema(schemas[name]);
}

const cache = new Map<string, ValidateFunction>();
function validator(file: string, def: string): ValidateFunction {
  const key = `${file}#${def}`;
  let fn = cache.get(key);
  if (fn === undefined) {
    fn = ajv.getSchema(`${schemas[file]!.$id}#/$defs/${def}`);
    if (fn === undefined) throw new Error(`no schema definition ${key}`);
    cache.set(key, fn);
  }
  return fn;
}

export function validateDef(file: string, def: string, value: unknown): string | undefined {
  const fn = validator(file, def);
  if (fn(value)) return undefined;
  return `${def}: ${ajv.errorsText(fn.errors, { separator: "; " })}`;
}

const RESULT_DEFS: Record<string, string | undefined> = {
  initialize: "InitializeResult",
  subscribe: "SubscribeResult",
  listSessions: "ListSessionsResult",
  fetchTurns: "FetchTurnsResult",
  completions: "CompletionsResult",
};

const NOTIFICATION_DEFS: Record<string, [string, string]> = {
  action: ["actions", "ActionEnvelope"],
  "root/sessionAdded": ["notifications", "SessionAddedParams"],
  "root/sessionRemoved": ["notifications", "SessionRemovedParams"],
  "root/sessionSummaryChanged": ["notifications", "SessionSummaryChangedParams"],
  "otlp/exportLogs": ["notifications", "OtlpExportLogsParams"],
};

function findNull(value: unknown, path: string): string | undefined {
  if (value === null) return path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNull(value[i], `${path}[${i}]`);
      if (hit !== undefined) return hit;
    }
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const hit = findNull(v, `${path}.${k}`);
      if (hit !== undefined) return hit;
    }
  }
  return undefined;
}

/**
 * Problems of one frame sent by the host, or an empty list. `method` is the method of the request a
 * response answers.
 */
export function frameProblems(frame: Record<string, unknown>, method?: string): string[] {
  const problems: string[] = [];
  if (frame.jsonrpc !== "2.0") problems.push("jsonrpc is not 2.0");
  if (typeof frame.method === "string") {
    const def = NOTIFICATION_DEFS[frame.method];
    if (def === undefined) problems.push(`unexpected notification ${frame.method}`);
    else {
      const p = validateDef(def[0], def[1], frame.params);
      if (p !== undefined) problems.push(p);
    }
    const nul = findNull(frame.params, "params");
    if (nul !== undefined) problems.push(`null at ${nul}`);
    if (frame.method === "action") {
      const env = frame.params as { origin?: unknown };
      if ("origin" in env && env.origin === undefined) problems.push("origin key present without a value");
    }
    return problems;
  }
  if ("error" in frame) {
    const e = frame.error as { code?: unknown; message?: unknown };
    if (!Number.isInteger(e.code) || typeof e.message !== "string") problems.push("malformed error object");
    return problems;
  }
  if (method === "ping") {
    if (frame.result !== null) problems.push("ping result is not null");
    return problems;
  }
  const nul = findNull(frame.result, "result");
  if (nul !== undefined) problems.push(`null at ${nul}`);
  if (method === "reconnect") {
    const r = frame.result as { type?: string };
    const p = validateDef("commands", r.type === "replay" ? "ReconnectReplayResult" : "ReconnectSnapshotResult", frame.result);
    if (p !== undefined) problems.push(p);
    return problems;
  }
  const def = method === undefined ? undefined : RESULT_DEFS[method];
  if (def !== undefined) {
    const p = validateDef("commands", def, frame.result);
    if (p !== undefined) problems.push(p);
  }
  return problems;
}
