/**
 * Express 5: the handler is Connect-style middleware. It answers `/ahp` (and `/healthz`) and
 * passes every other path to `next()`, so the app's own routes keep working. It runs after
 * `express.json()` too: it then reads the parsed `req.body` instead of the stream.
 */
import type { AddressInfo } from "node:net";
import type { AhpServer } from "@ahp/core";
import { createHttpHandler } from "@ahp/transport-http";
import express from "express";
import { API_KEY, type Mounted } from "./harness.js";

export async function mountExpress(server: AhpServer): Promise<Mounted> {
  const app = express();
  app.use(express.json());
  app.use(createHttpHandler(server, { auth: { apiKeys: [API_KEY] } }));
  app.get("/status", (_req, res) => {
    res.json({ framework: "express" });
  });
  const http = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => http.once("listening", resolve).once("error", reject));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/ahp`,
    base,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.close((error) => (error ? reject(error) : resolve()));
        http.closeAllConnections();
      }),
  };
}
