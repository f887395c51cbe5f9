// The harness of the audit suite's harness rows, as `ahp serve` runs it: AhpServer with the
// built-in default policy, on a Unix socket, with the audit log off or in a sync mode.
// Arguments: <socket path> <off|none|write|fsync> <log path>. Prints "ready" on stderr once
// listening; on the end of stdin closes the log and prints its stats as JSON on stdout.
import { openAuditLog, withAudit } from "@ahp/audit";
import { AhpServer } from "@ahp/core";
import { DEFAULT_POLICY, createPolicyHandler } from "@ahp/policy";
import { listenUnix } from "@ahp/transport-unix";

const [path, sync, logPath] = process.argv.slice(2);
let handlers = createPolicyHandler(DEFAULT_POLICY);
let log;
if (sync !== "off") {
  log = await openAuditLog({ key: "4d".repeat(32), path: logPath, sync });
  handlers = withAudit(handlers, log);
}
const server = new AhpServer({ handlers });
const listener = await listenUnix(server, { path });
process.stderr.write("ready\n");
process.stdin.on("end", async () => {
  await listener.close();
  await log?.close();
  process.stdout.write(JSON.stringify(log?.stats ?? {}));
  process.exit(0);
});
process.stdin.resume();
