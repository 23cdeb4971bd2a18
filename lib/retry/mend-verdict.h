/* mend-verdict.h — MendVerdict: what the policy made of one failure in its context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib-object.h>

#include "mend-enums.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_VERDICT (mend_verdict_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendVerdict, mend_verdict, MEND, VERDICT, GObject)

MEND_AVAILABLE_IN_0_2
MendFailure     *mend_verdict_get_failure     (MendVerdict *self);
MEND_AVAILABLE_IN_0_2
MendFailureKind  mend_verdict_get_kind        (MendVerdict *self);
MEND_AVAILABLE_IN_0_2
guint            mend_verdict_get_attempt     (MendVerdict *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_verdict_get_partial     (MendVerdict *self);
MEND_AVAILABLE_IN_0_2
gint64           mend_verdict_get_delay_ms    (MendVerdict *self);
MEND_AVAILABLE_IN_0_2
gboolean         mend_verdict_get_server_hint (MendVerdict *self);

G_END_DECLS
