/**
 * Builds every file under `schemas/vectors/` that is generated: the vector files, the harness
 * profile, the coverage map, the JSON Schema of the format and the counts in the README.
 * `generate.ts` writes them; the drift test compares them with the checked-in files.
 */
import { z } from "zod";
import { CHECKLIST } from "../../../packages/conformance/src/checklist.js";
import { NOT_COVERED } from "./coverage.js";
import { ClientCaseSchema, HarnessCaseSchema, VECTOR_FORMAT_VERSION, checkPattern, type ClientCase, type HarnessCase } from "./format.js";
import { profileDocument } from "./profile.js";
import batch from "./harness/batch.js";
import envelope from "./harness/envelope.js";
import events from "./harness/events.js";
import framing from "./harness/framing.js";
import handshake from "./harness/handshake.js";
import query from "./harness/query.js";
import runContracts from "./harness/run-contracts.js";
import typed from "./harness/typed.js";
import clientCases from "./client/index.js";

/** Harness areas in report order. */
export const HARNESS_AREAS: ReadonlyArray<readonly [string, HarnessCase[]]> = [
  ["envelope", envelope],
  ["framing", framing],
  ["handshake", handshake],
  ["events", events],
  ["typed", typed],
  ["run-contracts", runContracts],
  ["query", query],
  ["batch", batch],
];

export function allHarnessCases(): HarnessCase[] {
  return HARNESS_AREAS.flatMap(([, cases]) => cases);
}

export function allClientCases(): ClientCase[] {
  return clientCases;
}

/** Checks the cases beyond their zod shape; throws with every problem. */
export function validateCases(harness: HarnessCase[], client: ClientCase[]): void {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const c of harness) {
    const parsed = HarnessCaseSchema.safeParse(c);
    if (!parsed.success) problems.push(`${c.id}: ${parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`);
    if (ids.has(c.id)) problems.push(`${c.id}: duplicate id`);
    ids.add(c.id);
    const last = c.steps[c.steps.length - 1]!;
    if (c.outcomes !== undefined && last.expect !== undefined) problems.push(`${c.id}: the last step has expect and the case has outcomes`);
    if (c.outcomes === undefined && last.expect === undefined) problems.push(`${c.id}: the last step needs expect (or the case outcomes)`);
    c.steps.slice(0, -1).forEach((s, i) => {
      if (s.expect === undefined || s.expect.length === 0) problems.push(`${c.id}: step ${i + 1} must expect at least one response`);
    });
    const expectations = [...c.steps.flatMap((s) => s.expect ?? []), ...(c.outcomes ?? []).flatMap((o) => o.expect)];
    for (const e of expectations) problems.push(...checkPattern(e).map((p) => `${c.id}: ${p}`));
    // Response ids must be unique within one step or outcome (null ids excepted: parse errors).
    for (const list of [...c.steps.map((s) => s.expect ?? []), ...(c.outcomes ?? []).map((o) => o.expect)]) {
      const seen = new Set<unknown>();
      for (const r of list as Array<{ id?: unknown }>) {
        if (r.id === null) continue;
        if (seen.has(r.id))
          problems.push(`${c.id}: two expected responses with id ${typeof r.id === "bigint" ? r.id : JSON.stringify(r.id)}`);
        seen.add(r.id);
      }
    }
  }
  for (const c of client) {
    const parsed = ClientCaseSchema.safeParse(c);
    if (!parsed.success) problems.push(`${c.id}: ${parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`);
    if (ids.has(c.id)) problems.push(`${c.id}: duplicate id`);
    ids.add(c.id);
    const calls = new Set<string>();
    for (const s of [...c.steps, ...(c.branches ?? []).flatMap((b) => b.steps)]) {
      if ("call" in s) calls.add(s.as);
      if ("expect_sent" in s) problems.push(...checkPattern(s.expect_sent).map((p) => `${c.id}: expect_sent ${p}`));
      if ("reply" in s) problems.push(...checkPattern(s.reply, "$", true).map((p) => `${c.id}: reply ${p}`));
      if ("expect_returns" in s) problems.push(...checkPattern(s.expect_returns.value).map((p) => `${c.id}: expect_returns ${p}`));
      const named =
        "expect_returns" in s
          ? s.expect_returns.call
          : "expect_fails" in s
            ? s.expect_fails.call
            : "expect_pending" in s
              ? s.expect_pending
              : undefined;
      if (named !== undefined && !calls.has(named)) problems.push(`${c.id}: ${named} is not a call made before`);
    }
  }
  if (problems.length > 0) throw new Error(`invalid vectors:\n${problems.join("\n")}`);
}

/** A bigint in a case (an integer id past 2^53) is written as the JSON number it stands for, digit for digit. */
const BIGINT = "\u0000bigint:";
const withBigints = (_key: string, value: unknown) => (typeof value === "bigint" ? `${BIGINT}${value}` : value);
const jsonl = (cases: unknown[]) =>
  cases.map((c) => JSON.stringify(c, withBigints).replace(/"\\u0000bigint:(-?\d+)"/g, "$1")).join("\n") + "\n";
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Checklist item -> the vectors that check it. */
export function coverage(harness: HarnessCase[], client: ClientCase[]) {
  const items: Record<string, unknown> = {};
  for (const item of CHECKLIST) {
    const h = harness.filter((c) => c.checklist.includes(item.n)).map((c) => c.id);
    const cl = client.filter((c) => c.checklist.includes(item.n)).map((c) => c.id);
    const reason = NOT_COVERED[item.n];
    items[String(item.n)] = {
      tags: item.tags,
      text: item.text,
      ...(h.length > 0 ? { harness: h } : {}),
      ...(cl.length > 0 ? { client: cl } : {}),
      ...(reason === undefined ? {} : { not_covered: reason }),
    };
  }
  return { format: VECTOR_FORMAT_VERSION, items };
}

function vectorJsonSchema(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(HarnessCaseSchema, { id: "HarnessCase" });
  registry.add(ClientCaseSchema, { id: "ClientCase" });
  const { schemas } = z.toJSONSchema(registry, { target: "draft-2020-12", io: "input", uri: (id) => `#/$defs/${id}` });
  const $defs: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = s as Record<string, unknown>;
    $defs[name] = rest;
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "urn:ahp:schemas:2.4:vectors",
    title: `AHP conformance vectors, format ${VECTOR_FORMAT_VERSION}`,
    description:
      "One line of a vector file: a HarnessCase (harness/*.jsonl) or a ClientCase (client/*.jsonl). Patterns are JSON values with matchers (README.md: Matching).",
    $defs,
  };
}

const COUNTS_START = "<!-- counts:start -->";
const COUNTS_END = "<!-- counts:end -->";

function countsSection(harness: HarnessCase[], client: ClientCase[]): string {
  const byArea = new Map<string, number>();
  for (const c of harness) byArea.set(c.area, (byArea.get(c.area) ?? 0) + 1);
  const clientByArea = new Map<string, number>();
  for (const c of client) clientByArea.set(c.area, (clientByArea.get(c.area) ?? 0) + 1);
  const quirks = harness.filter((c) => c.outcomes !== undefined).length;
  const cov = coverage(harness, client).items as Record<
    string,
    { harness?: string[]; client?: string[]; not_covered?: string; tags: string[] }
  >;
  const covered = Object.entries(cov).filter(([, v]) => v.harness !== undefined || v.client !== undefined);
  const lines = [
    COUNTS_START,
    `**${harness.length} harness vectors** (${quirks} with alternative outcomes) and **${client.length} client vectors**; they check ${covered.length} of the 93 checklist items (the others are listed in \`coverage.json\` with the reason).`,
    "",
    "| file | vectors |",
    "| --- | --- |",
    ...[...byArea].map(([a, n]) => `| \`harness/${a}.jsonl\` | ${n} |`),
    ...[...clientByArea].map(([a, n]) => `| \`client/${a}.jsonl\` | ${n} |`),
    "",
    "| checklist items | vectors per item |",
    "| --- | --- |",
    ...Object.entries(cov)
      .filter(([, v]) => v.harness !== undefined || v.client !== undefined)
      .reduce<string[][]>((rows, [n, v]) => {
        const count = (v.harness?.length ?? 0) + (v.client?.length ?? 0);
        const last = rows[rows.length - 1];
        if (last !== undefined && last[1] === String(count) && Number(last[2]) === Number(n) - 1) {
          last[0] = `${last[0]!.split("–")[0]}–${n}`;
          last[2] = n;
        } else rows.push([n, String(count), n]);
        return rows;
      }, [])
      .map(([range, count]) => `| ${range} | ${count} |`),
    COUNTS_END,
  ];
  return lines.join("\n");
}

/** Every generated file, by path relative to `schemas/vectors/`. `readme` is the current README text. */
export function buildVectorFiles(readme: string): Map<string, string> {
  const harness = allHarnessCases();
  const client = allClientCases();
  validateCases(harness, client);
  const files = new Map<string, string>();
  for (const [areaName, cases] of HARNESS_AREAS) files.set(`harness/${areaName}.jsonl`, jsonl(cases));
  const clientAreas = [...new Set(client.map((c) => c.area))];
  for (const a of clientAreas) files.set(`client/${a}.jsonl`, jsonl(client.filter((c) => c.area === a)));
  files.set("harness/profile.json", pretty(profileDocument()));
  files.set("coverage.json", pretty(coverage(harness, client)));
  files.set("vector.schema.json", pretty(vectorJsonSchema()));
  const start = readme.indexOf(COUNTS_START);
  const end = readme.indexOf(COUNTS_END);
  if (start < 0 || end < start) throw new Error(`schemas/vectors/README.md needs the markers ${COUNTS_START} … ${COUNTS_END}`);
  files.set("README.md", readme.slice(0, start) + countsSection(harness, client) + readme.slice(end + COUNTS_END.length));
  return files;
}
