/**
 * Prototype-pollution oracle for the in-process harness: the own properties (and their values)
 * of the built-in prototypes every parsed message inherits from, compared with a snapshot
 * taken before the campaign.
 */
import { POLLUTION_MARK } from "./mutate.js";

const WATCHED: ReadonlyArray<[string, object]> = [
  ["Object.prototype", Object.prototype],
  ["Array.prototype", Array.prototype],
  ["Function.prototype", Function.prototype],
  ["String.prototype", String.prototype],
  ["Number.prototype", Number.prototype],
  ["Boolean.prototype", Boolean.prototype],
  ["Promise.prototype", Promise.prototype],
  ["Error.prototype", Error.prototype],
];

export type PrototypeSnapshot = Map<string, Map<PropertyKey, PropertyDescriptor>>;

export function snapshotPrototypes(): PrototypeSnapshot {
  const snapshot: PrototypeSnapshot = new Map();
  for (const [name, proto] of WATCHED) {
    const own = new Map<PropertyKey, PropertyDescriptor>();
    for (const key of Reflect.ownKeys(proto)) own.set(key, Object.getOwnPropertyDescriptor(proto, key)!);
    snapshot.set(name, own);
  }
  return snapshot;
}

/** What changed on the built-in prototypes since `snapshot` (empty: nothing). */
export function prototypeProblems(snapshot: PrototypeSnapshot): string[] {
  const problems: string[] = [];
  for (const [name, proto] of WATCHED) {
    const before = snapshot.get(name)!;
    for (const key of Reflect.ownKeys(proto)) {
      const was = before.get(key);
      const now = Object.getOwnPropertyDescriptor(proto, key)!;
      if (was === undefined) problems.push(`${name}.${String(key)} was added`);
      else if (was.value !== now.value || was.get !== now.get || was.set !== now.set) problems.push(`${name}.${String(key)} was replaced`);
    }
    for (const key of before.keys())
      if (!Object.prototype.hasOwnProperty.call(proto, key)) problems.push(`${name}.${String(key)} was deleted`);
  }
  if (({} as Record<string, unknown>)[POLLUTION_MARK] !== undefined) problems.push(`({}).${POLLUTION_MARK} is set`);
  if (Object.getPrototypeOf({}) !== Object.prototype) problems.push("the prototype of a new object literal changed");
  return problems;
}
