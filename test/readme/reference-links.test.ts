/**
 * The README leaves the list of each kind's outputs to the generated reference pages (docs/reference, `npm run docs`)
 * and links them: every link into docs/reference names a page that exists and, with an anchor, one of its headings;
 * every resource kind's section links its page's outputs. (The README once listed outputs by hand, and the lists fell
 * behind the declarations.)
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";
import { kinds } from "../../provider/resources";

const root = path.resolve(__dirname, "../..");
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
const links = [...readme.matchAll(/\]\((docs\/reference\/[^)#\s]+)(?:#([^)\s]+))?\)/g)].map((m) => ({
  page: m[1]!,
  anchor: m[2],
}));

/** GitHub's anchor of a Markdown heading. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

it("every link into docs/reference names a page that exists, and a heading of it", () => {
  expect(links.length).toBeGreaterThan(0);
  const broken = links.filter(({ page, anchor }) => {
    const file = path.join(root, page);
    if (!fs.existsSync(file)) return true;
    if (anchor === undefined) return false;
    const headings = [...fs.readFileSync(file, "utf8").matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
    return !headings.includes(anchor);
  });
  expect(broken).toEqual([]);
});

it("every resource kind with a section of its own links its reference page's outputs, and lists none by hand", () => {
  const sections = Object.keys(kinds).filter((kind) => new RegExp(`^### ${kind}$`, "m").test(readme));
  expect(sections.length).toBeGreaterThan(0);
  const kebab = (kind: string) => kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  const unlinked = sections.filter(
    (kind) => !links.some((l) => l.page === `docs/reference/${kebab(kind)}.md` && l.anchor === "outputs"),
  );
  expect(unlinked).toEqual([]);
  expect(readme).not.toMatch(/Outputs: every argument/);
});
