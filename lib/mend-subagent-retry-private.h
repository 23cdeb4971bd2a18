/* mend-subagent-retry-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-subagent-retry.h"

G_BEGIN_DECLS

/* Made by the chat that owns it; holds only a weak pointer to the chat. */
MendSubagentRetry *mend_subagent_retry_new       (MendChat          *chat);

/* Whether a prompt may start as a turn: FALSE for a resume prompt that was
 * taken back (its provenance names a skipped prompt id). */
gboolean           mend_subagent_retry_may_start (MendSubagentRetry *self,
                                                  const char        *provenance);

G_END_DECLS
