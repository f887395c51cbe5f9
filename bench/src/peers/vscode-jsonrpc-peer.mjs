// The same harness written with vscode-jsonrpc over stdio (its own Content-Length framing):
// `ahp/event` requests are answered allow, `ahp/event` notifications counted.
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

let notifications = 0;
const connection = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
connection.onRequest("ahp/event", () => ({ decision: "allow" }));
connection.onRequest("bench/count", () => ({ notifications }));
connection.onNotification("ahp/event", () => {
  notifications++;
});
connection.onClose(() => process.exit(0));
connection.listen();
