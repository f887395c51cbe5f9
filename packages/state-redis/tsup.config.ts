import { libraryConfig } from "../../tsup.shared.js";

// `testing` starts a real redis-server for tests; it is a separate entry so the store never loads it.
export default libraryConfig({ entry: { index: "src/index.ts", testing: "src/testing.ts" } });
