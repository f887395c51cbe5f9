import { libraryConfig } from "../../tsup.shared.js";

export default libraryConfig({ external: ["zod", "@ahp/core", "@ahp/audit", "@ahp/observability", "@ahp/policy", "fast-check", "ws"] });
