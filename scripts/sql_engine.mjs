// Make the query page's engine directory (`npm ci && npm run engine` writes sql-engine/):
// DuckDB-Wasm's browser module bundled with the apache-arrow it imports into one ES module
// (a browser cannot resolve the bare import), its non-threaded ("eh") worker and wasm, the
// licences, and engine.json naming the versions. `sitegen build --sql-engine sql-engine`
// copies these files into the site (sql/engine/), so the page needs no network.
// The file names are sitegen/render/sqlpage.py's ENGINE_FILES: keep the two in step.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = resolve(process.argv[2] ?? join(root, "sql-engine"));
const modules = join(root, "node_modules");
const duckdb = join(modules, "@duckdb", "duckdb-wasm");
const arrow = join(modules, "apache-arrow");
const version = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// Only what sql.js uses, so the bundle leaves the rest of the API out.
await build({
  stdin: {
    contents: 'export { AsyncDuckDB, ConsoleLogger, LogLevel } from "@duckdb/duckdb-wasm";',
    resolveDir: root,
    loader: "js",
  },
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  outfile: join(out, "duckdb.js"),
  logLevel: "warning",
});
for (const name of ["duckdb-browser-eh.worker.js", "duckdb-eh.wasm"]) {
  copyFileSync(join(duckdb, "dist", name), join(out, name));
}
// DuckDB-Wasm is MIT (its package ships no licence file: its README names it); Arrow is
// Apache-2.0 with a NOTICE, which travel with the bundle.
copyFileSync(join(arrow, "LICENSE.txt"), join(out, "LICENSE-apache-arrow.txt"));
copyFileSync(join(arrow, "NOTICE.txt"), join(out, "NOTICE-apache-arrow.txt"));
const files = {};
for (const name of ["duckdb.js", "duckdb-browser-eh.worker.js", "duckdb-eh.wasm"]) {
  const bytes = readFileSync(join(out, name));
  files[name] = { bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}
const engine = {
  "@duckdb/duckdb-wasm": version(duckdb),
  "apache-arrow": version(arrow),
  esbuild: version(join(modules, "esbuild")),
  files,
};
writeFileSync(join(out, "engine.json"), JSON.stringify(engine, null, 2) + "\n");
console.log(`${out}: @duckdb/duckdb-wasm ${engine["@duckdb/duckdb-wasm"]}, apache-arrow ${engine["apache-arrow"]}`);
