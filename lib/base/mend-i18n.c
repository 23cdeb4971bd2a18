/* mend-i18n.c — libmend's gettext domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "mend-i18n-private.h"

void
mend_i18n_init (void)
{
  static gsize initialized;

  if (g_once_init_enter (&initialized))
    {
      /* An uninstalled build's catalogue, for its tests and demo. */
      const char *dir = g_getenv ("MEND_LOCALEDIR");

      bindtextdomain (GETTEXT_PACKAGE, dir != NULL && dir[0] != '\0' ? dir : LOCALEDIR);
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&initialized, 1);
    }
}
