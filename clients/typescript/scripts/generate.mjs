// Generate the TypeScript code of the protos (buf.gen.yaml) into src/gen/.
//
//     node scripts/generate.mjs            # (npm run generate) write src/gen/
//     node scripts/generate.mjs --check    # (npm run generate:check) exit 1 if stale
//
// The check generates into a temporary directory with the same buf and
// protoc-gen-es (node_modules, pinned by package-lock.json) and compares
// every file, like protos/generate.py --check does for the Python code.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const buf = join(root, "node_modules", ".bin", "buf");
const GENERATED = join("src", "gen");

function generate(output) {
  if (!existsSync(buf)) {
    console.error("no node_modules/.bin/buf: run `npm ci` first");
    process.exit(2);
  }
  execFileSync(buf, ["generate", "--template", "buf.gen.yaml", "--output", output], {
    cwd: root,
    stdio: "inherit",
  });
}

function files(directory) {
  if (!existsSync(directory)) return new Map();
  const found = new Map();
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath ?? entry.path, entry.name);
      found.set(relative(directory, path), readFileSync(path));
    }
  }
  return found;
}

function stale() {
  const fresh = mkdtempSync(join(tmpdir(), "strata-ts-gen-"));
  try {
    generate(fresh);
    const want = files(join(fresh, GENERATED));
    const have = files(join(root, GENERATED));
    const problems = [];
    for (const path of [...want.keys()].sort()) {
      if (!have.has(path)) problems.push(`missing ${GENERATED}/${path}`);
      else if (!want.get(path).equals(have.get(path))) problems.push(`stale ${GENERATED}/${path}`);
    }
    for (const path of [...have.keys()].sort()) {
      if (!want.has(path)) problems.push(`unexpected ${GENERATED}/${path}`);
    }
    return problems;
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

if (process.argv.includes("--check")) {
  const problems = stale();
  for (const line of problems) console.log(line);
  if (problems.length > 0) {
    console.log("generated code is stale: run `npm run generate` in clients/typescript");
    process.exit(1);
  }
  console.log("generated code is up to date");
} else {
  generate(".");
}
