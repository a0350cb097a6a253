/**
 * The tables of README.md that are generated (`npm run docs` writes them, tests compare them): each sits between two
 * HTML comments. Kept apart from docs.ts so that checking the error codes does not load the resource kinds.
 */
import { errorCatalogue } from "../provider/client/error-codes";

/** A generated block of README.md: a table between two HTML comments, made anew by `npm run docs`. */
export interface ReadmeTable {
  start: string;
  end: string;
  header: string[];
  rows: () => string[][];
}

/** The error codes, from the catalogue (provider/client/error-codes.ts): code, raised by, meaning, what to do. */
export const errorCodesTable: ReadmeTable = {
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

function blockBounds(readme: string, table: ReadmeTable): [number, number] {
  const start = readme.indexOf(table.start);
  const end = readme.indexOf(table.end);
  if (start < 0 || end < start) throw new Error(`README.md lacks the block ${table.start} … ${table.end}`);
  return [start, end];
}

/** The rows of one of README.md's generated tables, as cells (without the header). */
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
