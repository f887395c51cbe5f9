/** Shared state of one `describeConformance` call: harness lifetimes, connections, registration helpers. */
import { AhpClient, type AhpClientOptions } from "@ahp/core";
import { afterAll, afterEach, beforeAll, it, type TestContext } from "vitest";
import type {
  ConformanceExtraCheck,
  ConformanceFactory,
  ConformanceHarness,
  ConformanceOptions,
  ConformanceServerConfig,
  RawChannel,
} from "../types.js";
import { WireClient } from "../wire.js";

export type ItemFn = (ctx: TestContext) => Promise<void>;

export interface ItemOptions {
  /** The check applies only to this transport kind. */
  only?: "stream" | "http";
}

/** What a `describeConformance` call registered (filled while vitest collects the suite). */
export interface ConformanceCoverage {
  /** Checklist numbers with at least one registered, not skipped, test. */
  readonly items: Set<number>;
  /** Extra checks registered and not skipped. */
  readonly extras: Set<ConformanceExtraCheck>;
  /** Checklist numbers registered as skipped, with the reason. */
  readonly skipped: Map<number | ConformanceExtraCheck, string>;
}

export class SuiteEnv {
  readonly kind: "stream" | "http";
  readonly timeoutMs: number;
  /** Per-test vitest timeout. */
  readonly testTimeoutMs: number;
  readonly coverage: ConformanceCoverage = { items: new Set(), extras: new Set(), skipped: new Map() };
  readonly #cleanups: Array<() => Promise<void>> = [];
  readonly #shared = new Map<ConformanceHarness, Promise<WireClient>>();
  #sessions = 0;
  readonly #run = Math.random().toString(36).slice(2, 8);

  constructor(
    readonly factory: ConformanceFactory,
    readonly options: ConformanceOptions,
  ) {
    this.kind = options.kind;
    this.timeoutMs = options.responseTimeoutMs ?? 5000;
    this.testTimeoutMs = Math.max(20_000, this.timeoutMs * 4);
  }

  /** Registers the per-test cleanup; call once inside the top-level describe. */
  installHooks(): void {
    afterEach(async () => {
      const cleanups = this.#cleanups.splice(0).reverse();
      for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    });
  }

  /** A session id unique to this run and test, so that records of tests sharing a harness never mix. */
  session(label: string): string {
    return `conf-${this.#run}-${label}-${++this.#sessions}`;
  }

  #skipReason(key: number | ConformanceExtraCheck, only?: "stream" | "http"): string | undefined {
    const na = this.options.notApplicable?.[key];
    if (na !== undefined) return `not applicable: ${na}`;
    if (only !== undefined && only !== this.kind) return `${only === "http" ? "HTTP" : "stream"} transports only`;
    return undefined;
  }

  /** Registers a test for checklist item `n`, titled `§17.<n> <title>`. */
  item(n: number, title: string, fn: ItemFn, options: ItemOptions = {}): void {
    const full = `§17.${n} ${title}`;
    const skip = this.#skipReason(n, options.only);
    if (skip !== undefined) {
      if (!this.coverage.items.has(n)) this.coverage.skipped.set(n, skip);
      it.skip(`${full} — ${skip}`, () => undefined);
      return;
    }
    this.coverage.items.add(n);
    this.coverage.skipped.delete(n);
    it(full, fn, this.testTimeoutMs);
  }

  /** Registers a test for an extra (unnumbered) check. */
  extra(id: ConformanceExtraCheck, title: string, fn: ItemFn, options: ItemOptions = {}): void {
    const full = `[${id}] ${title}`;
    const skip = this.#skipReason(id, options.only);
    if (skip !== undefined) {
      if (!this.coverage.extras.has(id)) this.coverage.skipped.set(id, skip);
      it.skip(`${full} — ${skip}`, () => undefined);
      return;
    }
    this.coverage.extras.add(id);
    this.coverage.skipped.delete(id);
    it(full, fn, this.testTimeoutMs);
  }

  /** Starts a harness with `config` for the enclosing describe block; returns its getter. */
  useHarness(config: ConformanceServerConfig): () => ConformanceHarness {
    let harness: ConformanceHarness | undefined;
    beforeAll(async () => {
      harness = await this.factory(config);
    }, this.testTimeoutMs);
    afterAll(async () => {
      const current = harness;
      harness = undefined;
      if (current === undefined) return;
      const shared = this.#shared.get(current);
      this.#shared.delete(current);
      if (shared !== undefined) await shared.then((wire) => wire.close()).catch(() => undefined);
      await current.close();
    }, this.testTimeoutMs);
    return () => {
      if (harness === undefined) throw new Error("the conformance harness is not running");
      return harness;
    };
  }

  /** Runs `cleanup` after the current test. */
  defer(cleanup: () => Promise<void> | void): void {
    this.#cleanups.push(async () => {
      await cleanup();
    });
  }

  /**
   * A message-level client: on a fresh connection closed after the test, or (with
   * `shareConnections`, unless `fresh`) on the harness's shared connection.
   */
  async wire(harness: ConformanceHarness, options: { fresh?: boolean } = {}): Promise<WireClient> {
    if (this.options.shareConnections === true && options.fresh !== true) {
      let shared = this.#shared.get(harness);
      if (shared !== undefined && (await shared.catch(() => undefined))?.closed !== false) shared = undefined;
      if (shared === undefined) {
        shared = harness.connect().then((transport) => WireClient.open(transport, { timeoutMs: this.timeoutMs }));
        this.#shared.set(harness, shared);
      }
      return shared;
    }
    const transport = await harness.connect();
    const wire = await WireClient.open(transport, { timeoutMs: this.timeoutMs });
    this.defer(() => wire.close());
    return wire;
  }

  /** Our AhpClient on a fresh connection (handshake done unless `handshake: false`), closed after the test. */
  async client(
    harness: ConformanceHarness,
    options: AhpClientOptions = {},
    connect: { handshake?: boolean; capabilities?: string[] } = {},
  ): Promise<AhpClient> {
    const transport = await harness.connect();
    const client = new AhpClient({ timeoutMs: this.timeoutMs, ...options });
    this.defer(() => client.close());
    await client.connect(transport, connect);
    return client;
  }

  /** The harness's raw channel, closed after the test; skips the test when there is none. */
  async raw(harness: ConformanceHarness, ctx: TestContext): Promise<RawChannel> {
    if (harness.connectRaw === undefined) ctx.skip("the harness offers no raw channel (connectRaw)");
    const raw = await harness.connectRaw();
    this.defer(() => raw.close());
    return raw;
  }

  /** Framing of a raw channel on this transport kind. */
  framing(raw: RawChannel): "ndjson" | "message" | "http" {
    if (this.kind === "http") return "http";
    return raw.framing ?? "ndjson";
  }
}
