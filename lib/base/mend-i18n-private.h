/* mend-i18n-private.h — libmend's gettext domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Binds libmend's gettext domain to its locale directory, once. Every class
 * whose strings are shown to people calls it in class_init. */
void mend_i18n_init (void);

G_END_DECLS
