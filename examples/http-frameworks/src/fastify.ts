/**
 * Fastify 5: an `onRequest` hook hands `/ahp` (and `/healthz`) to the handler before Fastify
 * parses the body; `reply.hijack()` tells Fastify the response is written elsewhere. Other paths
 * go on to Fastify's routes.
 */
import type { AhpServer } from "@ahp/core";
import { createHttpHandler } from "@ahp/transport-http";
import Fastify from "fastify";
import { API_KEY, type Mounted } from "./harness.js";

export async function mountFastify(server: AhpServer): Promise<Mounted> {
  const ahp = createHttpHandler(server, { auth: { apiKeys: [API_KEY] } });
  const app = Fastify();
  app.addHook("onRequest", (request, reply, done) => {
    const path = request.url.split("?")[0];
    if (path === "/ahp" || path === "/healthz") {
      reply.hijack();
      ahp(request.raw, reply.raw);
    } else done();
  });
  app.get("/status", () => ({ framework: "fastify" }));
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  return { url: `${base}/ahp`, base, close: () => app.close() };
}
