/* mend-http-failures-private.h — the failures MendHttpSender makes of what a server answers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "mend-types.h"

G_BEGIN_DECLS

typedef enum
{
  MEND_HTTP_CAP_BODY,
  MEND_HTTP_CAP_LINE,
  MEND_HTTP_CAP_EVENT,
} MendHttpCap;

/* An attempt that ended with @error: a timeout when @timed_out_after_ms
 * is not 0, a Stop when @stopped. */
MendFailure *mend_http_failure_from_error    (const GError *error,
                                              guint         timed_out_after_ms,
                                              gboolean      stopped);
/* An answer past one of the sender's caps (@limit bytes): the failure
 * names the property that holds the cap. */
/* An answer that sent 1xx answers past MEND_HTTP_MAX_INTERIM (@limit)
 * or MEND_HTTP_MAX_INTERIM_MS: a broken connection. */
MendFailure *mend_http_failure_interim_flood (guint        limit);
MendFailure *mend_http_failure_over_cap      (MendHttpCap  cap,
                                              guint        limit);
/* A response's status, headers and the head of its body, for a turn of
 * @policy (whose horizon bounds a Retry-After date read on @clock). */
MendFailure *mend_http_failure_from_response (SoupMessage     *message,
                                              const void      *data,
                                              gsize            size,
                                              MendClock       *clock,
                                              MendErrorPolicy *policy);
/* A 3xx, which is never followed: the failure names only the other
 * origin. */
MendFailure *mend_http_failure_from_redirect (SoupMessage     *message,
                                              MendClock       *clock,
                                              MendErrorPolicy *policy);

G_END_DECLS
