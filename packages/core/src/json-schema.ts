/**
 * JSON Schema 2020-12 generation from zod 4 (`z.toJSONSchema`), shared by every package that
 * contributes types to the `schemas/` set. See docs/adr/0001-zod-native-json-schema.md.
 */
import { z } from "zod";

/** Options of {@link toJsonSchemaBundle}: the bundle's `$id`, title and description. */
export interface JsonSchemaBundleOptions {
  /** `$id` of the bundle document. */
  id: string;
  title?: string;
  description?: string;
  /** `input` (default) describes what a receiver accepts: defaulted members optional, objects open. */
  io?: "input" | "output";
}

/** A JSON Schema document or subschema as a plain object, as `toJsonSchemaBundle` returns it. */
export type JsonSchemaObject = Record<string, unknown>;

/**
 * Builds one JSON Schema 2020-12 document whose `$defs` hold every named type, referencing
 * each other by `#/$defs/<Name>`. A private registry is used; nothing touches zod's global registry.
 */
export function toJsonSchemaBundle(types: Readonly<Record<string, z.ZodType>>, options: JsonSchemaBundleOptions): JsonSchemaObject {
  const registry = z.registry<{ id: string }>();
  const seen = new Map<z.ZodType, string>();
  for (const [name, schema] of Object.entries(types)) {
    const previous = seen.get(schema);
    if (previous !== undefined) throw new Error(`schema registered twice: ${previous} and ${name}`);
    seen.set(schema, name);
    registry.add(schema, { id: name });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: options.io ?? "input",
    unrepresentable: "throw",
    cycles: "ref",
    reused: "inline",
    uri: (id) => `#/$defs/${id}`,
    override: (ctx) => {
      const s = ctx.jsonSchema as Record<string, unknown>;
      // z.int() adds the safe-integer bounds; they are implementation limits, not protocol rules.
      if (s.type === "integer") {
        if (s.minimum === -9007199254740991) delete s.minimum;
        if (s.maximum === 9007199254740991) delete s.maximum;
      }
    },
  });
  if ("__shared" in schemas) throw new Error("a schema refers to an unregistered shared type (__shared)");
  const $defs: Record<string, JsonSchemaObject> = {};
  for (const name of Object.keys(types)) {
    const generated = schemas[name] as JsonSchemaObject | undefined;
    if (generated === undefined) throw new Error(`no JSON Schema generated for ${name}`);
    const { $schema: _s, $id: _i, ...rest } = generated;
    spreadUnionTypes(rest);
    $defs[name] = rest;
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: options.id,
    ...(options.title === undefined ? {} : { title: options.title }),
    ...(options.description === undefined ? {} : { description: options.description }),
    $defs,
  };
}

/** Keywords whose values are data, not subschemas: never rewritten. */
const DATA_KEYWORDS = new Set(["const", "default", "enum", "examples"]);

/**
 * zod collapses `anyOf` of bare types into a `type` array (`["string", "integer"]`). ajv's strict
 * mode rejects such unions (only `[T, "null"]` is allowed), so they are spread back into an
 * equivalent `anyOf`. Works in place.
 */
function spreadUnionTypes(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) spreadUnionTypes(item);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const schema = node as JsonSchemaObject;
  for (const [key, value] of Object.entries(schema)) if (!DATA_KEYWORDS.has(key)) spreadUnionTypes(value);
  const type = schema.type;
  if (!Array.isArray(type) || type.filter((t) => t !== "null").length < 2) return;
  delete schema.type;
  const branches = type.map((t: unknown) => ({ type: t }));
  if (schema.anyOf === undefined) schema.anyOf = branches;
  else schema.allOf = [...((schema.allOf as unknown[] | undefined) ?? []), { anyOf: branches }];
}

/** Stable JSON text for checked-in schema files: 2-space indentation and a final newline. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
