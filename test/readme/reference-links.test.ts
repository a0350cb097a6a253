/**
 * The links of the documentation pages (README.md, docs/_index.md, docs/installation-configuration.md,
 * docs/guides/*.md): every relative link names a file or directory that exists and, with an anchor into a Markdown
 * page, one of its headings. The guide on resources leaves the list of each kind's outputs to the generated reference
 * pages (docs/reference, `npm run docs`) and links them: every kind with a section of its own links its page's
 * outputs. (The README once listed outputs by hand, and the lists fell behind the declarations.)
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";
import { kinds } from "../../provider/resources";
import { documentationPages } from "./blocks";

const root = path.resolve(__dirname, "../..");

interface Link {
  page: string;
  /** The target, relative to the repository's root. */
  target: string;
  anchor?: string;
}

/** The relative links of a page (not `http(s):`, not `mailto:`), resolved against the page's directory. */
function linksOf(page: string): Link[] {
  const text = fs
    .readFileSync(path.join(root, page), "utf8")
    .replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\1\2\s*$/gm, "") // not inside code blocks
    .replace(/`[^`\n]*`/g, ""); // nor code spans
  return [...text.matchAll(/\]\(([^)\s]*)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [file, anchor] = href.split("#") as [string, string | undefined];
      const target = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      return { page, target, anchor };
    });
}

/** GitHub's anchor of a Markdown heading. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

const links = documentationPages(root).flatMap(linksOf);

it("every relative link names a file that exists, and a heading of it", () => {
  expect(links.length).toBeGreaterThan(50);
  const broken = links.filter(({ target, anchor }) => {
    const file = path.join(root, target.replace(/\/$/, ""));
    if (!fs.existsSync(file)) return true;
    if (anchor === undefined || !target.endsWith(".md")) return false;
    const headings = [...fs.readFileSync(file, "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
    return !headings.includes(anchor);
  });
  expect(broken.map((l) => `${l.page} → ${l.target}${l.anchor === undefined ? "" : `#${l.anchor}`}`)).toEqual([]);
});

it("every resource kind with a section of its own links its reference page's outputs, and lists none by hand", () => {
  const page = "docs/guides/resources.md";
  const text = fs.readFileSync(path.join(root, page), "utf8");
  const sections = Object.keys(kinds).filter((kind) => new RegExp(`^## ${kind}$`, "m").test(text));
  expect(sections.length).toBeGreaterThan(5);
  const kebab = (kind: string) => kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  const fromPage = linksOf(page);
  const unlinked = sections.filter(
    (kind) => !fromPage.some((l) => l.target === `docs/reference/${kebab(kind)}.md` && l.anchor === "outputs"),
  );
  expect(unlinked).toEqual([]);
  expect(text).not.toMatch(/Outputs: every argument/);
});
