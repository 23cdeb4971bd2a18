/* mend-http-failures.c — the failures MendHttpSender makes of what a server answers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The failures MendHttpSender makes of what a server answers.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-error-policy.h"
#include "mend-failure-private.h"
#include "mend-http-failures-private.h"
#include "mend-http-headers-private.h"

MendFailure *
mend_http_failure_from_error (const GError *error,
                              guint         timed_out_after_ms,
                              gboolean      stopped)
{
  if (timed_out_after_ms > 0)
    {
      g_autoptr(GError) timeout = g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                               _("The attempt timed out after %u ms"),
                                               timed_out_after_ms);
      return mend_failure_new_from_error (timeout);
    }

  if (stopped)
    return mend_failure_new_stopped ();

  return mend_failure_new_from_error (error);
}

MendFailure *
mend_http_failure_interim_flood (guint limit)
{
  g_autoptr(GError) error = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                         _("The server sent more than %u interim (1xx) answers, or for too long"),
                                         limit);

  return mend_failure_new_from_error (error);
}

MendFailure *
mend_http_failure_over_cap (MendHttpCap cap,
                            guint       limit)
{
  g_autoptr(GError) error = NULL;

  switch (cap)
    {
    case MEND_HTTP_CAP_LINE:
      error = g_error_new (G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                           _("A line of the event stream is larger than %u bytes (max-line-bytes)"),
                           limit);
      break;
    case MEND_HTTP_CAP_EVENT:
      error = g_error_new (G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                           _("An event of the stream is larger than %u bytes (max-event-bytes)"),
                           limit);
      break;
    case MEND_HTTP_CAP_BODY:
    default:
      error = g_error_new (G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                           _("The answer is larger than %u bytes (max-body-bytes)"),
                           limit);
      break;
    }

  return mend_failure_new_from_error (error);
}

/* A 429 that gives no Retry-After (nor retry-after-ms) and no hint in its
 * body, but OpenAI's x-ratelimit-reset-* headers: the headers again, with
 * the reset as retry-after-ms; NULL when there is none to read. The
 * body's own hint wins over the headers, since a reset is when the whole
 * limit is back, and the body says when this request fits. */
static SoupMessageHeaders *
headers_with_reset (guint               status,
                    SoupMessageHeaders *headers,
                    MendFailure        *failure)
{
  SoupMessageHeaders *copy;
  SoupMessageHeadersIter iter;
  g_autofree char *ms = NULL;
  const char *name;
  const char *value;
  gint64 reset;

  if (status != 429 || headers == NULL ||
      mend_failure_get_retry_after_ms (failure) >= 0 ||
      soup_message_headers_get_one (headers, "Retry-After") != NULL ||
      soup_message_headers_get_one (headers, "retry-after-ms") != NULL)
    return NULL;

  reset = mend_http_rate_limit_reset_ms (headers);
  if (reset < 0)
    return NULL;

  copy = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  soup_message_headers_iter_init (&iter, headers);
  while (soup_message_headers_iter_next (&iter, &name, &value))
    soup_message_headers_append (copy, name, value);
  ms = g_strdup_printf ("%" G_GINT64_FORMAT, reset);
  soup_message_headers_replace (copy, "retry-after-ms", ms);
  return copy;
}

MendFailure *
mend_http_failure_from_response (SoupMessage     *message,
                                 const void      *data,
                                 gsize            size,
                                 MendClock       *clock,
                                 MendErrorPolicy *policy)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, size);
  SoupMessageHeaders *headers = soup_message_get_response_headers (message);
  guint status = soup_message_get_status (message);
  guint horizon = mend_error_policy_get_retry_after_max_ms (policy);
  g_autoptr(SoupMessageHeaders) with_reset = NULL;
  MendFailure *failure;

  failure = mend_failure_new_from_http_within (status, headers, bytes, clock, horizon);

  /* A failure's facts are fixed when it is made: one with the reset as its
   * hint is made again from the same answer. */
  with_reset = headers_with_reset (status, headers, failure);
  if (with_reset != NULL)
    {
      g_object_unref (failure);
      failure = mend_failure_new_from_http_within (status, with_reset, bytes, clock, horizon);
    }

  return failure;
}

static gboolean
uses_default_port (GUri *uri)
{
  int port = g_uri_get_port (uri);

  return (port == 443 && g_strcmp0 (g_uri_get_scheme (uri), "https") == 0) ||
         (port == 80 && g_strcmp0 (g_uri_get_scheme (uri), "http") == 0);
}

/* Redirects of model requests are not followed, since the request carries
 * credentials and a body that another place must not receive. */
MendFailure *
mend_http_failure_from_redirect (SoupMessage     *message,
                                 MendClock       *clock,
                                 MendErrorPolicy *policy)
{
  SoupMessageHeaders *headers = soup_message_get_response_headers (message);
  const char *location = soup_message_headers_get_one (headers, "Location");
  g_autoptr(GUri) target = NULL;
  g_autofree char *where = NULL;
  g_autofree char *text = NULL;

  if (location != NULL)
    target = g_uri_parse_relative (soup_message_get_uri (message), location,
                                   SOUP_HTTP_URI_FLAGS, NULL);
  /* Only the origin: a path or a query may hold anything. */
  if (target != NULL && g_uri_get_host (target) != NULL)
    where = g_uri_join (G_URI_FLAGS_NONE, g_uri_get_scheme (target), NULL, g_uri_get_host (target),
                        uses_default_port (target) ? -1 : g_uri_get_port (target),
                        "", NULL, NULL);

  if (where != NULL)
    text = g_strdup_printf (_("The server redirected the request to %s; model requests are not redirected"),
                            where);
  else
    text = g_strdup (_("The server redirected the request; model requests are not redirected"));

  return mend_http_failure_from_response (message, text, strlen (text), clock, policy);
}
