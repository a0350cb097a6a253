#!/usr/bin/env node
// The drift alarm's report. Reads what `pulumi refresh --preview-only --expect-no-changes --diff` printed and says,
// one line per resource, what the cloud holds that the stack did not record: each changed property with the recorded
// value and the value in the cloud, or that the resource is gone. Markdown, for the job log and the job summary alike.
// Node.js only, no packages.
//
//   node drift-report.mjs <refresh-output.txt> [stack]
//
// Exits 0 once it has reported (the refresh's own exit status is the alarm), 1 when it cannot read the file. Secret
// values are never shown: the CLI prints them as [secret]. (The refresh's --json output cannot serve here: in a
// preview it carries the recorded outputs, not the ones read from the cloud.)
import console from "node:console";
import { readFileSync } from "node:fs";
import process from "node:process";

const [file, stack = "the stack"] = process.argv.slice(2);
if (file === undefined) {
  console.error("usage: node drift-report.mjs <refresh-output.txt> [stack]");
  process.exit(1);
}
const lines = readFileSync(file, "utf8").replace(/\r/g, "").split("\n");

const MAX = 80;
const short = (text) => (text.length > MAX ? `${text.slice(0, MAX - 1)}…` : text);
// `    ~ pulumi-nodejs:dynamic/cloudinfra:Network: (update)`
const header = /^\s*(?:[~+-]|\+-|-\+)?\s*([A-Za-z][\w./-]*(?::[\w./-]+)+): \(([\w-]+)\)\s*$/;
// `      ~ description : "old" => "new"`, `          ~ [0]: {`, `        cidrBlock : "10.0.0.0/24"`
const property = /^(\s*)(?:([~+-])\s+)?(\S+?)\s*: (.*)$/;

const resources = [];
let current;
let path = [];
for (const line of lines) {
  if (/^Resources:/.test(line)) break;
  const head = header.exec(line);
  if (head) {
    current = { type: head[1], op: head[2], name: undefined, changes: [] };
    resources.push(current);
    path = [];
    continue;
  }
  if (current === undefined) continue;
  const urn = /^\s*\[urn=(.+)\]\s*$/.exec(line);
  if (urn) {
    current.name = urn[1].split("::").pop();
    continue;
  }
  const prop = property.exec(line);
  if (!prop || prop[3].startsWith("[urn=") || prop[3].startsWith("[id=")) continue;
  const [, indent, marker, key, rest] = prop;
  const column = indent.length + (marker ? 2 : 0);
  path = path.filter((p) => p.column < column);
  const name = [...path.map((p) => p.key), key].join(".").replace(/\.\[/g, "[");
  if (/[[{]$/.test(rest.trim())) path.push({ column, key });
  if (marker === "~" && rest.includes(" => ")) {
    const [before, after] = rest.split(" => ");
    current.changes.push(`\`${name}\` ${short(before.trim())} → ${short(after.trim())}`);
  } else if (marker === "+" && !/[[{]$/.test(rest.trim())) {
    current.changes.push(`\`${name}\` (none) → ${short(rest.trim())}`);
  } else if (marker === "-" && !/[[{]$/.test(rest.trim())) {
    current.changes.push(`\`${name}\` ${short(rest.trim())} → (none)`);
  }
}

const managed = resources.filter((r) => r.type !== "pulumi:pulumi:Stack" && !r.type.startsWith("pulumi:providers:"));
const drifted = managed.filter((r) => r.op !== "same");
const errors = lines.filter((line) => /^error: /.test(line)).filter((line) => !/no changes were expected/.test(line));

if (errors.length > 0) {
  console.log(`**The refresh of \`${stack}\` failed**, so drift is unknown:`);
  for (const line of errors) console.log(`- ${line.replace(/^error: /, "")}`);
}
if (drifted.length === 0 && errors.length === 0) {
  console.log(`No drift in \`${stack}\`: the cloud holds what the stack recorded.`);
} else if (drifted.length > 0) {
  const count = drifted.length === 1 ? "1 resource differs" : `${drifted.length} resources differ`;
  console.log(`**Drift in \`${stack}\`**: ${count} from what the stack recorded.`);
  console.log("");
  for (const r of drifted) {
    const label = `\`${r.name ?? "?"}\` (${r.type.replace(/^pulumi-nodejs:dynamic\//, "")})`;
    if (r.op === "delete") console.log(`- ${label}: gone from the cloud (deleted outside Pulumi)`);
    else console.log(`- ${label}: ${r.changes.length > 0 ? r.changes.join("; ") : r.op}`);
  }
  console.log("");
  console.log(
    "`pulumi up --refresh` puts back what the program declares; to keep a change made outside Pulumi, change the program.",
  );
}
