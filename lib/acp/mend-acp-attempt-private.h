/* mend-acp-attempt-private.h — what the prompt of an ACP attempt brought
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-acp-profile.h"
#include "mend-failure.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* The updates of the prompt in flight, read for its turn under the
 * agent's profile. */
typedef struct _MendAcpAttempt MendAcpAttempt;

MendAcpAttempt *mend_acp_attempt_new        (void);
void            mend_acp_attempt_free       (MendAcpAttempt *self);
/* A new prompt goes: nothing seen yet. */
void            mend_acp_attempt_reset      (MendAcpAttempt *self);
/* Whether the model's output was seen since. */
gboolean        mend_acp_attempt_get_output (MendAcpAttempt *self);
/* An update of the prompt's, for @turn: the model's output marks the
 * turn's output as seen and feeds its text; the agent's error text is
 * held back (see mend-acp-attempt.c); its own retries set the turn's
 * agent status. */
void            mend_acp_attempt_feed       (MendAcpAttempt *self,
                                             MendAcpProfile *profile,
                                             MendTurn       *turn,
                                             JsonObject     *update);
/* The prompt was answered with @stop_reason (NULL for an error answer):
 * the failure the held error text makes of a plain end, or NULL. What
 * was held is dropped. */
MendFailure    *mend_acp_attempt_end        (MendAcpAttempt *self,
                                             const char     *stop_reason);

G_END_DECLS
