/* mend-subagent-private.h — MendSubagent's setters, for the subagent retry only
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-subagent.h"

G_BEGIN_DECLS

/* A subagent is a view that MendSubagentRetry keeps up to date. */
MendSubagent *mend_subagent_new           (const char        *id,
                                           const char        *agent_id,
                                           const char        *name);
void          mend_subagent_set_state     (MendSubagent      *self,
                                           MendSubagentState  state);
void          mend_subagent_set_retry     (MendSubagent      *self,
                                           MendRetryWait     *retry);
void          mend_subagent_set_retryable (MendSubagent      *self,
                                           gboolean           retryable);
void          mend_subagent_set_failure   (MendSubagent      *self,
                                           MendFailure       *failure);
void          mend_subagent_set_attempts  (MendSubagent      *self,
                                           guint              attempts);

G_END_DECLS
