/* mend-gtk-i18n.c — libmend-gtk's gettext domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gi18n-lib.h>

#include "mend-gtk-i18n-private.h"

void
mend_gtk_i18n_init (void)
{
  static gsize initialized;

  if (g_once_init_enter (&initialized))
    {
      /* An uninstalled build's catalogue, for its tests. */
      const char *dir = g_getenv ("MEND_GTK_LOCALEDIR");

      bindtextdomain (GETTEXT_PACKAGE, dir != NULL && dir[0] != '\0' ? dir : LOCALEDIR);
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&initialized, 1);
    }
}
