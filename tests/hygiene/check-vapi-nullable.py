#!/usr/bin/env python3
# check-vapi-nullable.py — a property Vala reads as non-null is never NULL
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-vapi-nullable.py GIR VAPI
#
# For each property of each class whose getter (get_<name> or
# dup_<name>) can return NULL, the vapi must declare the property's type
# nullable ("Mend.Turn? turn"): gobject-introspection 1.74 cannot say so
# of a property, so introspection/Mend-1.metadata does, and a property
# added without its line there fails here.

import re
import sys
import xml.etree.ElementTree as ET

gir, vapi = sys.argv[1], sys.argv[2]
NS = {"c": "http://www.gtk.org/introspection/core/1.0"}

text = open(vapi, encoding="utf-8").read()
# "public class Chat : GLib.Object" … up to the next class: properties by class.
classes = {}
for m in re.finditer(r"public (?:sealed |abstract )?class (\w+)\b(.*?)(?=\n\t\[CCode|\Z)", text, re.S):
    classes[m.group(1)] = m.group(2)

failures = []
checked = 0
for cls in ET.parse(gir).getroot().iter("{%s}class" % NS["c"]):
    name = cls.get("name")
    methods = {m.get("name"): m for m in cls.findall("c:method", NS)}
    for prop in cls.findall("c:property", NS):
        pname = prop.get("name").replace("-", "_")
        getter = methods.get(prop.get("getter") or "get_" + pname) or methods.get("dup_" + pname)
        if getter is None:
            continue
        ret = getter.find("c:return-value", NS)
        if ret is None or ret.get("nullable") != "1":
            continue
        checked += 1
        decl = re.search(r"public [\w.]+(?:\[\])?\?? %s \{" % re.escape(pname), classes.get(name, ""))
        if decl is None:
            failures.append(f"Mend.{name}:{prop.get('name')}: not in the vapi")
        elif not re.match(r"public [\w.]+(?:\[\])?\?", decl.group(0)):
            failures.append(f"Mend.{name}:{prop.get('name')}: its getter can return NULL, "
                            f"the vapi says '{decl.group(0)[:-2]}' (add '{name}.{pname}#property nullable' "
                            f"to introspection/Mend-1.metadata)")

for f in failures:
    print(f, file=sys.stderr)
print(f"{checked} properties that can be NULL, {len(failures)} not nullable in the vapi")
sys.exit(1 if failures or checked == 0 else 0)
