import { libraryConfig } from "../../tsup.shared.js";

export default libraryConfig({
  // `server` is a separate entry so that harness child processes can load the scripted
  // harness without loading vitest.
  entry: { index: "src/index.ts", server: "src/server-entry.ts" },
  external: ["vitest", "zod", "@ahp/core"],
});
