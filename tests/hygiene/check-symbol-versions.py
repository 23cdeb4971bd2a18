#!/usr/bin/python3
# check-symbol-versions.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every symbol the shared library exports is declared in a public header
# with the release it came in (MEND_AVAILABLE_IN_x_y); none is declared
# with the unversioned MEND_AVAILABLE_IN_ALL, none is deprecated (before
# 1.0 a name that goes is removed), and no versioned declaration names a
# symbol the library does not export. Prints the count per version.
#
# usage: check-symbol-versions.py LIBRARY NM HEADER…

import collections
import re
import subprocess
import sys

library, nm, headers = sys.argv[1], sys.argv[2], sys.argv[3:]

out = subprocess.run([nm, "-D", "--defined-only", library], capture_output=True,
                     text=True, check=True).stdout
exported = {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TDBRVW"}

# A decorator, then the declaration up to its semicolon or closing parenthesis.
DECL = re.compile(r"\b(MEND_(?:AVAILABLE_IN_\w+|DEPRECATED_IN_\w+?(?:_FOR\s*\([^)]*\))?))\s+"
                  r"([^;]*?(?:;|G_DECLARE_\w+\s*\([^)]*\)))", re.S)
declared = {}
unversioned = []
deprecated_names = []
for header in headers:
    text = open(header, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)   # doc comments name symbols too
    text = re.sub(r"^#\s*define.*$", "", text, flags=re.M)
    for deprecated in re.findall(r"\bMEND_DEPRECATED\w*(?:\s*\([^)]*\))?\s+[^;]*?(\w+)\s*\(", text):
        deprecated_names.append(f"{header}: {deprecated}")
    for decorator, decl in DECL.findall(text):
        m = re.match(r"G_DECLARE_\w+\s*\(\s*\w+\s*,\s*(\w+)", decl)
        name = m.group(1) + "_get_type" if m else re.search(r"(\w+)\s*\(", decl).group(1)
        version = re.sub(r"_FOR\s*\(.*", "", decorator)
        if version == "MEND_AVAILABLE_IN_ALL":
            unversioned.append(f"{header}: {name}")
        declared[name] = version

failures = []
for name in sorted(exported - set(declared)):
    failures.append(f"exported but not declared with a version: {name}")
for name in sorted(set(declared) - exported):
    failures.append(f"declared with a version but not exported: {name}")
for where in unversioned:
    failures.append(f"declared with MEND_AVAILABLE_IN_ALL, give it its version: {where}")
for where in deprecated_names:
    failures.append(f"deprecated before 1.0, remove it instead: {where}")
for failure in failures:
    print(failure, file=sys.stderr)
counts = collections.Counter(declared[name] for name in exported if name in declared)
print(", ".join(f"{v}: {n}" for v, n in sorted(counts.items())), f"({len(exported)} exported)")
sys.exit(1 if failures else 0)
