import { parseShell } from "./src/index.ts";
for (const l of process.argv.slice(2)) { console.log("##", l); for (const c of parseShell(l)) console.log(JSON.stringify({p:c.program, argv:c.argv, args:c.args, flags:[...c.flags], opts:[...c.options], w:c.writes, paths: c.paths, cons:c.consumers, op:c.opaque})); }
