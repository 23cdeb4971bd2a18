/* mend-failure-private.h — MendFailure's internals: default kind, partial copies, saved state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-failure.h"

G_BEGIN_DECLS

/* The turn default of MendErrorPolicy:retry-after-max-ms: the horizon a
 * failure's own MendFailure:kind is made with. */
#define MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS 60000

/* The default classification: the table MendFailure:kind is made with and
 * the default classify vfunc reads. @should_retry is -1 when the server did
 * not say; @retry_after_ms is the server's hint or -1, and a rate limit that
 * resets beyond @retry_after_max_ms is a limit, not a wait. */
MendFailureKind mend_failure_default_kind (MendReason reason,
                                           int        should_retry,
                                           gboolean   partial,
                                           gboolean   retry_partial,
                                           gint64     retry_after_ms,
                                           guint      retry_after_max_ms);

/* mend_failure_new_from_http () with a `Retry-After` date read against
 * @clock (NULL for the default clock), for tests in virtual time. */
MendFailure *mend_failure_new_from_http_with_clock (guint               status,
                                                    SoupMessageHeaders *headers,
                                                    GBytes             *body,
                                                    MendClock          *clock);

/* The same for a policy whose horizon is @retry_after_max_ms: a
 * `Retry-After` date without a `Date` header that lies further away than
 * that is no hint. */
MendFailure *mend_failure_new_from_http_within (guint               status,
                                                SoupMessageHeaders *headers,
                                                GBytes             *body,
                                                MendClock          *clock,
                                                guint               retry_after_max_ms);

/* A new failure with the facts of @self, made after output was seen:
 * partial, and classified as such. @self is not changed. */
MendFailure *mend_failure_new_partial_copy (MendFailure *self);

/* A new failure with the facts of @self but the reason and rule an app's
 * rule gave it (mend_error_policy_judge ()). @self is not changed. */
MendFailure *mend_failure_new_judged_copy  (MendFailure *self,
                                            MendReason   reason,
                                            const char  *rule);

/* Whether @self is the user's Stop: mend_failure_new_stopped (), or a
 * G_IO_ERROR_CANCELLED. No app rule reads it as anything else. */
gboolean     mend_failure_is_user_stop     (MendFailure *self);

MendFailure *mend_failure_new_no_sender     (void);
/* The agent could not load the session of the turn (what it said in
 * @detail): permanent, %MEND_RETRY_ERROR_SESSION_LOST. */
MendFailure *mend_failure_new_session_lost  (const char *detail);

/* Saved state: a failure's facts as a JSON object ({reason, status,
 * retryAfterMs, partial, message}), and back, classified by the default
 * policy; NULL, with *ok cleared, when the object is not one. */
void         mend_failure_build_state    (MendFailure *self,
                                          JsonBuilder *builder);
MendFailure *mend_failure_new_from_state (JsonObject  *object,
                                          gboolean    *ok);


/* Reads a reset that the failure's words give ("resets 9:23pm") again at
 * @now_us, the time of the clock that judges it; one from headers stays. */
void         mend_failure_resolve_reset    (MendFailure *self,
                                            gint64       now_us);

/* A limit's reset that another source gave (the Claude Code CLI's
 * rate_limit_event, in Unix time): it replaces the one the words or
 * headers gave, and mend_failure_resolve_reset () keeps it. Only for a
 * usage limit, and only on a failure not yet handed to anyone. */
void         mend_failure_set_reset        (MendFailure *self,
                                            gint64       resets_at_us);

G_END_DECLS
