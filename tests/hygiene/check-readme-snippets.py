#!/usr/bin/python3
# check-readme-snippets.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's example, as written, in one language: extracted from its
# fenced block (```c, ```python, ```vala under "The same example in three
# languages"), built against the build tree (pkg-config's uninstalled file
# for C; the build's vapi for Vala; GI_TYPELIB_PATH and LD_LIBRARY_PATH for
# Python) and run against tests/support/model-server.py on loopback, whose first
# answer is a 429 with Retry-After: 3. It must stream the answer, print at
# least three lines of the chat's status counting the wait down (retrying in
# 3, 2, 1 s), show
# the final answer and exit 0. With "overview", checks that
# docs/overview.md shows the same three blocks.
#
# usage: check-readme-snippets.py LANG SRCDIR BUILDDIR [COMPILER]

import json
import os
import re
import subprocess
import sys
import tempfile

lang, srcdir, builddir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
compiler = sys.argv[4:]
SECTION = "## The same example in three languages"
FENCES = {"c": "c", "python": "python", "vala": "vala"}


def blocks(path, section=None):
    """The first fenced block of each language, in @section if given."""
    text = open(path, encoding="utf-8").read()
    if section is not None:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end >= 0 else len(text)]
    found = {}
    for fence, body in re.findall(r"^```(\w+)\n(.*?)^```$", text, re.M | re.S):
        found.setdefault(fence, body)
    return found


def tap(results):
    print("1..%d" % len(results))
    for i, (name, error) in enumerate(results, 1):
        print(("ok %d %s" if error is None else "not ok %d %s") % (i, name))
        for line in (error or "").splitlines():
            print("# " + line)
    return 0


readme = blocks(os.path.join(srcdir, "README.md"), SECTION)

if lang == "overview":
    overview = blocks(os.path.join(srcdir, "docs", "overview.md"))
    results = []
    for fence in FENCES:
        error = None
        if fence not in readme:
            error = "README.md has no ```%s block under %r" % (fence, SECTION)
        elif overview.get(fence) != readme[fence]:
            error = "docs/overview.md's first ```%s block is not the README's" % fence
        results.append(("/Mend/Readme/overview-shows-the-same-%s-example" % fence, error))
    sys.exit(tap(results))

source = readme[FENCES[lang]]
work = tempfile.mkdtemp(prefix="readme-%s-" % lang)
env = dict(os.environ, LC_ALL="C.UTF-8", LANGUAGE="", GIO_USE_PROXY_RESOLVER="dummy",
           ANTHROPIC_API_KEY="sk-ant-test-not-a-key")
lib = os.path.join(builddir, "lib")
env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
name = "/Mend/Readme/%s-example-builds-and-runs-as-written" % lang


def fail(message):
    sys.exit(tap([(name, message)]))


def build(cmd, **kwargs):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, **kwargs)
    if p.returncode != 0:
        fail("%s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))


if lang == "c":
    path = os.path.join(work, "readme.c")
    open(path, "w").write(source)
    env["PKG_CONFIG_PATH"] = os.path.join(builddir, "meson-uninstalled")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmend-1-uninstalled"],
                           capture_output=True, text=True, env=env, check=True).stdout.split()
    program = [os.path.join(work, "readme")]
    build(compiler + ["-Wall", "-Werror", "-o", program[0], path] + flags)
elif lang == "vala":
    path = os.path.join(work, "readme.vala")
    open(path, "w").write(source)
    # As docs/compiling.md says for an uninstalled build.
    program = [os.path.join(work, "readme")]
    env["PKG_CONFIG_PATH"] = os.path.join(builddir, "meson-uninstalled")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmend-1-uninstalled"],
                           capture_output=True, text=True, env=env, check=True).stdout.split()
    build(compiler + ["--pkg", "libmend-1", "--pkg", "libsoup-3.0",
                      "--vapidir", os.path.join(builddir, "introspection")] +
                     [arg for flag in flags for arg in ("-X", flag)] + [
                      "-X", "-Werror=implicit-function-declaration",
                      "-o", program[0], path], cwd=work)
elif lang == "python":
    path = os.path.join(work, "readme.py")
    open(path, "w").write(source)
    env["GI_TYPELIB_PATH"] = os.path.join(builddir, "introspection")
    program = compiler + [path]
else:
    fail("no language %r" % lang)

rules = [
    {"match": "Fix the failing build", "times": 1,
     "answer": {"kind": "status", "status": 429, "retry_after": 3}},
    {"match": "Fix the failing build", "answer": {"kind": "text", "text": "Done: the build is green."}},
    {"match": "Then update the changelog", "answer": {"kind": "text", "text": "The changelog is updated."}},
]
script = os.path.join(work, "rules.json")
json.dump(rules, open(script, "w"))
server = subprocess.Popen([sys.executable, os.path.join(srcdir, "tests", "support", "model-server.py"), script],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
url = "http://127.0.0.1:%s/v1/messages" % server.stdout.readline().strip()
try:
    p = subprocess.run(program + [url], capture_output=True, text=True, env=env, timeout=30)
finally:
    server.stdin.close()
    server.wait(timeout=10)

out = p.stdout
problems = []
if p.returncode != 0:
    problems.append("exit %d" % p.returncode)
for expected in ["→ Fix the failing build", "(retry 1 of 4)", "Done: the build is green.\n✓ Done: the build is green.",
                 "→ Then update the changelog", "The changelog is updated.\n✓ The changelog is updated."]:
    if expected not in out:
        problems.append("the output lacks %r" % expected)
# The countdown counts: the program prints each drop of the 3 s wait.
countdown = sorted(set(re.findall(r"— retrying in (\d+) s \(retry 1 of 4\)$", out, re.M)), reverse=True)
if len(countdown) < 3:
    problems.append("the countdown shows %d distinct lines, not 3 or more: %s" % (len(countdown), countdown))
fail("\n".join(problems + ["output:", out, p.stderr]) if problems else None)
