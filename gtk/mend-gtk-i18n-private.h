/* mend-gtk-i18n-private.h — libmend-gtk's gettext domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void mend_gtk_i18n_init (void);

G_END_DECLS
