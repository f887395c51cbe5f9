/**
 * Hono on `@hono/node-server`: the Node request and response are `c.env.incoming` and
 * `c.env.outgoing`; the handler answers on them and the route returns `RESPONSE_ALREADY_SENT`
 * so Hono writes nothing more.
 */
import type { AddressInfo } from "node:net";
import type { AhpServer } from "@ahp/core";
import { createHttpHandler } from "@ahp/transport-http";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { Hono } from "hono";
import { API_KEY, type Mounted } from "./harness.js";

export async function mountHono(server: AhpServer): Promise<Mounted> {
  const ahp = createHttpHandler(server, { auth: { apiKeys: [API_KEY] } });
  const app = new Hono<{ Bindings: HttpBindings }>();
  const toAhp = (c: { env: HttpBindings }) => {
    ahp(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  app.all("/ahp", toAhp);
  app.all("/healthz", toAhp);
  app.get("/status", (c) => c.json({ framework: "hono" }));
  const http = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve, reject) => http.once("error", reject).listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/ahp`,
    base,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.close((error) => (error ? reject(error) : resolve()));
        if ("closeAllConnections" in http) http.closeAllConnections();
      }),
  };
}
