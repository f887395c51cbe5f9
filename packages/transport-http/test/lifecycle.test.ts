import { rmSync } from "node:fs";
import { runNode, selfSignedCert } from "@ahp/conformance";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { preAction, startHarness, type Harness } from "./helpers.js";

describe("no leaked handles", () => {
  for (const stack of ["undici", "node"]) {
    it(`a process that opens and closes server and client (${stack}) exits by itself`, async () => {
      const script = fileURLToPath(new URL("./fixtures/open-close.mjs", import.meta.url));
      // A leaked handle keeps the process alive for good; the generous deadline is for a busy machine.
      const result = await runNode(script, [stack], { deadlineMs: 60_000 });
      expect(result.stderr).toBe("");
      expect(result.exitedInTime).toBe(true);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("done allow CONNECTION_CLOSED\n");
    }, 90_000);
  }
});

const tls = selfSignedCert();
const tlsSkip = typeof tls === "string" ? tls : undefined;

describe.skipIf(tlsSkip !== undefined)(`https${tlsSkip ? ` (skipped: ${tlsSkip})` : ""}`, () => {
  const material = tls as { dir: string; cert: string; key: string };
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { tls: { cert: material.cert, key: material.key } });
  });
  afterAll(async () => {
    await h.close();
    rmSync(material.dir, { recursive: true, force: true });
  });

  for (const stack of ["undici", "node"] as const) {
    it(`${stack}: talks to an https harness that presents a trusted certificate`, async () => {
      expect(h.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/ahp$/);
      const client = new AhpClient();
      await client.connect(new HttpClientTransport(h.url, { client: stack, tls: { ca: material.cert } }));
      await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
      await client.close();
    });

    it(`${stack}: refuses an untrusted certificate`, async () => {
      const client = new AhpClient();
      const error = await client.connect(new HttpClientTransport(h.url, { client: stack })).catch((e: unknown) => e);
      expect(AhpLocalError.isInstance(error)).toBe(true);
      expect((error as AhpLocalError).code).toBe("TRANSPORT_ERROR");
      expect((error as AhpLocalError).message).toMatch(/self[- ]signed certificate/i);
      await client.close();
    });
  }
});
