/* mend-gtk-queue-view.h — MendGtkQueueView: a chat's queued follow-ups, each with edit and remove
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

#define MEND_GTK_TYPE_QUEUE_VIEW (mend_gtk_queue_view_get_type ())

MEND_GTK_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendGtkQueueView, mend_gtk_queue_view, MEND_GTK, QUEUE_VIEW, GtkWidget)

MEND_GTK_AVAILABLE_IN_0_2
GtkWidget *mend_gtk_queue_view_new      (MendChat         *chat);
MEND_GTK_AVAILABLE_IN_0_2
MendChat  *mend_gtk_queue_view_get_chat (MendGtkQueueView *self);
MEND_GTK_AVAILABLE_IN_0_2
void       mend_gtk_queue_view_set_chat (MendGtkQueueView *self,
                                         MendChat         *chat);

G_END_DECLS
