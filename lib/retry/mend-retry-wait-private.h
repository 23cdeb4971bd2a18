/* mend-retry-wait-private.h — MendRetryWait from a verdict, and its JSON for records and saved state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-retry-wait.h"
#include "mend-verdict.h"

G_BEGIN_DECLS

/* Adds the wait's JSON object ({attempt, of, reason, nextAt}) as the next
 * value of @builder, for the records and entries that embed it. */
void mend_retry_wait_build_json (MendRetryWait *self,
                                 JsonBuilder   *builder);

/* The wait a retry verdict asks for, before retry number @attempt of
 * @max_retries: its delay, failure, reason and server hint are the
 * verdict's; @at_reset: it waits for a usage limit's reset, on the wall
 * clock. */
MendRetryWait *mend_retry_wait_new_for_verdict (MendVerdict *verdict,
                                                MendClock   *clock,
                                                guint        attempt,
                                                guint        max_retries,
                                                gboolean     at_reset);

/* A duration as a countdown shows it, translated: “4 s”, “2 min 5 s”. */
char *mend_retry_wait_describe_duration (gint64 ms);

/* A wall-clock time @at_us as a person reads it, seen at @now_us: “21:23”
 * today, “Tue 09:00” within a week, else with its date; local time. */
char *mend_retry_wait_describe_time     (gint64 at_us,
                                         gint64 now_us);

G_END_DECLS
