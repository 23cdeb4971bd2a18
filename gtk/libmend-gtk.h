/* libmend-gtk.h — the one header apps of libmend-gtk include
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gtk/gtk.h>
#include <libmend.h>

G_BEGIN_DECLS

#define MEND_GTK_INSIDE
# include "mend-gtk-version-macros.h"
# include "mend-gtk-status-banner.h"
# include "mend-gtk-queue-view.h"
#undef MEND_GTK_INSIDE

G_END_DECLS
