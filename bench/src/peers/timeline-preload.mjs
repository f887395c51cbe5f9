// Preload (`node --import`) for the peer processes of the `stdio-layers` suite: records, on the
// machine's monotonic clock, when each chunk of stdin reaches a 'data' listener and when each
// write to stdout is made, and writes both lists as JSON to $AHP_TIMELINE_OUT when the process
// exits. The clock (process.hrtime) is the same in every process of the machine, so the suite
// can set the peer's times against its own. Costs the same for every peer it is loaded into.
import { writeFileSync } from "node:fs";

const out = process.env.AHP_TIMELINE_OUT;
if (out !== undefined) {
  const now = () => Number(process.hrtime.bigint()) / 1000;
  const capacity = Number(process.env.AHP_TIMELINE_CAPACITY ?? 400_000);
  const data = new Float64Array(capacity);
  const writes = new Float64Array(capacity);
  let nData = 0;
  let nWrites = 0;
  const emit = process.stdin.emit.bind(process.stdin);
  process.stdin.emit = (event, ...args) => {
    if (event === "data" && nData < capacity) data[nData++] = now();
    return emit(event, ...args);
  };
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (...args) => {
    if (nWrites < capacity) writes[nWrites++] = now();
    return write(...args);
  };
  process.on("exit", () => {
    writeFileSync(out, JSON.stringify({ data: Array.from(data.subarray(0, nData)), writes: Array.from(writes.subarray(0, nWrites)) }));
  });
}
