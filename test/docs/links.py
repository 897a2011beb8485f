#!/usr/bin/python3
"""Every link of the documentation resolves (TAP, one test per file): in
README.md, ARCHITECTURE.md and docs/*.md, a relative link names a file or
directory of the repository, and a link with #anchor names a heading of its
target file by GitHub's rules (lower case; characters other than letters,
digits, spaces, '-' and '_' dropped; spaces to '-'; the second heading of one
name gets -1, the third -2, ...).  Links to other sites are checked for form
only (http:// or https://, a host, no spaces): nothing is fetched.  Links
inside code (fenced blocks and `spans`) are not links.

  links.py [ROOT]      ROOT: the repository (default: two directories up)"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))

# [text](target) and ![alt](target), the target with an optional "title"
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/\S*)?$")


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    text = re.sub(r"<[^>]+>", "", text)                         # inline HTML
    text = text.replace("`", "")                                # code: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose(text, spans=True):
    """The text outside fenced code, with fenced lines emptied (so offsets keep their line numbers) and, with spans,
    inline code spans blanked."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            out.append("")
        elif fence is not None:
            out.append("")
        elif spans:
            out.append(re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line))
        else:
            out.append(line)
    return "\n".join(out)


ANCHORS = {}


def anchors(path):
    """The anchors of a Markdown file: its headings' slugs and <a name/id> tags."""
    if path not in ANCHORS:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, out = {}, set()
        for line in prose(text, spans=False).split("\n"):
            h = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                s = slug(h.group(1))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else f"{s}-{k}")
        out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
        ANCHORS[path] = out
    return ANCHORS[path]


def check(path):
    """The number of links of one file, and its broken ones: a list of (line, target, why)."""
    bad, count = [], 0
    with open(path, encoding="utf-8") as f:
        text = prose(f.read())
    for m in LINK.finditer(text):
        count += 1
        n = text.count("\n", 0, m.start(1)) + 1
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            if target.lower().startswith(("http:", "https:")):
                if not URL.match(target):
                    bad.append((n, target, "not a well-formed http(s) address"))
            elif not target.startswith("mailto:"):
                bad.append((n, target, "a scheme other than http, https or mailto"))
            continue
        file, _, anchor = target.partition("#")
        if not file and not anchor:
            bad.append((n, target, "an empty link"))
            continue
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if os.path.isabs(file) or os.path.relpath(dest, ROOT).startswith(".."):
            bad.append((n, target, "outside the repository"))
        elif not os.path.exists(dest):
            bad.append((n, target, f"no file {os.path.relpath(dest, ROOT)}"))
        elif anchor and (os.path.isdir(dest) or not dest.endswith(".md")):
            bad.append((n, target, "an anchor in a file that is not Markdown"))
        elif anchor and anchor not in anchors(dest):
            bad.append((n, target, f"no heading #{anchor} in {os.path.relpath(dest, ROOT)}"))
    return count, bad


def main():
    files = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "ARCHITECTURE.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    print(f"1..{len(files)}")
    failed = 0
    for i, path in enumerate(files, 1):
        name = os.path.relpath(path, ROOT)
        if not os.path.isfile(path):
            failed += 1
            print(f"not ok {i} - {name}: no such file")
            continue
        count, bad = check(path)
        if bad:
            failed += 1
            print(f"not ok {i} - {name}: {len(bad)} of {count} links broken")
            for n, target, why in bad:
                print(f"#   {name}:{n}: ({target}): {why}")
        else:
            print(f"ok {i} - {name}: {count} links, every one resolves")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
