/* mend-subagent-retry-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-subagent-retry.h"

G_BEGIN_DECLS

/* Made by the chat that owns it; holds only a weak pointer to the chat. */
MendSubagentRetry *mend_subagent_retry_new       (MendChat          *chat);

/* Whether a prompt may start as a turn: FALSE for a resume prompt that was
 * taken back (its provenance names a skipped prompt id). */
gboolean           mend_subagent_retry_may_start (MendSubagentRetry *self,
                                                  const char        *provenance);
/* Sends the resume prompts held for the agent's own turn, if none runs. */
void               mend_subagent_retry_release_held (MendSubagentRetry *self);

/* Ended subagents kept for the list, and entries kept in all: past these
 * the oldest are forgotten. */
#define MEND_SUBAGENT_RETRY_MAX_ENDED   32
#define MEND_SUBAGENT_RETRY_MAX_ENTRIES 1024

/* Saved state: the subagents as a JSON array, and back. Restoring checks
 * every entry before it changes anything; pending waits keep their
 * wall-clock deadline (due at once if it passed). */
void     mend_subagent_retry_save    (MendSubagentRetry *self,
                                      JsonBuilder       *builder);
gboolean mend_subagent_retry_restore (MendSubagentRetry *self,
                                      JsonArray         *array,
                                      GError           **error);

G_END_DECLS
