/** Whether a handler's result is a promise (or any thenable) to wait for, rather than a value to use at once. */
export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as PromiseLike<T>).then === "function"
  );
}
