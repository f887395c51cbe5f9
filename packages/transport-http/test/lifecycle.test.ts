import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, AhpLocalError } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { preAction, startHarness, type Harness } from "./helpers.js";

function runNode(script: string, args: string[], deadlineMs: number): Promise<{ code: number | null; stdout: string; stderr: string; exitedInTime: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let exitedInTime = true;
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      exitedInTime = false;
      child.kill("SIGKILL");
    }, deadlineMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, exitedInTime });
    });
  });
}

describe("no leaked handles", () => {
  for (const stack of ["undici", "node"]) {
    it(`a process that opens and closes server and client (${stack}) exits by itself`, async () => {
      const script = fileURLToPath(new URL("./fixtures/open-close.mjs", import.meta.url));
      const result = await runNode(script, [stack], 10_000);
      expect(result.stderr).toBe("");
      expect(result.exitedInTime).toBe(true);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("done allow CONNECTION_CLOSED\n");
    });
  }
});

function selfSignedCert(): { dir: string; cert: string; key: string } | string {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "ahp-http-tls-"));
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
