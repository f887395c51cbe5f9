#!/usr/bin/env node
// The `ahp-aarts-hook` command: one require of the single-file bundle dist/bin.cjs (see README,
// "Why one file"). Checked in so that installing the workspace can link the bin before the build.
require("../dist/bin.cjs");
