/**
 * A JSON document as a tree that can say things `JSON.stringify` cannot: duplicated members,
 * members named `__proto__`, number literals such as `1e400`, `-0` or `18446744073709551616`
 * written verbatim, strings holding lone surrogates, and nesting of any depth. Mutations work on
 * this tree; {@link render} turns it into the text that goes on the wire.
 */

export type Doc =
  | { t: "obj"; members: Array<[string, Doc]> }
  | { t: "arr"; items: Doc[] }
  /** A string value; written with `JSON.stringify`, which escapes lone surrogates as `\udXXX`. */
  | { t: "str"; value: string }
  /** A literal written exactly as given: a number, `true`, `false`, `null`, or anything else. */
  | { t: "raw"; text: string }
  /** An array/object nesting `depth` levels deep around `inner`, written without recursion. */
  | { t: "deep"; depth: number; open: "[" | "{"; inner: Doc };

/** The tree of a plain JSON value. */
export function toDoc(value: unknown): Doc {
  if (value === null || value === undefined) return { t: "raw", text: "null" };
  if (typeof value === "string") return { t: "str", value };
  if (typeof value === "number" || typeof value === "boolean") return { t: "raw", text: JSON.stringify(value) ?? "null" };
  if (Array.isArray(value)) return { t: "arr", items: value.map(toDoc) };
  if (typeof value === "object") {
    return { t: "obj", members: Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toDoc(v)]) };
  }
  return { t: "raw", text: "null" };
}

/** The JSON text of a tree; `space` puts a space after `:` and `,` (the line stays one line). */
export function render(doc: Doc, space = false): string {
  const out: string[] = [];
  const sep = space ? ", " : ",";
  const colon = space ? ": " : ":";
  const walk = (d: Doc): void => {
    switch (d.t) {
      case "str":
        out.push(JSON.stringify(d.value));
        return;
      case "raw":
        out.push(d.text);
        return;
      case "arr":
        out.push("[");
        d.items.forEach((item, i) => {
          if (i > 0) out.push(sep);
          walk(item);
        });
        out.push("]");
        return;
      case "obj":
        out.push("{");
        d.members.forEach(([key, value], i) => {
          if (i > 0) out.push(sep);
          out.push(JSON.stringify(key), colon);
          walk(value);
        });
        out.push("}");
        return;
      case "deep": {
        const open = d.open === "[" ? "[" : '{"k":';
        const close = d.open === "[" ? "]" : "}";
        out.push(open.repeat(d.depth));
        walk(d.inner);
        out.push(close.repeat(d.depth));
        return;
      }
    }
  };
  walk(doc);
  return out.join("");
}

/** Every path to an object or array node (including the root), as indexes into members/items. */
export function containers(doc: Doc): number[][] {
  const paths: number[][] = [];
  const walk = (d: Doc, path: number[]): void => {
    if (d.t === "obj") {
      paths.push(path);
      d.members.forEach(([, v], i) => walk(v, [...path, i]));
    } else if (d.t === "arr") {
      paths.push(path);
      d.items.forEach((v, i) => walk(v, [...path, i]));
    }
  };
  walk(doc, []);
  return paths;
}

/** The node at `path`. */
export function nodeAt(doc: Doc, path: readonly number[]): Doc {
  let d = doc;
  for (const i of path) {
    if (d.t === "obj") d = d.members[i]![1];
    else if (d.t === "arr") d = d.items[i]!;
    else break;
  }
  return d;
}

/** A copy of the tree with the node at `path` replaced by `replace(node)`. */
export function updateAt(doc: Doc, path: readonly number[], replace: (node: Doc) => Doc): Doc {
  if (path.length === 0) return replace(doc);
  const [head, ...rest] = path as [number, ...number[]];
  if (doc.t === "obj") {
    const members = doc.members.slice();
    const [key, value] = members[head]!;
    members[head] = [key, updateAt(value, rest, replace)];
    return { t: "obj", members };
  }
  if (doc.t === "arr") {
    const items = doc.items.slice();
    items[head] = updateAt(items[head]!, rest, replace);
    return { t: "arr", items };
  }
  return doc;
}

/** The member `key` of an object node, if any (the last one when duplicated, as JSON.parse reads it). */
export function member(doc: Doc, key: string): Doc | undefined {
  if (doc.t !== "obj") return undefined;
  for (let i = doc.members.length - 1; i >= 0; i--) if (doc.members[i]![0] === key) return doc.members[i]![1];
  return undefined;
}

/** A copy of an object node with `key` set (replacing every occurrence), removed (`undefined`), or appended. */
export function withMember(doc: Doc, key: string, value: Doc | undefined): Doc {
  if (doc.t !== "obj") return doc;
  const members = doc.members.filter(([k]) => k !== key);
  if (value !== undefined) members.push([key, value]);
  return { t: "obj", members };
}
