/**
 * Lists the exports of a package's public entry points (the built `.d.ts` files a consumer sees)
 * that carry no doc comment of their own. Only the exports themselves are checked, not their
 * members.
 */
import ts from "typescript";

/** `[{ specifier, name, kind }]` for every export without a doc comment. */
export function undocumentedExports(entries) {
  const files = entries.map((e) => e.file);
  const program = ts.createProgram(files, {
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const missing = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`cannot read ${entry.file}`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const documented = (symbol.declarations ?? []).some(hasOwnDocComment);
      if (!documented) missing.push({ specifier: entry.specifier, name: exported.name, kind: kindOf(symbol) });
    }
  }
  return missing.sort((a, b) => a.specifier.localeCompare(b.specifier) || a.name.localeCompare(b.name));
}

/**
 * A doc comment directly above the declaration (or its statement), with no blank line between:
 * a bundler puts a file's opening comment above that file's first export, separated by a blank
 * line, and TypeScript would attach it to that export.
 */
function hasOwnDocComment(declaration) {
  const docs = ts.getJSDocCommentsAndTags(declaration).filter((n) => n.kind === ts.SyntaxKind.JSDoc);
  if (docs.length === 0) return false;
  const source = declaration.getSourceFile();
  let owner = declaration;
  while (owner.parent !== undefined && !ts.isSourceFile(owner.parent) && !ts.isModuleBlock(owner.parent)) owner = owner.parent;
  const between = source.text.slice(docs[docs.length - 1].end, owner.getStart(source));
  return !/\n[ \t]*\n/.test(between);
}

function kindOf(symbol) {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return "class";
  if (f & ts.SymbolFlags.Function) return "function";
  if (f & ts.SymbolFlags.Interface) return "interface";
  if (f & ts.SymbolFlags.TypeAlias) return "type";
  if (f & ts.SymbolFlags.Enum) return "enum";
  if (f & ts.SymbolFlags.Variable) return "const";
  return "export";
}
