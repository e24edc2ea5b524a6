// Bundles the sandbox's npm libraries and web-API polyfills with esbuild, reproducibly.
//
//   node build.mjs           build unless the outputs already match checksums.json; fail if a
//                            fresh build does not match it (a changed input or toolchain)
//   node build.mjs --check   only verify the outputs against checksums.json (needs no npm ci)
//   node build.mjs --update  rebuild and record new checksums (after changing a version)
//   node build.mjs --install as the default, running `npm ci` from the lockfile first when a
//                            build is needed (what scripts/setup.sh and `make jslibs` call)
//
// Outputs, under src/toolfoundry/sandbox/js/_build/: libs/<name>.mjs, libs/manifest.json
// ({"libs": {"<npm name>": {file, version, sha256, exports}}, "aliases": {"<form>": "<npm name>" or
// {module, export}},
// "intl": {chunks, data, locales, packages}: see intl.mjs) and polyfills.js.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { buildIntl } from "./intl.mjs";
import { bundleFileName, forms, importables, RESOLVE } from "./libraries.mjs";
import { forbiddenConstructs } from "./scan.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, "..", "src", "toolfoundry", "sandbox", "js", "_build");
const CHECKSUMS = join(HERE, "checksums.json");
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(["default", "__esModule", "length", "name", "prototype", "caller"]);

const sha256 = (data) => createHash("sha256").update(data).digest("hex");

function readChecksums() {
  return existsSync(CHECKSUMS) ? JSON.parse(readFileSync(CHECKSUMS, "utf8")) : { files: {} };
}

/** Names of outputs that are missing or differ from the recorded checksums. */
function mismatches(recorded, files) {
  const bad = [];
  for (const [rel, digest] of Object.entries(recorded.files ?? {})) {
    const data = files ? files.get(rel) : readIfExists(join(OUT, rel));
    if (data === undefined) bad.push(`${rel}: missing`);
    else if (sha256(data) !== digest) bad.push(`${rel}: sha256 ${sha256(data)} != ${digest}`);
  }
  if (files) {
    for (const rel of files.keys()) {
      if (!(rel in (recorded.files ?? {}))) bad.push(`${rel}: not in checksums.json`);
    }
  }
  if (Object.keys(recorded.files ?? {}).length === 0) bad.push("checksums.json records no file");
  return bad;
}

function readIfExists(path) {
  return existsSync(path) ? readFileSync(path) : undefined;
}

async function importFile(dir, fileName, code) {
  const path = join(dir, fileName);
  writeFileSync(path, code);
  return import(pathToFileURL(path).href);
}

/** Which names the package exports and whether it is CommonJS, found by bundling a probe. */
async function probe(esbuild, work, lib) {
  const result = await esbuild.build({
    ...RESOLVE,
    stdin: { contents: `export * as ns from ${JSON.stringify(lib.name)};`, resolveDir: HERE },
    bundle: true,
    format: "esm",
    write: false,
    metafile: true,
    outfile: join(work, "probe.mjs"),
    logLevel: "silent",
  });
  const entry = result.metafile.inputs["<stdin>"].imports[0].path;
  const commonJS = result.metafile.inputs[entry]?.format === "cjs";
  const probeFile = `probe-${bundleFileName(lib.name)}`;
  const { ns } = await importFile(work, probeFile, result.outputFiles[0].text);
  const names = Object.keys(ns).filter((n) => IDENTIFIER.test(n) && !RESERVED.has(n));
  return { names: names.sort(), commonJS, hasDefault: ns.default !== undefined };
}

/** The generated entry that re-exports a library in both shapes: named and default. */
function wrapper(lib, { names, commonJS, hasDefault }) {
  const spec = JSON.stringify(lib.name);
  const aliases = Object.entries(lib.aliases ?? {});
  const lines = [`import * as ns from ${spec};`];
  if (commonJS) lines.push(`export const { ${names.join(", ")} } = ns;`);
  else lines.push(`export * from ${spec};`);
  for (const [alias, target] of aliases) {
    if (names.includes(alias)) throw new Error(`${lib.name}: alias ${alias} is already exported`);
    if (!names.includes(target)) throw new Error(`${lib.name}: alias target ${target} missing`);
    lines.push(`export const ${alias} = ns.${target};`);
  }
  if (lib.default === "package") {
    if (!hasDefault) throw new Error(`${lib.name} has no default export to re-export`);
    lines.push(`export default ns.default;`);
  } else if (lib.default === "namespace") {
    const extra = aliases.map(([alias, target]) => `, ${alias}: ns.${target}`).join("");
    lines.push(`export default { ...ns${extra} };`);
  } else {
    if (!names.includes(lib.default.export)) {
      throw new Error(`${lib.name} has no export ${lib.default.export} to use as default`);
    }
    lines.push(`export default ns.${lib.default.export};`);
  }
  return `${lines.join("\n")}\n`;
}

function checkClean(rel, text) {
  const found = forbiddenConstructs(text, { module: rel.endsWith(".mjs") });
  if (found.length) throw new Error(`${rel} is not self-contained: ${found.join("; ")}`);
}

/** An esbuild plugin that swaps the modules a library's `replace` entries name. */
function replacing(lib) {
  return {
    name: "replace",
    setup(build) {
      for (const { filter, contents } of lib.replace ?? []) {
        build.onLoad({ filter }, ({ path }) => ({ contents, loader: "js", resolveDir: dirname(path) }));
      }
    },
  };
}

async function buildLibraries(esbuild, work, files) {
  const manifest = { libs: {} };
  const exportForms = {};
  for (const lib of importables()) {
    const shape = await probe(esbuild, work, lib);
    const result = await esbuild.build({
      ...RESOLVE,
      plugins: [replacing(lib)],
      stdin: { contents: wrapper(lib, shape), resolveDir: HERE, sourcefile: `${lib.name}-entry.mjs` },
      bundle: true,
      format: "esm",
      minify: true,
      legalComments: "eof",
      write: false,
      outfile: join(work, "out.mjs"),
      logLevel: "warning",
    });
    const file = bundleFileName(lib.name);
    const text = result.outputFiles[0].text;
    checkClean(`libs/${file}`, text);
    const module = await importFile(work, file, text);
    if (module.default === undefined) throw new Error(`${lib.name}: bundle has no default export`);
    const pkg = JSON.parse(readFileSync(join(HERE, "node_modules", lib.package, "package.json")));
    files.set(`libs/${file}`, Buffer.from(text));
    const exports = Object.keys(module).filter((n) => n !== "default").sort();
    manifest.libs[lib.name] = { file, version: pkg.version, sha256: sha256(text), exports };
    const packageDir = join(HERE, "node_modules", lib.package);
    for (const [form, name] of lib.exportForms?.(exports, packageDir) ?? []) {
      exportForms[form] = { module: lib.name, export: name };
    }
  }
  manifest.aliases = checkedForms(manifest.libs, exportForms);
  manifest.intl = await buildIntl(esbuild, { here: HERE, files, checkClean });
  files.set("libs/manifest.json", Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
}

/** The libraries' other specifier forms, each checked to name a real file of its package. */
function checkedForms(libs, exportForms) {
  const all = { ...forms(), ...exportForms };
  for (const [form, target] of Object.entries(all)) {
    const module = typeof target === "string" ? target : target.module;
    if (!(module in libs)) throw new Error(`form ${form}: ${module} is not a bundled library`);
    if (typeof target !== "string" && !libs[module].exports.includes(target.export))
      throw new Error(`form ${form}: ${module} has no export ${target.export}`);
    if (form in libs) throw new Error(`form ${form} is already a bundled library`);
    const path = join(HERE, "node_modules", form);
    const real = [path, `${path}.js`, join(path, "index.js")].some(
      (p) => existsSync(p) && statSync(p).isFile(),
    );
    if (!real) throw new Error(`form ${form}: the package has no such file`);
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// core-js reaches for Node built-ins when it believes it runs under Node; in the sandbox it
// never does, so those two internals are replaced by constants rather than left as dead code.
const BARE_ENGINE = {
  name: "bare-engine",
  setup(build) {
    const internals = /core-js[\\/]internals[\\/](environment-is-node|get-built-in-node-module)\.js$/;
    build.onLoad({ filter: internals }, ({ path }) => ({
      contents: path.includes("environment-is-node")
        ? "module.exports = false;"
        : "module.exports = function () {};",
      loader: "js",
    }));
  },
};

async function buildPolyfills(esbuild, files) {
  const result = await esbuild.build({
    ...RESOLVE,
    entryPoints: [join(HERE, "polyfills", "index.js")],
    bundle: true,
    format: "iife",
    minify: true,
    keepNames: true,
    legalComments: "eof",
    plugins: [BARE_ENGINE],
    write: false,
    outfile: join(OUT, "polyfills.js"),
    logLevel: "warning",
  });
  const text = result.outputFiles[0].text;
  checkClean("polyfills.js", text);
  files.set("polyfills.js", Buffer.from(text));
}

async function main(argv) {
  const check = argv.includes("--check");
  const update = argv.includes("--update");
  const recorded = readChecksums();
  const stale = mismatches(recorded);
  if (!update && stale.length === 0) {
    console.log(`jsbuild: outputs match checksums.json (${OUT})`);
    return 0;
  }
  if (check) {
    console.error(`jsbuild: outputs do not match checksums.json:\n  ${stale.join("\n  ")}`);
    return 1;
  }
  if (argv.includes("--install")) {
    const npm = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: HERE,
      stdio: "inherit",
    });
    if (npm.status !== 0) {
      console.error("jsbuild: `npm ci` failed");
      return 1;
    }
  }
  const esbuild = await import("esbuild");
  const work = mkdtempSync(join(tmpdir(), "jsbuild-"));
  const files = new Map();
  try {
    await buildLibraries(esbuild, work, files);
    await buildPolyfills(esbuild, files);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const differ = mismatches(recorded, files);
  if (differ.length && !update) {
    console.error(
      `jsbuild: a fresh build does not match checksums.json (inputs or toolchain changed?):\n  ` +
        `${differ.join("\n  ")}\nRun \`node jsbuild/build.mjs --update\` if the change is intended.`,
    );
    return 1;
  }
  for (const [rel, data] of files) {
    mkdirSync(dirname(join(OUT, rel)), { recursive: true });
    writeFileSync(join(OUT, rel), data);
  }
  if (update) {
    const digests = Object.fromEntries([...files].map(([rel, data]) => [rel, sha256(data)]).sort());
    const record = { esbuild: esbuild.version, files: digests };
    writeFileSync(CHECKSUMS, `${JSON.stringify(record, null, 2)}\n`);
  }
  for (const [rel, data] of files) console.log(`jsbuild: ${rel} ${data.length} bytes`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
