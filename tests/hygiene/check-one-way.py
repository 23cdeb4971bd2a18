#!/usr/bin/env python3
# check-one-way.py — a sender calls nothing of the chat's or of its subagent retry's
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-one-way.py STATIC-LIBRARY NM
#
# Reads the undefined symbols of each object file of the static library. The
# files of a sender — the stream observer, the agents, ACP, HTTP — must not
# call a function of the chat's files (mend_chat_*) or of the subagent
# retry's (mend_subagent_retry_*): what an agent reports goes through the host
# table its chat lent it. Their GTypes, for type checks, are allowed.

import re
import subprocess
import sys

# Object files of a part's folder are named "<folder>_<file>.c.o".
SENDER = re.compile(r"^(?:(?:http|agent|acp)_)?mend-(stream-observer|agent|acp|http)[-a-z]*\.c\.o$")
FORBIDDEN = re.compile(r"^mend_(chat|subagent_retry)_\w+$")

library, nm = sys.argv[1], sys.argv[2]
out = subprocess.run([nm, "-A", "-u", library], check=True, capture_output=True, text=True).stdout

senders = set()
calls = []
for line in out.splitlines():
    # "libmend-1.a:mend-stream-observer.c.o:                 U mend_chat_get_turn"
    head, _, symbol = line.rpartition(" ")
    member = head.split(":")[-2].rsplit("/", 1)[-1] if head.count(":") >= 2 else ""
    if not SENDER.match(member):
        continue
    senders.add(member)
    if FORBIDDEN.match(symbol) and not symbol.endswith("_get_type"):
        calls.append((member, symbol))

print(f"1..{len(senders) or 1}")
if not senders:
    print("not ok 1 no sender object file found in " + library)
    sys.exit(1)
failed = False
for i, member in enumerate(sorted(senders), 1):
    bad = sorted(symbol for m, symbol in calls if m == member)
    if bad:
        failed = True
        print(f"not ok {i} {member} calls {', '.join(bad)}")
    else:
        print(f"ok {i} {member} calls nothing of the chat's or the subagent retry's")
sys.exit(1 if failed else 0)
