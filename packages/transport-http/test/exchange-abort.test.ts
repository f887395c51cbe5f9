/**
 * An abort that comes before undici has started the request (still queued for a connection)
 * must cancel the request as soon as undici starts it, and the call must fail with the abort's
 * cause, not wait for an answer. The dispatcher here starts requests only when told to.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { Dispatcher } from "undici";
import { AhpLocalError } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { until } from "./helpers.js";

/** A dispatcher that queues requests and starts one only when `start()` is called. */
class QueueingDispatcher extends Dispatcher {
  readonly queued: Dispatcher.DispatchHandler[] = [];
  readonly aborts: unknown[] = [];
  override dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.queued.push(handler);
    return true;
  }
  /** Starts the oldest queued request; an abort from its handler fails it as undici would. */
  start(): void {
    const handler = this.queued.shift()!;
    const controller = {
      abort: (reason: Error) => {
        this.aborts.push(reason);
        queueMicrotask(() => handler.onResponseError?.(controller, reason));
      },
      pause: () => undefined,
      resume: () => undefined,
      paused: false,
      aborted: false,
      reason: null,
    };
    handler.onRequestStart?.(controller, {});
  }
  override async close(): Promise<void> {}
  override async destroy(): Promise<void> {}
}

it("an abort before undici started the request cancels it when it starts", { timeout: 60_000 }, async () => {
  const dispatcher = new QueueingDispatcher();
  const transport = new HttpClientTransport("http://127.0.0.1:9/ahp", { dispatcher, timeoutMs: 0 });
  await transport.start();
  const controller = new AbortController();
  const sent = transport.send({ jsonrpc: "2.0", id: "q", method: "ahp/event", params: {} }, { signal: controller.signal });
  const outcome = sent.then(
    () => "resolved",
    (error: unknown) => error,
  );
  expect(dispatcher.queued).toHaveLength(1);
  controller.abort(new Error("caller gave up"));
  const error = await outcome;
  expect(AhpLocalError.isInstance(error) && error.code).toBe("ABORTED");
  // undici starts the request later: it is aborted at once, before anything is sent.
  expect(dispatcher.aborts).toHaveLength(0);
  dispatcher.start();
  expect(dispatcher.aborts).toHaveLength(1);
  expect(String(dispatcher.aborts[0])).toMatch(/request aborted/);
  await transport.close();
});

it.each(["undici", "node"] as const)(
  "%s: a call queued behind a busy connection fails at once when aborted",
  { timeout: 60_000 },
  async (stack) => {
    // The harness never answers: the one connection stays busy with the first call.
    let received = 0;
    const server = http.createServer(() => void received++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ahp`;
    const transport = new HttpClientTransport(url, { client: stack, maxConnections: 1, timeoutMs: 0 });
    try {
      await transport.start();
      const first = transport.send({ jsonrpc: "2.0", id: "busy", method: "ahp/event", params: {} }).catch((e: unknown) => e);
      const controller = new AbortController();
      const queued = transport.send({ jsonrpc: "2.0", id: "queued", method: "ahp/event", params: {} }, { signal: controller.signal });
      const outcome = queued.then(
        () => "resolved",
        (error: unknown) => error,
      );
      // The first call holds the connection; the second waits for it.
      await until(() => received >= 1, undefined, "the first call at the server");
      controller.abort(new Error("caller gave up"));
      // Nothing answers and there is no time limit: only the abort can end the queued call.
      const error = await outcome;
      expect(AhpLocalError.isInstance(error) && error.code).toBe("ABORTED");
      await transport.close();
      expect(AhpLocalError.isInstance(await first) && ((await first) as AhpLocalError).code).toBe("CONNECTION_CLOSED");
    } finally {
      await transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  },
);
