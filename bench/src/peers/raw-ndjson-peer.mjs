// The raw floor: a plain Node NDJSON peer with no library. Each line is parsed with JSON.parse;
// every request gets a fixed reply (`{"decision":"allow"}` with the request's id) in one write of
// its own; notifications are counted. No validation, no framework, and no avoidable copies: lines
// are cut from the received text by index, and only an unfinished last line is kept for the next
// chunk. `node raw-ndjson-peer.mjs stdio` serves on stdin/stdout; `... unix <path>` listens on a
// Unix socket (one peer per connection) and writes "ready" to stderr once it does.
import { createServer } from "node:net";
import { pathToFileURL } from "node:url";

/** The floor's reply line to one request: `allow`, or the notifications counted for `bench/count`. */
function fixedReply(message, notifications) {
  const id = JSON.stringify(message.id);
  return message.method === "bench/count"
    ? `{"jsonrpc":"2.0","id":${id},"result":{"notifications":${notifications}}}\n`
    : `{"jsonrpc":"2.0","id":${id},"result":{"decision":"allow"}}\n`;
}

/**
 * Serves one connection: answers each request on `readable` with `reply(message, notifications)`
 * (default: the fixed reply) on `writable`.
 */
export function serve(readable, writable, reply = fixedReply) {
  let rest = "";
  let notifications = 0;
  readable.setEncoding("utf8");
  readable.on("data", (chunk) => {
    const text = rest.length === 0 ? chunk : rest + chunk;
    let start = 0;
    let nl;
    while ((nl = text.indexOf("\n", start)) !== -1) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line.length === 0) continue;
      const message = JSON.parse(line);
      if (message.id === undefined) {
        notifications++;
        continue;
      }
      writable.write(reply(message, notifications));
    }
    rest = start === text.length ? "" : text.slice(start);
  });
}

// Run as a script (imported, e.g. by core-roundtrip-child.mjs, it only provides serve()).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [mode, path] = process.argv.slice(2);
  if (mode === "unix") {
    const server = createServer((socket) => serve(socket, socket));
    server.listen(path, () => process.stderr.write("ready\n"));
    process.stdin.on("end", () => server.close(() => process.exit(0)));
    process.stdin.resume();
  } else {
    serve(process.stdin, process.stdout);
    process.stdin.on("end", () => process.exit(0));
  }
}
