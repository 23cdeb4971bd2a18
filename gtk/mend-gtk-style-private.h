/* mend-gtk-style-private.h — the widgets' fallback style
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void mend_gtk_style_ensure (GtkWidget *widget);

G_END_DECLS
