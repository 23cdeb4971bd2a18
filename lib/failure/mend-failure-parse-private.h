/* mend-failure-parse-private.h — what the facts of a failure say went wrong
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "mend-classifier-private.h"
#include "mend-enums.h"

G_BEGIN_DECLS

/* What the facts of a failure say went wrong: GError domains and codes,
 * HTTP headers, and the glue between MendFailure and the classifier
 * (mend-classifier-private.h), which weighs the text. */

/* The parts of an Anthropic, OpenAI or Google error body; strings point
 * into the parsed JSON. */
typedef struct
{
  const char *type;     /* error.type, or error.code / error.status */
  const char *message;  /* error.message, or error as a string */
  const char *code;
} MendApiError;

/* The longest part of an HTTP body the classifier reads. */
#define MEND_REASON_MAX_BODY_BYTES (64 * 1024)

/* Each sets *rule to what decided the reason, for people. */
MendReason mend_reason_from_text      (const char       *text,
                                       char            **api_error_type,
                                       char            **rule,
                                       MendEvidenceRank *rank);
/* TRUE when @error's domain and code decide *reason; FALSE when the code
 * is generic (G_IO_ERROR_FAILED, a TLS library's handshake error, another
 * domain's): then only its text can say, as its library wrote it. */
gboolean   mend_reason_from_gerror    (const GError   *error,
                                       MendReason     *reason);
MendReason mend_reason_from_http      (guint           status,
                                       const char     *body,
                                       gsize           size,
                                       JsonNode      **json,
                                       MendApiError   *api,
                                       char          **body_text,
                                       char          **rule);

/* The server's word on retrying: x-should-retry (-1 when it did not say),
 * and retry-after-ms, then Retry-After (left alone when neither is there);
 * see mend_failure_parse_retry_after () for @now_wall_us and @horizon_ms. */
void       mend_failure_parse_headers (SoupMessageHeaders *headers,
                                       gint64              now_wall_us,
                                       gint64              horizon_ms,
                                       int                *should_retry,
                                       gint64             *retry_after_ms);

/* A server's hint inside text, in milliseconds, or -1: "retry after 30s",
 * "Please retry in 39.8s", "try again in 9m38.016s", "reset after 2h52m39s",
 * "Please wait 71 minutes",
 * Google's `"retryDelay": "26s"` and a JSON `"retry_after": 120` (seconds);
 * across a terminal's line wraps. */
gint64 mend_failure_parse_text_hint   (const char     *text);

/* Reads a Retry-After value (seconds or an HTTP-date) in milliseconds, or
 * -1. An HTTP-date is measured against @date, the response's Date header,
 * when it has one (both are the server's clock); else against
 * @now_wall_us, and then a wait beyond @horizon_ms is taken for this
 * clock's error and is no hint (-1). */
gint64 mend_failure_parse_retry_after (const char     *value,
                                       const char     *date,
                                       gint64          now_wall_us,
                                       gint64          horizon_ms);

G_END_DECLS
