/* mend-subagent.h — MendSubagent: one subagent as the interface shows it
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

#define MEND_TYPE_SUBAGENT (mend_subagent_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendSubagent, mend_subagent, MEND, SUBAGENT, GObject)

MEND_AVAILABLE_IN_0_2
const char        *mend_subagent_get_id        (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
const char        *mend_subagent_get_agent_id  (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
const char        *mend_subagent_get_name      (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
MendSubagentState  mend_subagent_get_state     (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
MendRetryWait     *mend_subagent_get_retry     (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
gboolean           mend_subagent_get_retryable (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
MendFailure       *mend_subagent_get_failure   (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
guint              mend_subagent_get_attempts  (MendSubagent *self);
MEND_AVAILABLE_IN_0_2
char              *mend_subagent_to_json       (MendSubagent *self);

G_END_DECLS
