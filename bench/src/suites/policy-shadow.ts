/**
 * Shadow mode's cost: CPU per decision with a candidate policy evaluated beside the enforced one
 * (`createPolicyHandler(policy, { shadow })`), against the same handler without a shadow, in the
 * same run, on the same event mix.
 *
 * Two pairs of rows: decisions through `AhpServer` over an in-memory linked pair (what
 * `ahp serve --shadow-policy` pays per decision; target: at most 2x the CPU of the row without
 * a shadow), and `PolicyEngine.evaluate` alone (the policy work by itself, where the shadow
 * adds a second evaluation of about the same size, so about 2x is expected there).
 *
 * Enforced: the default policy. Candidate: the default policy extended with one extra rule
 * (`extends: default`), which disagrees on one event of the mix.
 */
import { AhpClient, AhpServer, createLinkedPair, type AhpEvent } from "@ahp/core";
import { DEFAULT_POLICY, PolicyEngine, createPolicyHandler } from "@ahp/policy";
import { interleaved, measureSequential, medianMeasurement, type Measurement, type Row, type Suite } from "../harness.js";

const WD = "/home/dev/project";
const CANDIDATE = `version: 1
extends: default
rules:
  - { id: no-curl, events: pre_action, match: { shell: { program: curl } }, action: { decision: block, reason: no network } }
`;

const PAYLOADS: unknown[] = [
  { tool: "bash", arguments: { command: "npm test" }, working_directory: WD },
  { tool: "bash", arguments: { command: "git status --short" }, working_directory: WD },
  { tool: "read_file", arguments: { path: "src/server.ts" }, working_directory: WD },
  { tool: "bash", arguments: { command: "ls -la src && cat package.json | jq .name" }, working_directory: WD },
  { tool: "write_file", arguments: { path: "src/parser.ts", content: "export const x = 1;\n" }, working_directory: WD },
  { tool: "bash", arguments: { command: "rm -rf /" }, working_directory: WD },
  { tool: "bash", arguments: { command: "curl -s https://example.com/status" }, working_directory: WD },
  { tool: "bash", arguments: { command: "git push origin main" }, working_directory: WD },
  { tool: "write_file", arguments: { path: "/etc/hosts", content: "x" }, working_directory: WD },
  { tool: "bash", arguments: { command: 'git commit -m "parser: enforce batch limit"' }, working_directory: WD },
];

let n = 0;
const event = (): AhpEvent => ({
  event_type: "pre_action",
  session_id: `s${n % 4}`,
  agent_id: "a",
  timestamp: "2026-06-01T12:00:00Z",
  depth: 0,
  payload: PAYLOADS[n++ % PAYLOADS.length],
});

const cpu = (m: Measurement) => (m.cpuUsPerOp === undefined ? "?" : `${m.cpuUsPerOp.toFixed(1)} µs CPU/decision`);

async function serverPair(shadow: boolean, disagreements: { n: number }) {
  const handlers = createPolicyHandler(
    DEFAULT_POLICY,
    shadow ? { shadow: CANDIDATE, onShadowDisagreement: () => void disagreements.n++ } : {},
  );
  const server = new AhpServer({ handlers });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient();
  await client.connect(agentSide);
  return {
    send: () => client.send("pre_action", PAYLOADS[n++ % PAYLOADS.length]),
    async close() {
      await client.close();
      await server.close();
    },
  };
}

export const suite: Suite = {
  name: "policy-shadow",
  async run({ quick }) {
    // Both cases of a pair alternate, round after round (medians kept): they see the same machine load.
    const rounds = quick ? 2 : 7;
    const opts = { iterations: quick ? 300 : 5_000, runs: 1, warmup: quick ? 100 : 2_000, sampleLatency: false };
    const disagreements = { n: 0 };

    const plain = await serverPair(false, disagreements);
    const shadowed = await serverPair(true, disagreements);
    let server: Record<"without" | "with", Measurement>;
    try {
      server = await interleaved(
        { without: () => measureSequential(plain.send, opts), with: () => measureSequential(shadowed.send, opts) },
        rounds,
        medianMeasurement,
      );
    } finally {
      await plain.close();
      await shadowed.close();
    }
    if (disagreements.n === 0) throw new Error("the shadow never disagreed: the candidate was not evaluated");
    const { without, with: withShadow } = server;

    const engineOpts = { ...opts, iterations: quick ? 1_000 : 20_000, warmup: quick ? 200 : 5_000 };
    const engine = new PolicyEngine(DEFAULT_POLICY);
    const engineShadow = new PolicyEngine(DEFAULT_POLICY, { shadow: CANDIDATE });
    const alone = await interleaved(
      {
        without: () => measureSequential(() => engine.evaluate(event()), engineOpts),
        with: () => measureSequential(() => engineShadow.evaluate(event()), engineOpts),
      },
      rounds,
      medianMeasurement,
    );
    const { without: engineWithout, with: engineWith } = alone;

    const cpuRatio = (m: Measurement, floor: Measurement) => (m.cpuUsPerOp ?? Number.NaN) / (floor.cpuUsPerOp ?? Number.NaN);
    const rows: Row[] = [
      { suite: "policy-shadow", case: "AhpServer + policy handler, no shadow (floor)", measurement: without, note: cpu(without) },
      {
        suite: "policy-shadow",
        case: "AhpServer + policy handler + shadow policy",
        measurement: withShadow,
        floor: without,
        ratio: cpuRatio(withShadow, without),
        target: "<= 2x CPU per decision",
        note: `${cpu(withShadow)}; ratio is CPU per decision over the floor row`,
      },
      { suite: "policy-shadow", case: "PolicyEngine.evaluate, no shadow (floor)", measurement: engineWithout, note: cpu(engineWithout) },
      {
        suite: "policy-shadow",
        case: "PolicyEngine.evaluate + shadow policy",
        measurement: engineWith,
        floor: engineWithout,
        ratio: cpuRatio(engineWith, engineWithout),
        note: `${cpu(engineWith)}; policy work alone, a second evaluation: about 2x expected`,
      },
    ];
    return rows;
  },
};
