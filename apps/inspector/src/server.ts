/**
 * `@ahp/inspector/server`: where the built inspector page is (for `ahp serve --agent-host`, which
 * serves it at `/inspector/`), and the one route the page needs besides the static files:
 * `GET /inspector/whoami.json`, the principal and role of the caller's token, so that the page
 * hides the approval buttons from viewers. The host still checks every approval itself.
 */
import { fileURLToPath } from "node:url";
import { TokenAuthenticator, type RouteHandler, type TokenEntry } from "@ahp/agent-host";

/** The directory of the built page (`index.html`, everything inlined). */
export const inspectorAssetsDir: string = fileURLToPath(new URL("./www/", import.meta.url));

/** The URL prefix the page is served at. */
export const INSPECTOR_PREFIX = "/inspector/";

/**
 * A route answering `GET /inspector/whoami.json` with `{ principal, role }` of the request's token
 * (header or `?token=`). Unknown tokens never reach it (the server answers 401 first), but it
 * re-checks and answers 401 itself if one does.
 */
export function whoamiRoute(tokens: readonly TokenEntry[], prefix: string = INSPECTOR_PREFIX): RouteHandler {
  const auth = new TokenAuthenticator(tokens);
  const path = `${prefix.endsWith("/") ? prefix : `${prefix}/`}whoami.json`;
  return (req, res, next) => {
    if ((req.url ?? "").split("?")[0] !== path || req.method !== "GET") {
      next();
      return;
    }
    const who = auth.authenticate(req);
    const body = JSON.stringify(who === undefined ? { error: "unauthorized" } : { principal: who.principal, role: who.role });
    res
      .writeHead(who === undefined ? 401 : 200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      })
      .end(body);
  };
}
