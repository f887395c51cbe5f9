/** `describeConformance`: the cross-transport conformance suite as one vitest `describe` block. */
import { describe } from "vitest";
import type { ConformanceFactory, ConformanceOptions } from "../types.js";
import { registerClientChecks } from "./client.js";
import { registerConfiguredChecks } from "./configured.js";
import { SuiteEnv, type ConformanceCoverage } from "./env.js";
import { registerEnvelopeChecks } from "./envelope.js";
import { registerEventChecks } from "./events.js";
import { registerExtraChecks } from "./extras.js";
import { registerQueryAndBatchChecks } from "./query-batch.js";

export type { ConformanceCoverage } from "./env.js";

/**
 * Registers the AHP 2.4 conformance suite for one transport. Every test is titled with its
 * checklist number (`§17.<n> …`) or, for checks beyond the checklist, `[<id>] …`.
 *
 * `factory(config)` starts a scripted harness (`createConformanceServer(config)` served over the
 * transport) and returns how to reach it; the suite starts one harness per configuration it needs
 * and opens a fresh connection per test. Returns what was registered (filled while vitest collects
 * the suite, so read it inside a test).
 */
export function describeConformance(name: string, factory: ConformanceFactory, options: ConformanceOptions): ConformanceCoverage {
  const env = new SuiteEnv(factory, options);
  describe(name, () => {
    env.installHooks();
    describe("harness [S]: default configuration", () => {
      const harness = env.useHarness({});
      describe("envelope, framing and handshake (§17.1–19)", () => registerEnvelopeChecks(env, harness));
      describe("events (§17.20–50)", () => registerEventChecks(env, harness));
      describe("query and batch (§17.51–64)", () => registerQueryAndBatchChecks(env, harness));
      describe("pipelining, limits, cancellation, closing, ordering; HTTP status codes (§17.85–88)", () =>
        registerExtraChecks(env, harness));
    });
    describe("harness [S]: other configurations", () => registerConfiguredChecks(env));
    if (options.clientChecks !== false) registerClientChecks(env);
  });
  return env.coverage;
}
