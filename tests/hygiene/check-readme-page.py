#!/usr/bin/python3
# check-readme-page.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README is the page a newcomer reads first, and stays short: the
# detail is in the pages of docs/. Checks that README.md is at most 15 kB
# (15360 bytes), that every relative link in it (outside code) names a
# file or folder of the source tree, that it links every page of docs/,
# and that every page of docs/ is in the API reference (content_files in
# docs/libmend.toml.in, with a Title: line, and depend_files in
# docs/meson.build).
#
# usage: check-readme-page.py SRCDIR

import glob
import os
import re
import sys
import urllib.parse

srcdir = os.path.abspath(sys.argv[1])
README = os.path.join(srcdir, "README.md")
MAX_BYTES = 15 * 1024


def tap(results):
    print("1..%d" % len(results))
    for i, (name, error) in enumerate(results, 1):
        print(("ok %d %s" if error is None else "not ok %d %s") % (i, name))
        for line in (error or "").splitlines():
            print("# " + line)
    return 0 if all(error is None for _, error in results) else 1


def prose(text):
    """@text without its fenced blocks and code spans, where a link is no link."""
    text = re.sub(r"^(```|~~~).*?^\1[ \t]*$", "", text, flags=re.M | re.S)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.S)


def link_targets(text):
    """The targets of @text's inline links and images, reference definitions and HTML links."""
    text = prose(text)
    targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)", text)
    targets += re.findall(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", text, re.M)
    targets += re.findall(r"\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", text)
    return targets


def relative(target):
    """@target's path if it is a relative link, else None."""
    if target.startswith("#") or target.startswith("//"):
        return None
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
        return None  # https:, mailto:, …
    path = urllib.parse.unquote(re.split(r"[?#]", target, 1)[0])
    return path or None


text = open(README, encoding="utf-8").read()
results = []

# The size, in bytes as `wc -c` counts them.
size = os.path.getsize(README)
results.append(("/Mend/Readme/at-most-15-kB",
                None if size <= MAX_BYTES else
                "README.md is %d bytes, more than %d: move the detail to a page of docs/" % (size, MAX_BYTES)))

# Every relative link names something in the source tree (a build
# directory is not: a reader of the checkout has none).
paths = [path for path in map(relative, link_targets(text)) if path is not None]
problems = []
for path in paths:
    resolved = os.path.normpath(os.path.join(srcdir, path.lstrip("/")))
    inside = os.path.relpath(resolved, srcdir)
    if inside.startswith(os.pardir):
        problems.append("%s: outside the source tree" % path)
    elif re.match(r"_?build", inside.split(os.sep)[0]):
        problems.append("%s: in a build directory, which a checkout has not" % path)
    elif not os.path.exists(resolved):
        problems.append("%s: no such file" % path)
if not paths:
    problems.append("no relative link found: the README links its docs pages")
results.append(("/Mend/Readme/relative-links-name-files-that-exist", "\n".join(problems) or None))

# Every page of docs/ is linked from the README.
pages = sorted(os.path.relpath(p, srcdir) for p in glob.glob(os.path.join(srcdir, "docs", "*.md")))
linked = {os.path.normpath(path.lstrip("/")) for path in paths}
missing = [page for page in pages if page not in linked]
results.append(("/Mend/Readme/links-every-docs-page",
                "README.md does not link %s" % ", ".join(missing) if missing else None))

# Every page of docs/ is in the API reference, and every page there exists.
toml = open(os.path.join(srcdir, "docs", "libmend.toml.in"), encoding="utf-8").read()
content = re.search(r"^content_files\s*=\s*\[(.*?)\]", toml, re.M | re.S)
content = re.findall(r"\"([^\"]+)\"", content.group(1)) if content else []
build = open(os.path.join(srcdir, "docs", "meson.build"), encoding="utf-8").read()
depend = re.search(r"depend_files:\s*files\((.*?)\)", build, re.S)
depend = re.findall(r"'([^']+)'", depend.group(1)) if depend else []
problems = []
for page in pages:
    name = os.path.basename(page)
    if name not in content:
        problems.append("%s is not in content_files of docs/libmend.toml.in" % page)
    if name not in depend:
        problems.append("%s is not in depend_files of docs/meson.build" % page)
for name in content:
    path = os.path.join(srcdir, "docs", name)
    if not os.path.exists(path):
        problems.append("docs/libmend.toml.in lists %s, which is not in docs/" % name)
    elif not open(path, encoding="utf-8").readline().startswith("Title: "):
        problems.append("docs/%s has no Title: line for the reference's index" % name)
results.append(("/Mend/Readme/docs-pages-are-in-the-reference", "\n".join(problems) or None))

sys.exit(tap(results))
