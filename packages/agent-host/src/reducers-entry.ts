/**
 * `@ahp/agent-host/reducers`: the Agent Host wire types, constants, codec, version negotiation
 * and channel reducers. Browser-safe: nothing reachable from here imports Node modules.
 */
export * from "./wire/types.js";
export * from "./wire/constants.js";
export * from "./wire/codec.js";
export * from "./wire/version.js";
export * from "./reducers/index.js";
