export { RedisStateStore, redactRedisUrl, type RedisStateStoreOptions, type RedisStateStoreStats } from "./store.js";
