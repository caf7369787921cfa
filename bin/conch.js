#!/usr/bin/env node
import { run } from "../dist/src/cli/main.js";

run();
