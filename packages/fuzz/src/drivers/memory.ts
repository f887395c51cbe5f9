/**
 * The in-process variant: the same harness composition as `ahp serve` (built-in default policy,
 * metrics, audit log, fail-closed handler failures) on an `AhpServer` in this process, fed over
 * core's in-memory pair. Here the oracle can look at `Object.prototype` itself.
 */
import { AhpServer, createLinkedPair, stringifyMessage, type InMemoryTransport } from "@ahp/core";
import { openAuditLog, withAudit, type AuditKey, type AuditLog } from "@ahp/audit";
import { createAhpMetrics, withMetrics } from "@ahp/observability";
import { DEFAULT_POLICY, PolicyEngine, composeHandlers } from "@ahp/policy";
import { canaries, checkCanaries } from "../canary.js";
import { expectFrame, matchAnswers, type ExpectedAnswer } from "../expect.js";
import type { FuzzInput } from "../mutate.js";
import { prototypeProblems, snapshotPrototypes, type PrototypeSnapshot } from "../prototypes.js";
import { DEFAULT_BATCH_TIMEOUT_MS, type BatchResult, type Driver } from "./types.js";

export const IN_PROCESS_HARNESS_NAME = "ahp-harness";

export class MemoryDriver implements Driver {
  readonly transport = "memory" as const;
  readonly server: AhpServer;
  readonly audit: AuditLog;
  readonly #agent: InMemoryTransport;
  readonly #harnessSide: InMemoryTransport;
  readonly #snapshot: PrototypeSnapshot;
  readonly #timeoutMs: number;
  #answers: unknown[] = [];
  #wake: (() => void) | undefined;

  private constructor(server: AhpServer, audit: AuditLog, agent: InMemoryTransport, harnessSide: InMemoryTransport, timeoutMs: number) {
    this.server = server;
    this.audit = audit;
    this.#agent = agent;
    this.#harnessSide = harnessSide;
    this.#timeoutMs = timeoutMs;
    this.#snapshot = snapshotPrototypes();
    agent.onmessage = (message) => {
      // As a byte transport would carry it: an id beyond 2^53 travels as its original digits.
      this.#answers.push(JSON.parse(stringifyMessage(message)));
      this.#wake?.();
    };
  }

  /** Composes the harness as `ahp serve` does, with its audit log at `auditFile`. */
  static async start(options: { auditFile: string; key: AuditKey; includePayloads?: boolean; timeoutMs?: number }): Promise<MemoryDriver> {
    const metrics = createAhpMetrics();
    const engine = new PolicyEngine(DEFAULT_POLICY);
    const audit = await openAuditLog({ path: options.auditFile, key: options.key });
    const handlers = withAudit(
      withMetrics(composeHandlers(engine), metrics),
      audit,
      options.includePayloads ? { includePayloads: true } : {},
    );
    const server = new AhpServer({
      harnessInfo: { name: IN_PROCESS_HARNESS_NAME, version: "0.0.0" },
      config: { timeout_ms: 10_000, batch_size: 100, max_depth: 10 },
      handlerFailure: "decision",
      handlers,
    });
    const [agent, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    await agent.start();
    return new MemoryDriver(server, audit, agent, harnessSide, options.timeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS);
  }

  async run(units: readonly FuzzInput[], tag: string): Promise<BatchResult> {
    const started = performance.now();
    const expected: ExpectedAnswer[] = [];
    this.#answers = [];
    for (const unit of units) {
      const e = expectFrame(unit.bytes, { websocket: false });
      if (e.kind === "answers") expected.push(...e.answers);
      this.#harnessSide.injectText(Buffer.from(unit.bytes).toString("utf8"));
    }
    const list = canaries(tag, IN_PROCESS_HARNESS_NAME);
    for (const c of list) this.#harnessSide.injectText(c.text);
    const want = expected.length + list.length;
    const deadline = Date.now() + this.#timeoutMs;
    while (this.#answers.length < want && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, Math.max(1, Math.min(1000, deadline - Date.now()))).unref();
      });
      this.#wake = undefined;
    }
    const checked = checkCanaries(list, this.#answers);
    const mismatches = matchAnswers(expected, checked.rest);
    const problems = [...checked.problems, ...mismatches, ...prototypeProblems(this.#snapshot)];
    return {
      problems,
      unanswered: mismatches.filter((p) => p.startsWith("no answer")).length,
      elapsedMs: performance.now() - started,
    };
  }

  async close(): Promise<void> {
    await this.#agent.close();
    await this.server.close();
    await this.audit.close();
  }
}
