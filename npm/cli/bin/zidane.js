#!/usr/bin/env node
// The `zidane` command of `@zidane-rs/cli`: runs the native program from this
// platform's package (`@zidane-rs/cli-<os>-<cpu>`, an optional dependency
// that npm installs only where its `os` and `cpu` match) with the same
// arguments, standard streams and environment, and exits as it does.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");

const platform = `${process.platform}-${process.arch}`;
const name = `@zidane-rs/cli-${platform}`;
const exe = process.platform === "win32" ? "zidane.exe" : "zidane";

let binary;
try {
  binary = require.resolve(`${name}/bin/${exe}`);
} catch {
  process.stderr.write(
    `zidane: ${name} is not installed: no build for ${platform}, or npm skipped optional dependencies ` +
      "(install again without --omit=optional / --no-optional); the release archives are at " +
      "https://github.com/zidane-rs/zidane-rs/releases\n",
  );
  process.exit(1);
}

const args = process.argv.slice(2);

// Where Node can replace itself with the program (22.15, 23.11 and later),
// signals and the exit status are the program's own.
if (typeof process.execve === "function" && process.platform !== "win32") {
  process.execve(binary, [binary, ...args], process.env);
}

const child = spawn(binary, args, { stdio: "inherit" });
// Ctrl-C at a terminal reaches the whole process group, the program included,
// so it is not passed on again (a second interrupt would quit the program
// instead of suspending its run); a signal sent to this process alone is.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`zidane: could not start ${binary}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
