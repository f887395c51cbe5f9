/**
 * Reducer fixtures of the `core` set that this package does not run, each with the drift item
 * (numbered as in the fixtures README, "Known drift") that explains why.
 */
export const REDUCER_SKIPS: Record<string, string> = {};
