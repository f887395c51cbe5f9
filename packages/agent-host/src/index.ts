/** `@ahp/agent-host`: the Agent Host channel adapter (Node). The browser-safe parts are also at `./reducers` and `./client`. */
export * from "./reducers-entry.js";
