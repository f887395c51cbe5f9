/** AhpClient.close() fails pending calls at once, also when the transport takes time to close. */
import { describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError, AhpServer, createLinkedPair, type JsonRpcMessage, type Transport } from "@ahp/core";

/** Delegates to a linked-pair transport; close() waits for `closeMayEnd`, like a stdio child given a grace period to exit. */
class SlowClosingTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  constructor(
    readonly inner: Transport,
    readonly closeMayEnd: Promise<void>,
  ) {}
  async start(): Promise<void> {
    this.inner.onmessage = (message) => this.onmessage?.(message);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = (error) => this.onclose?.(error);
    await this.inner.start();
  }
  send(message: JsonRpcMessage): Promise<void> {
    return this.inner.send(message);
  }
  async close(): Promise<void> {
    await this.closeMayEnd;
    await this.inner.close();
  }
}

describe("AhpClient.close()", () => {
  it("rejects pending calls before the transport has finished closing, and refuses new ones", async () => {
    const server = new AhpServer({
      handlerTimeoutMs: 0,
      handlers: {
        onEvent: (_event, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
      },
    });
    const [agent, harness] = createLinkedPair();
    await server.connect(harness);
    const client = new AhpClient({ timeoutMs: 10_000 });
    let endClose!: () => void;
    await client.connect(new SlowClosingTransport(agent, new Promise<void>((resolve) => (endClose = resolve))));
    const order: string[] = [];
    const pending = client.send("pre_action", {}).then(
      () => order.push("resolved"),
      (error: unknown) => {
        order.push(AhpLocalError.isInstance(error) ? `rejected ${error.code}` : `rejected ${String(error)}`);
      },
    );
    const closing = client.close().then(() => order.push("closed"));
    // The pending call fails while the transport is still closing (it cannot end before endClose()).
    await pending;
    expect(order).toEqual(["rejected CONNECTION_CLOSED"]);
    const late = await client.send("pre_action", {}).then(
      () => "resolved",
      (error: unknown) => (AhpLocalError.isInstance(error) ? error.code : String(error)),
    );
    expect(late).toBe("CONNECTION_CLOSED");
    endClose();
    await closing;
    expect(order).toEqual(["rejected CONNECTION_CLOSED", "closed"]);
    expect(await client.closed).toBeUndefined();
    await server.close();
  });
});
