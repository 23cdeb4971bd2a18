/* mend-failure-reset-private.h — when a usage limit resets, from the words and headers that say so
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

G_BEGIN_DECLS

/* A duration as limits write it ("3h 12m", "6m0s", "20ms", "2 days"), in
 * milliseconds; -1 when there is none. */
gint64 mend_failure_parse_duration_ms   (const char         *text);

/* @ms (not negative) after @now_us, in µs; the end of time when that
 * is past what a gint64 holds. */
gint64 mend_failure_time_after_ms       (gint64              now_us,
                                         gint64              ms);

/* When the limit @text speaks of resets, in wall-clock µs, read at
 * @now_us (a time of day is the next one after it); 0 when it says not. */
gint64 mend_failure_parse_reset         (const char         *text,
                                         gint64              now_us);

/* The same from a response's headers; @rejected is set when Anthropic's
 * unified rate limit says a subscription window is spent. */
gint64 mend_failure_parse_reset_headers (SoupMessageHeaders *headers,
                                         gint64              now_us,
                                         gboolean           *rejected);

G_END_DECLS
