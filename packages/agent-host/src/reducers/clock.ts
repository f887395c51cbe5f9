/** The clock reducers read: milliseconds since the epoch. Injected so that reducers stay pure and tests repeatable. */
export type Clock = () => number;

/** The real clock (`Date.now`). */
export const systemClock: Clock = () => Date.now();

/** ISO 8601 UTC timestamp of the clock's current value. */
export const isoNow = (clock: Clock): string => new Date(clock()).toISOString();
