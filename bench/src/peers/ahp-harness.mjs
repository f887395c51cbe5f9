// Our harness for the transport benchmarks: AhpServer answering every pre_action with allow and
// counting notifications, served by @ahp/transport-stdio (`stdio`) or @ahp/transport-unix
// (`unix <path>`, "ready" on stderr once listening; ends when stdin ends).
import { AhpServer } from "@ahp/core";
import { serveStdio } from "@ahp/transport-stdio";
import { listenUnix } from "@ahp/transport-unix";

let notifications = 0;
const server = new AhpServer({
  handlers: {
    onEvent: () => ({ decision: "allow" }),
    onNotification: () => {
      notifications++;
    },
    onQuery: () => ({ answer: { notifications } }),
  },
});

const [mode, path] = process.argv.slice(2);
if (mode === "unix") {
  const listener = await listenUnix(server, { path });
  process.stderr.write("ready\n");
  process.stdin.on("end", () => void listener.close().then(() => process.exit(0)));
  process.stdin.resume();
} else {
  await serveStdio(server);
}
