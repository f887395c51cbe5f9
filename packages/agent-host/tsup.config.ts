import { libraryConfig } from "../../tsup.shared.js";

// `reducers` and `client` are browser-safe entries (no Node imports): an inspector page bundles them.
export default libraryConfig({ entry: { index: "src/index.ts", reducers: "src/reducers-entry.ts", client: "src/client-entry.ts" } });
