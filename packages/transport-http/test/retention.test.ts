/**
 * A finished exchange must not keep its call alive through the handler the HTTP stack was given:
 * undici may hold a request's handler after the answer (until its connection's next request), and
 * under load that is long enough for the call's objects to reach the old generation (ADR 0135).
 * The dispatcher here keeps every handler for good, the worst an HTTP stack could do.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, expect, it } from "vitest";
import { Dispatcher, Pool } from "undici";
import { AhpClient, AhpServer } from "@ahp/core";
import { HttpClientTransport, listenHttp } from "@ahp/transport-http";
import { preAction } from "./helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

/** A dispatcher that keeps every handler it was given, and a weak reference to every body chunk it passed on. */
class KeepingDispatcher extends Dispatcher {
  readonly kept: Dispatcher.DispatchHandler[] = [];
  readonly chunks: Array<WeakRef<Buffer>> = [];
  constructor(readonly inner: Dispatcher) {
    super();
  }
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.kept.push(handler);
    const chunks = this.chunks;
    return this.inner.dispatch(options, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onResponseStart: (controller, status, headers, message) => handler.onResponseStart?.(controller, status, headers, message),
      onResponseData: (controller, chunk) => {
        chunks.push(new WeakRef(chunk));
        handler.onResponseData?.(controller, chunk);
      },
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    });
  }
  override async close(): Promise<void> {
    await this.inner.close();
  }
  override async destroy(): Promise<void> {
    await this.inner.destroy();
  }
}

it("lets go of a finished exchange's answer even while the HTTP stack keeps its handler", async () => {
  const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow", reason: "x".repeat(2_000) }) } });
  const listener = await listenHttp(server);
  cleanups.push(
    () => server.close(),
    () => listener.close(),
  );
  const dispatcher = new KeepingDispatcher(new Pool(new URL(listener.url).origin, { connections: 4 }));
  cleanups.push(() => dispatcher.destroy());
  const client = new AhpClient({ timeoutMs: 5000 });
  await client.connect(new HttpClientTransport(listener.url, { dispatcher }));
  cleanups.push(() => client.close());

  for (let i = 0; i < 20; i++) await client.send("pre_action", preAction());
  expect(dispatcher.kept.length).toBeGreaterThanOrEqual(21);
  expect(dispatcher.chunks.length).toBeGreaterThanOrEqual(21);

  // Collect until (almost) no answer's body is left, once the last answers' own callbacks finished.
  const aliveNow = () => {
    gc();
    return dispatcher.chunks.filter((ref) => ref.deref() !== undefined).length;
  };
  let alive = aliveNow();
  const deadline = Date.now() + 30_000;
  while (alive > 1 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    alive = aliveNow();
  }
  // Every handler is still held, and yet (almost) no answer's body is: at most the last one may
  // still be on its way out of undici's parser.
  expect(dispatcher.kept.length).toBeGreaterThanOrEqual(21);
  expect(alive).toBeLessThanOrEqual(1);
});
