#!/usr/bin/env python3
# check-test-private.py — no exported symbol is there for the tests only
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-test-private.py SHARED-LIBRARY NM TESTS-DIR LIST LIB-DIR STATIC-LIBRARY…
#
# The tests link the layers' static libraries, so they may call what the shared
# library does not export: the seams an app has no use for. LIST
# (tests/hygiene/test-private-symbols.txt) is the reviewed record of those.
# Finds the library's symbols that the C sources under TESTS-DIR (every
# folder) name, outside comments and string literals, and those they call
# through g_autoptr () and g_auto () (the cleanup functions the headers
# under LIB-DIR and TESTS-DIR give their types), and fails when
#   - a symbol on the list is exported by the shared library: a test seam
#     went back into the public API;
#   - the tests use a symbol that is not exported and not on the list: add it
#     there, or export it if apps are meant to call it;
#   - a symbol on the list is used by no test any more: take it off.

import os
import re
import subprocess
import sys

shared_library, nm, tests_dir, list_file, lib_dir = sys.argv[1:6]
# The static library of each layer of lib/.
static_libraries = sys.argv[6:]

SOURCE_SUFFIXES = (".c", ".h")
IDENTIFIER = re.compile(r"\bmend_\w+")
# Comments and the text of strings and character constants go, so that a
# name in a comment or a string is not taken for a use and a "/*" inside a
# string is no comment.
TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A type's cleanup function, which g_autoptr (Type) or g_auto (Type) calls
# without naming it.
CLEANUP = re.compile(r"\bG_DEFINE_AUTO(?:PTR_CLEANUP|_CLEANUP_CLEAR|_CLEANUP_FREE)_FUNC\s*"
                     r"\(\s*(\w+)\s*,\s*(\w+)")
AUTO = re.compile(r"\bg_auto(?:ptr)?\s*\(\s*(\w+)\s*\)")


def defined(args):
    out = subprocess.run([nm] + args, capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TDBRVW"}


def strip_comments(text):
    def blank(match):
        token = match.group(0)
        return " " if token.startswith("/") else token[0] * 2
    return TOKENS.sub(blank, text)


def sources(folder):
    for parent, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(parent, name)
                with open(path, encoding="utf-8", errors="replace") as source:
                    yield path, strip_comments(source.read())


library = defined(["--defined-only"] + static_libraries)
exported = defined(["-D", "--defined-only", shared_library])
if not library or not exported:
    print(f"no symbols found in {' '.join(static_libraries)} or {shared_library}", file=sys.stderr)
    sys.exit(1)

cleanup = {}
for folder in (lib_dir, tests_dir):
    for path, text in sources(folder):
        cleanup.update(CLEANUP.findall(text))

used = {}
named = set()
n_sources = 0
for path, text in sources(tests_dir):
    n_sources += 1
    names = set(IDENTIFIER.findall(text))
    names |= {cleanup[t] for t in AUTO.findall(text) if t in cleanup and IDENTIFIER.fullmatch(cleanup[t])}
    named |= names
    for symbol in names & library:
        used.setdefault(symbol, []).append(os.path.relpath(path, tests_dir))

listed = {}
with open(list_file, encoding="utf-8") as lines:
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not re.fullmatch(r"mend_\w+", line) or line in listed:
            print(f"{list_file}:{number}: not one symbol name a line, or named twice: {line}",
                  file=sys.stderr)
            sys.exit(1)
        listed[line] = number

failures = []
for symbol in sorted(set(listed) & exported):
    failures.append(f"{symbol} is a test seam ({os.path.basename(list_file)} line "
                    f"{listed[symbol]}) but the shared library exports it: declare it in its "
                    f"class's private header, without MEND_AVAILABLE_IN_*")
for symbol in sorted(set(used) - exported - set(listed)):
    failures.append(f"the tests use {symbol} ({', '.join(sorted(used[symbol])[:3])}), which the "
                    f"shared library does not export and {os.path.basename(list_file)} does not "
                    f"list: add it to the list, or export it if apps are meant to call it")
# A listed symbol of a part this build leaves out (-Dacp=disabled) is still
# named by the sources of that part's tests.
for symbol in sorted(set(listed) - named):
    failures.append(f"{symbol} is on {os.path.basename(list_file)} (line {listed[symbol]}) but no "
                    f"test uses it any more: take it off the list")

for failure in failures:
    print(failure, file=sys.stderr)
print(f"{n_sources} test sources use {len(used)} library symbols: "
      f"{len(set(used) & exported)} exported, {len(set(used) - exported)} private "
      f"({len(listed)} listed)")
sys.exit(1 if failures else 0)
