/**
 * The page a person's browser gets instead of a bare 401: what went wrong and how to get a
 * working link. It names no token, and it is the same for every path (it tells nothing about
 * which routes exist).
 */
import type { IncomingMessage } from "node:http";

/** A browser navigation (it asks for HTML), not an API client. */
export function wantsHtml(req: IncomingMessage): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const accept = req.headers.accept ?? "";
  return accept.includes("text/html");
}

export function signInPage(hadToken: boolean): { status: number; headers: Record<string, string>; body: string } {
  const problem = hadToken
    ? "The link you opened carries a token this harness does not accept (mistyped, revoked, or from another harness)."
    : "This page needs a sign-in link: the address must carry <code>?token=…</code> once.";
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Sign-in needed · AHP inspector</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}code{background:#f0f2f4;padding:0 .25em;border-radius:3px}li{margin:.4em 0}</style></head>
<body><main id="sign-in" data-reason="${hadToken ? "invalid" : "missing"}">
<h1>Sign-in needed</h1>
<p>${problem}</p>
<p>To get a link:</p>
<ul>
<li>Ask the person who runs the harness for an inspector link. Each approver has a token in the harness's
token file (<code>--agent-host-token-file</code>, one <code>token principal role</code> per line).</li>
<li>The link has the form <code>http://HOST:PORT/inspector/?token=YOUR_TOKEN</code>; the page removes the token
from the address bar once it has signed you in.</li>
<li>Opened a link from an approval notification (<code>…/inspector/#session=…</code>)? Put your
<code>?token=YOUR_TOKEN</code> before its <code>#</code>: <code>/inspector/?token=YOUR_TOKEN#session=…</code> signs you in and opens that session.</li>
<li>If you run the harness yourself: <code>pnpm demo --inspector</code> prints a ready link.</li>
</ul>
</main></body></html>
`;
  return {
    status: 401,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-length": String(Buffer.byteLength(body)),
      "www-authenticate": 'Bearer realm="agent-host"',
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    },
    body,
  };
}
