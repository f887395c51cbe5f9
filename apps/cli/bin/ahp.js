#!/usr/bin/env node
// The `ahp` command as an ES module (`node bin/ahp.js …`); the installed bin is bin/ahp.cjs, which
// answers `ahp hook <host>` before Node's ESM loader starts. Checked in (the build writes dist/).
import "../dist/main.js";
