import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { preAction, rejection, startHarness, type Harness } from "./helpers.js";

/** A self-signed certificate for 127.0.0.1 made at test time with openssl, or why it could not be made. */
function selfSignedCert(): { dir: string; cert: string; key: string } | string {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "ahp-ws-tls-"));
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
      { stdio: "ignore" },
    );
    return { dir, cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } catch (error) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    return `openssl could not create a self-signed certificate: ${(error as Error).message}`;
  }
}

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
