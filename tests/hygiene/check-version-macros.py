#!/usr/bin/python3
# check-version-macros.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Compiles small programs against the build tree's <libmend.h> with the
# version macros an app may set, and checks what each one is promised to
# do: the defaults build cleanly, MEND_CHECK_VERSION is true of the
# headers' own version, a range below 0.2 or upside down is an error that
# says so, a symbol marked deprecated warns, and
# MEND_DISABLE_DEPRECATION_WARNINGS silences it.
#
# usage: check-version-macros.py BUILDDIR COMPILER…

import os
import subprocess
import sys
import tempfile

builddir, compiler = os.path.abspath(sys.argv[1]), sys.argv[2:]
env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(builddir, "meson-uninstalled"))
flags = subprocess.run(["pkg-config", "--cflags", "libmend-1-uninstalled"], env=env,
                       capture_output=True, text=True, check=True).stdout.split()

USES_CHAT = "#include <libmend.h>\nvoid f (void) { g_object_unref (mend_chat_new (NULL)); }\n"
# The headers are the version they say they are.
CHECKS_VERSION = ("#include <libmend.h>\n"
                  "#if !MEND_CHECK_VERSION (MEND_MAJOR_VERSION, MEND_MINOR_VERSION, MEND_MICRO_VERSION)\n"
                  "#error MEND_CHECK_VERSION is false against its own headers\n"
                  "#endif\n"
                  "#if !MEND_CHECK_VERSION (0, 2, 0) || MEND_CHECK_VERSION (1, 0, 0)\n"
                  "#error this is libmend 0.2\n"
                  "#endif\n"
                  "void f (void);\n")
# A symbol of the app's own, marked as a deprecated one would be.
USES_DEPRECATED = ("#include <libmend.h>\n"
                   "MEND_DEPRECATED_FOR (mend_chat_new) void old_call (void);\n"
                   "void f (void) { old_call (); }\n")

CASES = [
    # (name, program, defines, compiles, text the compiler must print)
    ("defaults-build-without-a-warning", USES_CHAT, [], True, None),
    ("check-version-is-true-of-its-own-headers", CHECKS_VERSION, [], True, None),
    ("min-and-max-0.2-build-without-a-warning", USES_CHAT,
     ["MEND_VERSION_MIN_REQUIRED=MEND_VERSION_0_2", "MEND_VERSION_MAX_ALLOWED=MEND_VERSION_0_2"], True, None),
    ("min-below-0.2-is-an-error", USES_CHAT,
     ["MEND_VERSION_MIN_REQUIRED=G_ENCODE_VERSION(0,1)"], False,
     "MEND_VERSION_MIN_REQUIRED must be >= MEND_VERSION_0_2"),
    ("max-below-min-is-an-error", USES_CHAT,
     ["MEND_VERSION_MIN_REQUIRED=G_ENCODE_VERSION(0,4)", "MEND_VERSION_MAX_ALLOWED=MEND_VERSION_0_2"], False,
     "MEND_VERSION_MAX_ALLOWED must be >= MEND_VERSION_MIN_REQUIRED"),
    ("deprecated-warns", USES_DEPRECATED, [], False, "mend_chat_new"),
    ("disabled-deprecation-warnings-are-silent", USES_DEPRECATED,
     ["MEND_DISABLE_DEPRECATION_WARNINGS"], True, None),
]

print(f"1..{len(CASES)}")
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for n, (name, program, defines, compiles, expected) in enumerate(CASES, 1):
        source = os.path.join(tmp, "program.c")
        with open(source, "w") as f:
            f.write(program)
        cmd = compiler + flags + ["-D" + d for d in defines] + \
            ["-Wall", "-Werror", "-fsyntax-only", source]
        result = subprocess.run(cmd, capture_output=True, text=True)
        ok = (result.returncode == 0) == compiles and (expected is None or expected in result.stderr)
        if not ok:
            failed += 1
            print(f"# {' '.join(cmd)}\n# " + result.stderr.replace("\n", "\n# "))
        print(f"{'ok' if ok else 'not ok'} {n} /Mend/Version/{name}")
sys.exit(1 if failed else 0)
