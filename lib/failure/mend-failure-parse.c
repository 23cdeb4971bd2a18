/* mend-failure-parse.c — what the facts of a failure say went wrong
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the facts of a failure say went wrong: GError domains and codes,
 * HTTP headers and server hints, API error bodies; the text itself is
 * weighed by the classifier (mend-classifier.c). MendFailure is made from
 * these.
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <libsoup/soup.h>

#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-classifier-private.h"
#include "mend-classifier-rules-private.h"
#include "mend-failure-parse-private.h"
#include "mend-redact-private.h"

static gint64
saturating_ms (double value,
                               double unit_ms)
{
  double ms = value * unit_ms;

  if (!isfinite (ms) || ms < 0)
    return -1;
  if (ms >= (double) G_MAXINT64 / 2)
    return G_MAXINT64 / 2;
  /* 20.387 s is 20387 ms, not 20388 after a rounding error. */
  return (gint64) ceil (ms - 1e-6);
}

/* One number and its unit: "30", "30s", "30 seconds", "1.5s", "250ms",
 * "2m", "1 hour", "2 days". Sets *rest past it; -1 if there is none. */
static gint64
parse_one_duration (const char  *p,
                    const char **rest)
{
  char *end = NULL;
  double value;
  double unit = 1000;

  if (!g_ascii_isdigit (*p))
    return -1;

  value = g_ascii_strtod (p, &end);
  if (end == p)
    return -1;
  while (*end == ' ')
    end++;

  if (g_str_has_prefix (end, "ms") || g_str_has_prefix (end, "millisecond"))
    unit = 1;
  else if (g_str_has_prefix (end, "min") || (end[0] == 'm' && !g_ascii_isalpha (end[1])))
    unit = 60000;
  else if (end[0] == 'h' && (!g_ascii_isalpha (end[1]) || g_str_has_prefix (end, "hour")))
    unit = 3600000;
  else if (end[0] == 'd' && (!g_ascii_isalpha (end[1]) || g_str_has_prefix (end, "day")))
    unit = 86400000;

  while (g_ascii_isalpha (*end))
    end++;
  if (*end == '(' && g_str_has_prefix (end, "(s)"))
    end += 3;
  *rest = end;

  return saturating_ms (value, unit);
}

/* A duration, which may have several parts: "2 days 3 hours 12 minutes",
 * "9m38.016s". */
static gint64
parse_duration (const char *p,
                const char *skip)
{
  gint64 total = -1;

  while (*p != '\0' && strchr (skip, *p) != NULL)
    p++;

  for (;;)
    {
      const char *rest = p;
      gint64 part = parse_one_duration (p, &rest);

      if (part < 0)
        break;
      total = total < 0 ? part : MIN (total + part, G_MAXINT64 / 2);
      p = rest;
      while (*p == ' ' || *p == ',')
        p++;
      if (g_str_has_prefix (p, "and "))
        p += 4;
    }

  return total;
}

gint64
mend_failure_parse_text_hint (const char *text)
{
  /* Words first, then the keys of a body: Google's RetryInfo and a JSON
   * retry_after in seconds (Cloudflare, Telegram-style bodies). */
  static const struct {
    const char *marker;
    const char *skip;
  } markers[] = {
    { "retry after", " :=" },
    { "retry-after", " :=" },
    { "retry in", " " },
    { "try again in", " " },
    { "try again after", " " },
    { "resets in", " " },
    { "reset in", " " },
    { "wait", " " },
    { "retrying in", " " },
    { "reset after", " " },
    { "retrydelay", " \"':=\\" },
    { "retry_after_ms", NULL },
    { "retry_after", " \"':=\\" },
    { "retryafter", " \"':=\\" },
  };
  g_autofree char *lower = NULL;

  if (text == NULL)
    return -1;

  lower = mend_rules_normalize_text (text);
  for (guint i = 0; i < G_N_ELEMENTS (markers); i++)
    {
      const char *found;

      if (markers[i].skip == NULL)
        {
          /* retry_after_ms is milliseconds: read it before retry_after. */
          found = strstr (lower, markers[i].marker);
          if (found != NULL && (found == lower || !g_ascii_isalnum (found[-1])))
            {
              const char *p = found + strlen (markers[i].marker);
              char *end = NULL;
              double ms;

              while (*p != '\0' && strchr (" \"':=\\", *p) != NULL)
                p++;
              ms = g_ascii_strtod (p, &end);
              if (end != p)
                return saturating_ms (ms, 1);
            }
          continue;
        }

      for (found = strstr (lower, markers[i].marker); found != NULL;
           found = strstr (found + 1, markers[i].marker))
        {
          gint64 ms;

          /* A whole word: "totalRetryDelay" is a client's own count. */
          if (found > lower && (g_ascii_isalnum (found[-1]) || found[-1] == '_'))
            continue;
          ms = parse_duration (found + strlen (markers[i].marker), markers[i].skip);
          if (ms >= 0)
            return ms;
        }
    }

  return -1;
}

/* An HTTP-date in unix µs, or FALSE. */
static gboolean
parse_http_date (const char *value,
                 gint64     *at_us)
{
  g_autoptr(GDateTime) date = NULL;

  if (value == NULL)
    return FALSE;
  date = soup_date_time_new_from_http_string (value);
  if (date == NULL)
    return FALSE;
  *at_us = g_date_time_to_unix (date) * G_USEC_PER_SEC;
  return TRUE;
}

gint64
mend_failure_parse_retry_after (const char *value,
                                const char *date,
                                gint64      now_wall_us,
                                gint64      horizon_ms)
{
  const char *p;
  gint64 at_us;
  gint64 from_us;
  gint64 delta;

  if (value == NULL)
    return -1;

  while (g_ascii_isspace (*value))
    value++;

  for (p = value; g_ascii_isdigit (*p); p++)
    ;
  if (p != value)
    {
      guint64 seconds;

      while (g_ascii_isspace (*p))
        p++;
      if (*p != '\0')
        return -1;

      errno = 0;
      seconds = g_ascii_strtoull (value, NULL, 10);
      /* Digits only, but too many of them: the far future. */
      if (errno == ERANGE || seconds > (guint64) (G_MAXINT64 / 2000))
        return G_MAXINT64 / 2;
      return (gint64) seconds * 1000;
    }

  if (!parse_http_date (value, &at_us))
    return -1;

  /* Against the server's own clock when it says what time it is: this
   * machine's clock being off then changes nothing. */
  if (parse_http_date (date, &from_us))
    {
      delta = at_us - from_us;
      return delta <= 0 ? 0 : (delta + 999) / 1000;
    }

  /* Against this machine's clock. A wait past the horizon is then more
   * likely that clock's error than a reset to show as a limit: no hint. */
  delta = at_us - now_wall_us;
  if (delta <= 0)
    return 0;
  if ((delta + 999) / 1000 > horizon_ms)
    return -1;
  return (delta + 999) / 1000;
}


/* Reads the Anthropic ({"type":"error","error":{"type","message"}}), OpenAI
 * ({"error":{"message","type","code"}}) and Google ({"error":{"code",
 * "status","message"}}) error shapes. */
static gboolean
read_api_error (JsonNode *root,
                MendApiError *out)
{
  JsonObject *obj;
  JsonObject *err;
  JsonNode *error_node;

  memset (out, 0, sizeof *out);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;

  obj = json_node_get_object (root);
  error_node = json_object_get_member (obj, "error");
  if (error_node == NULL)
    {
      out->message = mend_json_get_string (obj, "message");
      out->type = mend_json_get_string (obj, "type");
      return out->message != NULL;
    }

  if (JSON_NODE_HOLDS_VALUE (error_node) &&
      json_node_get_value_type (error_node) == G_TYPE_STRING)
    {
      out->message = json_node_get_string (error_node);
      out->type = mend_json_get_string (obj, "type");
      if (g_strcmp0 (out->type, "error") == 0)
        out->type = NULL;
      return TRUE;
    }

  err = mend_json_get_object (obj, "error");
  if (err == NULL)
    return FALSE;

  out->type = mend_json_get_string (err, "type");
  out->code = mend_json_get_string (err, "code");
  out->message = mend_json_get_string (err, "message");
  if (out->type == NULL)
    out->type = out->code;
  if (out->type == NULL)
    out->type = mend_json_get_string (err, "status");

  return TRUE;
}

/* Finds a JSON error body inside agent text, as in
 * `API Error: 529 {"type":"error","error":{"type":"overloaded_error",…}}`. */
static JsonNode *
embedded_json (const char *text)
{
  const char *open = strchr (text, '{');
  const char *close = strrchr (text, '}');

  if (open == NULL || close == NULL || close < open)
    return NULL;

  return mend_json_parse (open, close - open + 1, NULL);
}

MendReason
mend_reason_from_text (const char        *text,
                       char             **api_error_type,
                       char             **rule,
                       MendEvidenceRank  *rank)
{
  g_autoptr(JsonNode) json = embedded_json (text);
  MendClassification classification = { 0 };
  MendApiError api;

  if (read_api_error (json, &api))
    {
      g_free (*api_error_type);
      *api_error_type = g_strdup (api.type);
    }

  mend_classifier_classify (text, 0, FALSE, &classification);
  g_free (*rule);
  *rule = g_steal_pointer (&classification.rule);
  *rank = classification.rank;

  return classification.reason;
}

/* The GIO codes that say what happened whatever their text; the others
 * (G_IO_ERROR_FAILED above all) are generic. */
static gboolean
io_error_reason (int         code,
                 MendReason *reason)
{
  switch (code)
    {
    case G_IO_ERROR_CANCELLED:
      *reason = MEND_REASON_CANCELLED;
      return TRUE;
    case G_IO_ERROR_TIMED_OUT:
      *reason = MEND_REASON_TIMEOUT;
      return TRUE;
    case G_IO_ERROR_CONNECTION_REFUSED:
    case G_IO_ERROR_CONNECTION_CLOSED:
    case G_IO_ERROR_HOST_UNREACHABLE:
    case G_IO_ERROR_NETWORK_UNREACHABLE:
    case G_IO_ERROR_NOT_CONNECTED:
    case G_IO_ERROR_PARTIAL_INPUT:
    case G_IO_ERROR_PROXY_FAILED:
    case G_IO_ERROR_CLOSED:
      *reason = MEND_REASON_TRANSPORT;
      return TRUE;
    case G_IO_ERROR_PROXY_AUTH_FAILED:
    case G_IO_ERROR_PROXY_NEED_AUTH:
      *reason = MEND_REASON_AUTH;
      return TRUE;
    case G_IO_ERROR_PROXY_NOT_ALLOWED:
    case G_IO_ERROR_PERMISSION_DENIED:
      *reason = MEND_REASON_PERMISSION;
      return TRUE;
    case G_IO_ERROR_MESSAGE_TOO_LARGE:
      *reason = MEND_REASON_BAD_REQUEST;
      return TRUE;
    case G_IO_ERROR_HOST_NOT_FOUND:
      /* The name does not resolve: fails closed, like the resolver's. */
      *reason = MEND_REASON_UNKNOWN;
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
tls_error_reason (int         code,
                  MendReason *reason)
{
  switch (code)
    {
    case G_TLS_ERROR_EOF:
      *reason = MEND_REASON_TRANSPORT;
      return TRUE;
    case G_TLS_ERROR_CERTIFICATE_REQUIRED:
    case G_TLS_ERROR_BAD_CERTIFICATE_PASSWORD:
      /* A client credential the server asks for or cannot use. */
      *reason = MEND_REASON_AUTH;
      return TRUE;
    case G_TLS_ERROR_BAD_CERTIFICATE:
    case G_TLS_ERROR_UNAVAILABLE:
    case G_TLS_ERROR_INAPPROPRIATE_FALLBACK:
      /* A certificate or a TLS stack no retry changes: fails closed. */
      *reason = MEND_REASON_UNKNOWN;
      return TRUE;
    default:
      /* NOT_TLS, HANDSHAKE and MISC wrap what the TLS library said. */
      return FALSE;
    }
}

static gboolean
soup_error_reason (int         code,
                   MendReason *reason)
{
  switch (code)
    {
    case SOUP_SESSION_ERROR_PARSING:
    case SOUP_SESSION_ERROR_ENCODING:
      *reason = MEND_REASON_TRANSPORT;
      return TRUE;
    case SOUP_SESSION_ERROR_TOO_MANY_REDIRECTS:
    case SOUP_SESSION_ERROR_REDIRECT_NO_LOCATION:
    case SOUP_SESSION_ERROR_REDIRECT_BAD_URI:
    case SOUP_SESSION_ERROR_MESSAGE_ALREADY_IN_QUEUE:
      *reason = MEND_REASON_BAD_REQUEST;
      return TRUE;
    default:
      *reason = MEND_REASON_UNKNOWN;
      return TRUE;
    }
}

gboolean
mend_reason_from_gerror (const GError *error,
                         MendReason   *reason)
{
  *reason = MEND_REASON_UNKNOWN;

  if (error->domain == G_IO_ERROR)
    return io_error_reason (error->code, reason);
  if (error->domain == G_RESOLVER_ERROR)
    {
      /* NOT_FOUND and INTERNAL fail closed. */
      if (error->code == G_RESOLVER_ERROR_TEMPORARY_FAILURE)
        *reason = MEND_REASON_TRANSPORT;
      return TRUE;
    }
  if (error->domain == G_TLS_ERROR)
    return tls_error_reason (error->code, reason);
  if (error->domain == SOUP_SESSION_ERROR)
    return soup_error_reason (error->code, reason);

  return FALSE;
}


MendReason
mend_reason_from_http (guint          status,
                       const char    *data,
                       gsize          size,
                       JsonNode     **json,
                       MendApiError  *api,
                       char         **body_text,
                       char         **rule)
{
  g_autofree char *text = NULL;
  MendClassification classification = { 0 };

  memset (api, 0, sizeof *api);

  if (size > 0)
    {
      *json = mend_json_parse (data, size, NULL);
      if (!read_api_error (*json, api))
        {
          g_autofree char *redacted = NULL;
          const char *end = NULL;

          /* Redacted whole before the cut: a cut inside a key leaves a
           * piece of it no rule knows. Then cut where a character ends:
           * a long text cut inside one is still the text it was. */
          if (size >= MEND_REASON_MAX_BODY_BYTES)
            /* A body at the most read of it may be cut inside a key. */
            redacted = mend_redact_cut_end (data, MEND_REASON_MAX_BODY_BYTES);
          else
            redacted = mend_redact_secrets (data, size);
          *body_text = g_strndup (redacted, MEND_FAILURE_MAX_MESSAGE_BYTES * 2);
          if (strlen (redacted) > MEND_FAILURE_MAX_MESSAGE_BYTES * 2 && !g_utf8_validate (*body_text, -1, &end) &&
              strlen (end) < 4)
            (*body_text)[end - *body_text] = '\0';
        }
      /* The classifier reads the whole body, bounded: a code may sit past
       * the message. */
      text = g_strndup (data, MIN (size, MEND_REASON_MAX_BODY_BYTES));
    }

  if (status >= 200 && status < 300 && size == 0)
    {
      g_free (*rule);
      *rule = g_strdup_printf (_("HTTP status %u with an empty body"), status);
      return MEND_REASON_EMPTY;
    }

  mend_classifier_classify (text ? text : "", status, TRUE, &classification);
  g_free (*rule);
  *rule = g_steal_pointer (&classification.rule);

  return classification.reason;
}

void
mend_failure_parse_headers (SoupMessageHeaders *headers,
                            gint64              now_wall_us,
                            gint64              horizon_ms,
                            int                *should_retry,
                            gint64             *retry_after_ms)
{
  const char *value;

  if (headers == NULL)
    return;

  value = soup_message_headers_get_one (headers, "x-should-retry");
  if (value != NULL)
    {
      if (g_ascii_strcasecmp (value, "true") == 0)
        *should_retry = 1;
      else if (g_ascii_strcasecmp (value, "false") == 0)
        *should_retry = 0;
    }

  value = soup_message_headers_get_one (headers, "retry-after-ms");
  if (value != NULL)
    {
      char *end = NULL;
      double ms = g_ascii_strtod (value, &end);

      while (end != NULL && g_ascii_isspace (*end))
        end++;
      if (end != value && end != NULL && *end == '\0')
        *retry_after_ms = saturating_ms (ms, 1);
    }

  if (*retry_after_ms < 0)
    {
      value = soup_message_headers_get_one (headers, "Retry-After");
      if (value != NULL)
        *retry_after_ms = mend_failure_parse_retry_after (value,
                                                          soup_message_headers_get_one (headers, "Date"),
                                                          now_wall_us, horizon_ms);
    }
}
