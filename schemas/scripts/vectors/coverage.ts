/** Checklist items (spec §17) the vectors cannot check, with the reason. Every other item has vectors. */
export const NOT_COVERED: Readonly<Record<number, string>> = {
  18: "needs a harness configured with batch_size only; the vector profile sets all three limits (one profile per run)",
  30: "needs a harness without max_depth; the vector profile sets max_depth 10",
  50: "needs a generic handler that fails; the profile's decisions never fail",
  51: "needs a query handler; the profile has none (`ahp serve` answers no query), so its vectors check the -32603 default instead (item 52)",
  60: "needs a handler that fails for one batch element; the profile's decisions never fail",
  70: "HTTP only: on stdio a response with an unknown id is dropped (client/transport vectors check that instead)",
  79: "a timeout depends on time passing: client runners replay without a clock, so an SDK checks it with its own fake timers",
  86: "HTTP transport: the vectors speak stdio",
  87: "HTTP transport: the vectors speak stdio",
  88: "HTTP transport: the vectors speak stdio",
  89: "HTTP transport: the vectors speak stdio",
  90: "HTTP transport: the vectors speak stdio",
  91: "WebSocket transport: the vectors speak stdio",
  92: "WebSocket transport: the vectors speak stdio",
  93: "Unix socket: the framing is that of stdio; run the harness vectors through a stdio-to-socket bridge (e.g. `socat - UNIX-CONNECT:<path>`) to check it",
};
