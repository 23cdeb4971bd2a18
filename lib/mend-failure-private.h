/* mend-failure-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-failure.h"

G_BEGIN_DECLS

/* The verdict is the one thing a policy sets on a failure after it is made. */
void mend_failure_set_kind    (MendFailure *self,
                               MendFailureKind kind);
void mend_failure_set_partial (MendFailure *self,
                               gboolean     partial);

/* A failure read back from saved state, classified by the default policy. */
MendFailure *mend_failure_new_restored (MendReason  reason,
                                        guint       status,
                                        gint64      retry_after_ms,
                                        const char *message,
                                        gboolean    partial);

/* Reads a retry hint ("retry after 30s", "try again in 250ms") out of free
 * text, in milliseconds, or -1. */
gint64 mend_failure_parse_text_hint (const char *text);

/* Reads a Retry-After value (seconds or an HTTP-date, relative to
 * @now_wall_us) in milliseconds, or -1. */
gint64 mend_failure_parse_retry_after (const char *value,
                                       gint64      now_wall_us);

G_END_DECLS
