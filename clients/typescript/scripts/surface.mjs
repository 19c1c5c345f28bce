// The public methods of StrataClient (src/client.ts) and their parameters,
// as JSON on stdout, for the test that holds the TypeScript client to the
// Python client's surface (tests/clients/test_client_surface.py).
//
// Each method: { name, params: [{ name, optional, keys }] }; `keys` lists
// the properties ({ name, optional }) of a parameter typed as an object
// literal (the options bag), null otherwise.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const path = fileURLToPath(new URL("../src/client.ts", import.meta.url));
const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
const methods = [];

function isPublic(member) {
  const modifiers = ts.getModifiers?.(member) ?? member.modifiers ?? [];
  return !modifiers.some(
    (m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword,
  );
}

ts.forEachChild(source, (node) => {
  if (!ts.isClassDeclaration(node) || node.name?.text !== "StrataClient") return;
  for (const member of node.members) {
    if (!ts.isMethodDeclaration(member) || !isPublic(member)) continue;
    const params = member.parameters.map((p) => ({
      name: p.name.getText(source),
      optional: p.questionToken !== undefined || p.initializer !== undefined,
      keys:
        p.type && ts.isTypeLiteralNode(p.type)
          ? p.type.members
              .filter(ts.isPropertySignature)
              .map((k) => ({ name: k.name.getText(source), optional: k.questionToken !== undefined }))
          : null,
    }));
    methods.push({ name: member.name.getText(source), params });
  }
});
process.stdout.write(JSON.stringify(methods, null, 1) + "\n");
