/* mend-gtk-status-banner.h — MendGtkStatusBanner: a chat's retry state, with Retry now, Stop and Retry
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_GTK_INSIDE) && !defined (MEND_GTK_COMPILATION)
# error "Only <libmend-gtk.h> can be included directly."
#endif

#include <gtk/gtk.h>
#include <libmend.h>

#include "mend-gtk-version-macros.h"

G_BEGIN_DECLS

#define MEND_GTK_TYPE_STATUS_BANNER (mend_gtk_status_banner_get_type ())

MEND_GTK_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendGtkStatusBanner, mend_gtk_status_banner, MEND_GTK, STATUS_BANNER, GtkWidget)

MEND_GTK_AVAILABLE_IN_0_2
GtkWidget *mend_gtk_status_banner_new      (MendChat            *chat);
MEND_GTK_AVAILABLE_IN_0_2
MendChat  *mend_gtk_status_banner_get_chat (MendGtkStatusBanner *self);
MEND_GTK_AVAILABLE_IN_0_2
void       mend_gtk_status_banner_set_chat (MendGtkStatusBanner *self,
                                            MendChat            *chat);

G_END_DECLS
