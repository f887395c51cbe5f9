import { rmSync } from "node:fs";
import { selfSignedCert } from "@ahp/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { preAction, rejection, startHarness, type Harness } from "./helpers.js";

const tls = selfSignedCert();
const skip = typeof tls === "string" ? tls : undefined;

describe.skipIf(skip !== undefined)(`wss${skip ? ` (skipped: ${skip})` : ""}`, () => {
  const material = tls as { dir: string; cert: string; key: string };
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { tls: { cert: material.cert, key: material.key }, auth: { apiKeys: ["k"] } });
  });
  afterAll(async () => {
    await h.close();
    rmSync(material.dir, { recursive: true, force: true });
  });

  it("talks to a wss harness that presents a trusted certificate", async () => {
    expect(h.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/ahp$/);
    const client = new AhpClient();
    await client.connect(new WebSocketClientTransport(h.url, { auth: { type: "api_key", key: "k" }, tls: { ca: material.cert } }));
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await client.close();
  });

  it("refuses an untrusted certificate", async () => {
    const client = new AhpClient();
    const error = await rejection(client.connect(new WebSocketClientTransport(h.url, { auth: { type: "api_key", key: "k" } })));
    expect(AhpLocalError.isInstance(error)).toBe(true);
    expect(error.code).toBe("TRANSPORT_ERROR");
    expect(error.message).toMatch(/self[- ]signed certificate/i);
    await client.close();
  });
});
