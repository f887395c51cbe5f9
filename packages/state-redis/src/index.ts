export type { RedisConnectionOptions } from "./connection.js";
export { RedisStateStore, redactRedisUrl, type RedisPing, type RedisStateStoreOptions, type RedisStateStoreStats } from "./store.js";
export {
  RedisActionStream,
  type RedisActionStreamListener,
  type RedisActionStreamOptions,
  type RedisActionStreamStats,
} from "./stream.js";
