/**
 * The tables of the documentation pages that are generated (`npm run docs` writes them, tests compare them): each sits
 * in its page (`file`) between two HTML comments. Kept apart from docs.ts so that checking the error codes does not
 * load the resource kinds.
 */
import { errorCatalogue } from "../provider/client/error-codes";
import { numericSettings, settingDeclarations, settingSources, type SettingName } from "../provider/resources/settings";

/** A generated block of a documentation page: a table between two HTML comments, made anew by `npm run docs`. */
export interface ReadmeTable {
  /** The page holding it, relative to the repository's root. */
  file: string;
  start: string;
  end: string;
  header: string[];
  rows: () => string[][];
}

/** The error codes, from the catalogue (provider/client/error-codes.ts): code, raised by, meaning, what to do. */
export const errorCodesTable: ReadmeTable = {
  file: "docs/guides/troubleshooting.md",
  start:
    "<!-- error-codes: generated from provider/client/error-codes.ts; test/tools/error-catalogue.test.ts checks it -->",
  end: "<!-- /error-codes -->",
  header: ["code", "raised by", "what it means", "what to do"],
  rows: () =>
    Object.entries(errorCatalogue).map(([code, entry]) => [
      code === "HTTP_STATUS" ? "`HTTP_<status>`" : `\`${code}\``,
      entry.origin === "api" ? "the API" : "the provider",
      entry.summary,
      entry.fix,
    ]),
};

/** A setting's default as a reader takes it, with a number's range: `3; 0 to 10`, `1800000 (30 min); at least 1000`. */
function defaultOf(name: SettingName): string {
  if (name === "skipCredentialsValidation") return "`false`";
  const numeric = (numericSettings as Partial<Record<SettingName, { fallback: number; min: number; max: number }>>)[
    name
  ];
  if (numeric === undefined) return "none";
  const { fallback, min, max } = numeric;
  const minutes = fallback >= 60_000 && fallback % 60_000 === 0 ? ` (${fallback / 60_000} min)` : "";
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`;
  return `\`${fallback}\`${minutes}; ${range}`;
}

/**
 * The provider's settings, from their declaration (provider/resources/settings.ts): stack config key, environment
 * variable, whether it is a secret, its default, what it is.
 */
export const settingsTable: ReadmeTable = {
  file: "docs/installation-configuration.md",
  start: "<!-- settings: generated from provider/resources/settings.ts; test/readme/readme.test.ts checks it -->",
  end: "<!-- /settings -->",
  header: ["stack config", "environment", "secret", "default", "meaning"],
  rows: () =>
    (Object.keys(settingSources) as SettingName[]).map((name) => [
      `\`cloudinfra:${name}\``,
      `\`${settingSources[name]}\``,
      settingDeclarations[name].secret ? "yes" : "no",
      defaultOf(name),
      settingDeclarations[name].description,
    ]),
};

function blockBounds(readme: string, table: ReadmeTable): [number, number] {
  const start = readme.indexOf(table.start);
  const end = readme.indexOf(table.end);
  if (start < 0 || end < start) throw new Error(`${table.file} lacks the block ${table.start} … ${table.end}`);
  return [start, end];
}

/** The rows of one of the generated tables in the text of its page, as cells (without the header). */
export function readmeTableRows(readme: string, table: ReadmeTable): string[][] {
  const [start, end] = blockBounds(readme, table);
  return readme
    .slice(start + table.start.length, end)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("|"))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    );
}

/** `readme` with one generated table made anew (formatted by Prettier afterwards). */
export function withTable(readme: string, table: ReadmeTable): string {
  const [start, end] = blockBounds(readme, table);
  const indent = readme.slice(readme.lastIndexOf("\n", start) + 1, start);
  const rows = [table.header, table.header.map(() => "---"), ...table.rows()];
  const text = rows.map((cells) => `${indent}| ${cells.join(" | ")} |`).join("\n");
  return `${readme.slice(0, start)}${table.start}\n\n${text}\n\n${indent}${readme.slice(end)}`;
}
