#!/usr/bin/env node
// The `ahp-aarts-hook` command: the launcher loads the single-file bundle dist/bin.cjs through
// V8's code cache (see README, "Cold start"). Checked in so that installing the workspace can
// link the bin before the build.
require("../dist/launch.cjs").launch();
