/* mend-gtk-style.c — the widgets' fallback style
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "mend-gtk-style-private.h"

/* libadwaita draws .card and .boxed-list; GTK's own theme does not. This
 * sheet draws them alike at the lowest priority, so that any theme's own
 * rules win, and uses only colours every theme has, light or dark. */
static const char fallback_css[] =
  "mendstatusbanner .card, mendqueueview list.boxed-list {"
  "  background-color: alpha(currentColor, 0.04);"
  "  box-shadow: 0 0 0 1px alpha(currentColor, 0.12);"
  "  border-radius: 12px;"
  "}"
  "mendqueueview list.boxed-list > row { border-radius: 12px; }"
  "mendqueueview list.boxed-list > row:not(:last-child) {"
  "  border-bottom: 1px solid alpha(currentColor, 0.12);"
  "  border-bottom-left-radius: 0; border-bottom-right-radius: 0;"
  "}"
  "mendqueueview list.boxed-list > row:not(:first-child) {"
  "  border-top-left-radius: 0; border-top-right-radius: 0;"
  "}"
  "mendstatusbanner image.warning { color: @warning_color; }"
  "mendstatusbanner image.error { color: @error_color; }";

void
mend_gtk_style_ensure (GtkWidget *widget)
{
  GdkDisplay *display = gtk_widget_get_display (widget);
  g_autoptr(GtkCssProvider) provider = NULL;

  if (display == NULL || g_object_get_data (G_OBJECT (display), "mend-gtk-style") != NULL)
    return;

  provider = gtk_css_provider_new ();
  gtk_css_provider_load_from_data (provider, fallback_css, -1);
  gtk_style_context_add_provider_for_display (display, GTK_STYLE_PROVIDER (provider),
                                              GTK_STYLE_PROVIDER_PRIORITY_FALLBACK);
  g_object_set_data_full (G_OBJECT (display), "mend-gtk-style", g_steal_pointer (&provider), g_object_unref);
}
