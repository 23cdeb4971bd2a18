/* mend-acp-failure-private.h — failures as ACP agents report them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-failure.h"

G_BEGIN_DECLS

/* A failure read from a JSON-RPC error answer, or NULL when there is
 * none (the connection failed: the agent is gone). JSON-RPC's own codes
 * are negative; an error code from 400 to 599 is the HTTP status of the
 * upstream's answer, as the Gemini CLI sends it, and the message its
 * body or the body's message. Typed data (errorKind, codexErrorInfo)
 * decides the class; -32800 is the agent's own cancellation. */
MendFailure *mend_acp_failure_from_rpc_error       (JsonObject *error);

/* An agent's cancellation of a prompt the client did not cancel: a
 * transient failure, never the user's Stop. */
MendFailure *mend_acp_failure_new_own_cancel       (const char *detail);

/* The typed-failure extension's report in @holder (a prompt's result or
 * an update): its `_meta.jetbrains.air.sessionFailure`, or NULL. */
JsonObject  *mend_acp_session_failure_get          (JsonObject *holder);
/* Whether the report is a warning: the agent's own retry, not a failure
 * of the prompt. */
gboolean     mend_acp_session_failure_is_warning   (JsonObject *session_failure);
/* The failure a report says: its category decides the class, its title
 * the reason within it and any reset time. */
MendFailure *mend_acp_failure_from_session_failure (JsonObject *session_failure);

G_END_DECLS
