/* mend-gtk-version-macros.h — which release each libmend-gtk symbol came in
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_GTK_INSIDE) && !defined (MEND_GTK_COMPILATION)
# error "Only <libmend-gtk.h> can be included directly."
#endif

#include <glib.h>

#ifndef _MEND_GTK_EXTERN
# define _MEND_GTK_EXTERN __attribute__((visibility("default"))) extern
#endif

/**
 * MEND_GTK_AVAILABLE_IN_0_2:
 *
 * Marks a symbol that came in libmend-gtk 0.2, the first release.
 */
#define MEND_GTK_AVAILABLE_IN_0_2 _MEND_GTK_EXTERN
