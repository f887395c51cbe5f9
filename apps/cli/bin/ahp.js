#!/usr/bin/env node
// The `ahp` command. This file is checked in (the build writes dist/), so that installing the
// workspace can link the bin before anything is built.
import "../dist/main.js";
