#!/usr/bin/python3
"""The Cookbook (docs/cookbook.md) shows the code that the client tests run (TAP): every
line of its code blocks, less a trailing comment and semicolon, is in a file
under test/clients (white space aside); lines that are only a comment are
examples of output.  A block right after "<!-- test: NAME -->" is SQL that a
TAP test runs as written instead (doc_blocks in test/t/CosidTest.pm), and the
```text block right after it is its output, which test/t/090_doc_sql.pl
compares: neither is client code.  And every client program
(test/clients/*/*_test.*) is named in it.  The Cookbook: $COSID_DOCS/cookbook.md, else the checkout's."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tap import Tap  # noqa: E402

CLIENTS = os.path.dirname(HERE)
COOKBOOK = os.path.join(os.environ.get("COSID_DOCS") or os.path.join(CLIENTS, "..", "..", "docs"), "cookbook.md")
COMMENT = {"python": "#", "sh": "#", "java": "//", "js": "//", "sql": "--", "prisma": "//", "go": "//", "rust": "//", "toml": "#"}


def squeeze(text):
    return re.sub(r"\s+", " ", text).strip()


def sources():
    out = []
    for root, dirs, files in os.walk(CLIENTS):
        dirs[:] = [d for d in dirs if d not in ("node_modules", "__pycache__", "target")]
        for name in files:
            if name.endswith((".py", ".java", ".js", ".sh", ".ini", ".mako", ".prisma", ".go", ".rs", ".toml")):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    out.append(squeeze(f.read()))
    return " \n ".join(out)


def main(t):
    with open(COOKBOOK, encoding="utf-8") as f:
        cookbook = f.read()
    section = re.search(r"\A# Cookbook\n(.*)\Z", cookbook, re.S)
    if not t.ok(section is not None, "docs/cookbook.md is the Cookbook"):
        return
    blocks = []
    tap_run_end = None  # where the last block a TAP test runs ended
    for m in re.finditer(r"^```(\w+)\n(.*?)^```", section.group(1), re.S | re.M):
        before = section.group(1)[:m.start()].rstrip("\n")
        if re.search(r"^[ \t]*<!-- test: \S+ -->\Z", before, re.M):
            tap_run_end = m.end()
            continue
        if m.group(1) == "text" and tap_run_end is not None and not section.group(1)[tap_run_end:m.start()].strip():
            continue
        blocks.append((m.group(1), m.group(2)))
    t.ok(len(blocks) >= 10, f"the Cookbook has code blocks ({len(blocks)})")
    code = sources()
    for n, (lang, body) in enumerate(blocks, 1):
        mark = COMMENT.get(lang, "#")
        missing = []
        for line in body.splitlines():
            text = line.strip()
            if not text or text.startswith(mark):
                continue
            if squeeze(text) in code:
                continue
            text = text.split(f" {mark} ")[0].rstrip().rstrip(";")
            if squeeze(text) not in code:
                missing.append(line)
        first = squeeze(body.splitlines()[0])[:60]
        t.ok(not missing, f"block {n} ({lang}: {first}) is in test/clients", "\n".join(missing))
    programs = sorted(name for d in os.listdir(CLIENTS) if os.path.isdir(os.path.join(CLIENTS, d))
                      for name in os.listdir(os.path.join(CLIENTS, d)) if re.match(r"\w+_test\.\w+$", name))
    for name in programs:
        t.ok(name in section.group(1), f"the Cookbook names {name}")


Tap().run(main)
