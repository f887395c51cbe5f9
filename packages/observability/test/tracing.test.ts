import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import {
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type ContextManager,
  type Exception,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { annotate } from "@ahp/core";
import { spanContextFromMetadata, withObservability, withTracing, createAhpMetrics } from "../src/index.js";

/** An AsyncLocalStorage context manager (what the SDK's context-async-hooks package provides). */
class TestContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** A recording span built on the API's interfaces only. */
class TestSpan implements Span {
  attributes: Attributes = {};
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  exceptions: Exception[] = [];
  ended = false;
  constructor(
    readonly name: string,
    readonly context: SpanContext,
    readonly parent: SpanContext | undefined,
    readonly kind: number | undefined,
  ) {}
  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {
    this.ended = true;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(exception: Exception): void {
    this.exceptions.push(exception);
  }
}

class TestTracer implements Tracer {
  readonly spans: TestSpan[] = [];
  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const parent = trace.getSpanContext(ctx);
    const span = new TestSpan(
      name,
      { traceId: parent?.traceId ?? randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex"), traceFlags: 1 },
      parent,
      options.kind,
    );
    if (options.attributes !== undefined) span.setAttributes(options.attributes);
    this.spans.push(span);
    return span;
  }
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const span = this.startSpan(name);
    return context.with(trace.setSpan(context.active(), span), () => fn(span)) as ReturnType<F>;
  }
}

class TestProvider implements TracerProvider {
  readonly tracer = new TestTracer();
  getTracer(): Tracer {
    return this.tracer;
  }
}

const manager = new TestContextManager();
beforeAll(() => {
  context.setGlobalContextManager(manager);
});
afterAll(() => {
  context.disable();
});

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connect(handlers: AhpServerHandlers) {
  const server = new AhpServer({ handlers });
  const [a, h] = createLinkedPair();
  await server.connect(h);
  const client = new AhpClient({ sessionId: "sess-7", agentId: "agent-7" });
  await client.connect(a);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN = "00f067aa0ba902b7";

describe("spans per decision", () => {
  it("parents the decision span on the W3C ids in event metadata; handler spans become its children", async () => {
    const provider = new TestProvider();
    const client = await connect(
      withTracing(
        {
          onEvent: (event) => {
            // A span started inside the handler (e.g. by the policy engine) must be a child.
            trace.getTracer("policy").startSpan("policy.evaluate").end();
            provider.tracer.startSpan("inner").end();
            annotate(event, { ruleId: "shell.rm" });
            return { decision: "block", reason: "no" };
          },
        },
        { tracerProvider: provider },
      ),
    );
    await client.send("pre_action", { tool_name: "rm" }, { depth: 1, metadata: { trace_id: TRACE_ID, parent_span_id: PARENT_SPAN } });
    const [decision, inner] = provider.tracer.spans;
    expect(decision).toBeDefined();
    expect(decision!.name).toBe("ahp.decision pre_action");
    expect(decision!.kind).toBe(1); // SpanKind.SERVER
    expect(decision!.parent).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_SPAN, isRemote: true, traceFlags: 1 });
    expect(decision!.context.traceId).toBe(TRACE_ID);
    expect(decision!.attributes).toMatchObject({
      "ahp.event_type": "pre_action",
      "ahp.session_id": "sess-7",
      "ahp.agent_id": "agent-7",
      "ahp.depth": 1,
      "ahp.form": "request",
      "ahp.decision": "block",
      "ahp.rule_id": "shell.rm",
    });
    expect(decision!.ended).toBe(true);
    expect(inner!.parent).toMatchObject({ traceId: TRACE_ID, spanId: decision!.context.spanId });
  });

  it("accepts traceparent, ignores invalid ids, and uses the active context otherwise", async () => {
    expect(spanContextFromMetadata({ traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-00` })).toMatchObject({
      traceId: TRACE_ID,
      spanId: PARENT_SPAN,
      traceFlags: 0,
    });
    expect(spanContextFromMetadata({ trace_id: "0".repeat(32), parent_span_id: PARENT_SPAN })).toBeUndefined();
    expect(spanContextFromMetadata({ trace_id: TRACE_ID })).toBeUndefined();
    expect(spanContextFromMetadata({ trace_id: TRACE_ID, parent_span_id: "xyz" })).toBeUndefined();
    expect(spanContextFromMetadata({ trace_id: TRACE_ID.toUpperCase(), parent_span_id: PARENT_SPAN, trace_flags: "00" })).toMatchObject({
      traceId: TRACE_ID,
      traceFlags: 0,
    });
    expect(spanContextFromMetadata(null)).toBeUndefined();

    const provider = new TestProvider();
    const client = await connect(
      withTracing({ onEvent: () => ({ decision: "allow" }), onNotification: () => undefined }, { tracerProvider: provider }),
    );
    await client.send("pre_action", { tool_name: "ls" }, { metadata: { trace_id: "not-hex", parent_span_id: PARENT_SPAN } });
    expect(provider.tracer.spans[0]!.parent).toBeUndefined();
    expect(provider.tracer.spans[0]!.attributes["ahp.decision"]).toBe("allow");
  });

  it("marks failures as errors (redacted) and rethrows so the server fails closed", async () => {
    const provider = new TestProvider();
    const secret = ["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"].join("");
    const client = await connect(
      withTracing(
        {
          onEvent: () => {
            throw new Error(`upstream rejected ${secret}`);
          },
        },
        { tracerProvider: provider },
      ),
    );
    await expect(client.send("pre_action", { tool_name: "x" })).rejects.toMatchObject({ code: -32603 });
    const span = provider.tracer.spans[0]!;
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "upstream rejected [REDACTED:stripe_key]" });
    expect(span.attributes["ahp.decision"]).toBe("error");
    expect(JSON.stringify(span.exceptions)).not.toContain(secret);
    expect(span.ended).toBe(true);
  });

  it("is a no-op without an SDK (global no-op provider) and keeps results unchanged", async () => {
    const client = await connect(withTracing({ onEvent: () => ({ decision: "modify", modified_payload: { a: 1 } }) }));
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({ decision: "modify", modified_payload: { a: 1 } });
  });

  it("withObservability composes spans, metrics and logs on one handler set", async () => {
    const provider = new TestProvider();
    const metrics = createAhpMetrics();
    const client = await connect(
      withObservability({ onEvent: () => ({ decision: "allow" }) }, { tracing: { tracerProvider: provider }, metrics }),
    );
    await client.send("pre_prompt", { prompt: "hi" });
    expect(provider.tracer.spans.map((s) => s.name)).toEqual(["ahp.decision pre_prompt"]);
    expect(await metrics.metrics()).toContain('ahp_events_total{event_type="pre_prompt",decision="allow"} 1');
  });
});
