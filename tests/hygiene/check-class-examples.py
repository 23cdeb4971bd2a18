#!/usr/bin/python3
# check-class-examples.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every public class's page in the API reference shows an example: its
# doc comment has a ```c block. Each block is compiled (syntax and types,
# against the build tree's headers) with the names it takes from its
# surroundings declared first: its leading functions at file scope, the
# statements after them in a function body.
#
# usage: check-class-examples.py GIR BUILDDIR COMPILER…

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

gir, builddir = sys.argv[1], os.path.abspath(sys.argv[2])
compiler = sys.argv[3:]
NS = {"c": "http://www.gtk.org/introspection/core/1.0"}

# What the examples take from the app around them.
CONTEXT = r'''
#include <libmend.h>
typedef struct _GtkLabel GtkLabel;
typedef struct _GtkListView GtkListView;
typedef struct _GtkSelectionModel GtkSelectionModel;
void gtk_label_set_text (GtkLabel *label, const char *text);
void gtk_list_view_set_model (GtkListView *view, GtkSelectionModel *model);
GtkSelectionModel *gtk_no_selection_new (GListModel *model);
#define GTK_SELECTION_MODEL(x) ((GtkSelectionModel *) (x))
static MendHttpSender *sender;
static MendChat *chat;
static const char *api_key;
static GError *error;
static const char *url;
static const char *saved_json;
static GtkLabel *banner;
static GtkListView *view;
static void on_turn_started (MendChat *c, MendTurn *t, gpointer d) {}
static void on_watch_done (GObject *o, GAsyncResult *r, gpointer d) {}
static void on_waiting_ (MendTurn *t, MendRetryWait *w, GtkLabel *b) {}
static void on_items_changed_ (GListModel *l, guint p, guint r, guint a, gpointer d) {}
'''

env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(builddir, "meson-uninstalled"))
flags = subprocess.run(["pkg-config", "--cflags", "libmend-1-uninstalled"], env=env,
                       capture_output=True, text=True, check=True).stdout.split()
root = ET.parse(gir).getroot()
results = []
for kind in ("class", "interface"):
    for element in root.iter("{%s}%s" % (NS["c"], kind)):
        name = element.get("{http://www.gtk.org/introspection/c/1.0}type") or element.get("name")
        doc = element.find("c:doc", NS)
        blocks = re.findall(r"^```c\n(.*?)^```$", doc.text if doc is not None else "", re.M | re.S)
        test = "/Mend/Docs/%s-page-shows-an-example" % name
        if not blocks:
            results.append((test, "the doc comment of %s has no ```c block" % name))
            continue
        lines = blocks[0].rstrip("\n").split("\n")
        last = max([i for i, line in enumerate(lines) if line == "}"] or [-1])
        functions, statements = "\n".join(lines[:last + 1]), "\n".join(lines[last + 1:])
        # A name the example defines itself wins over the context's.
        context = CONTEXT
        for helper in ("on_waiting", "on_items_changed"):
            if "%s (" % helper not in functions:
                context = context.replace("%s_ (" % helper, "%s (" % helper)
        source = "%s\n%s\nvoid example (void);\nvoid example (void)\n{\n%s\n}\n" % (context, functions, statements)
        with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
            f.write(source)
        p = subprocess.run(compiler + ["-fsyntax-only", "-Wall", "-Werror", "-Wno-unused", f.name] + flags,
                           capture_output=True, text=True)
        os.unlink(f.name)
        results.append((test, None if p.returncode == 0 else "%s's example does not compile:\n%s" % (name, p.stderr)))

print("1..%d" % len(results))
for i, (name, error) in enumerate(results, 1):
    print(("ok %d %s" if error is None else "not ok %d %s") % (i, name))
    for line in (error or "").splitlines():
        print("# " + line)
