// The raw floor: a trivial NDJSON echo peer with no library, only JSON.parse/JSON.stringify and
// manual line splitting. Every request is answered `{"decision":"allow"}`; notifications are
// counted. `node raw-ndjson-peer.mjs stdio` serves on stdin/stdout; `... unix <path>` listens on
// a Unix socket (one peer per connection) and writes "ready" to stderr once it does.
import { createServer } from "node:net";

function serve(readable, writable) {
  let pending = "";
  let notifications = 0;
  readable.setEncoding("utf8");
  readable.on("data", (chunk) => {
    pending += chunk;
    let out = "";
    let nl;
    while ((nl = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.length === 0) continue;
      const message = JSON.parse(line);
      if (message.id === undefined) {
        notifications++;
        continue;
      }
      const result = message.method === "bench/count" ? { notifications } : { decision: "allow" };
      out += JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\n";
    }
    if (out.length > 0) writable.write(out);
  });
}

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
