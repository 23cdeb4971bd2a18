/* mend-reason.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the facts of a failure say went wrong: HTTP statuses, API error
 * bodies, GError domains and codes, and the error text agents and
 * gateways print. MendFailure is made from these.
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <libsoup/soup.h>

#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-reason-private.h"

/* Phrases are matched against lower-cased text, in this order of groups. */
static const char * const usage_phrases[] = {
  "usage limit", "hit your limit", "hit your usage", "spend limit",
  "spending limit", "quota", "billing", "credit balance", "out of credits",
  "insufficient credits", "insufficient funds", "payment required",
  "5-hour limit", "weekly limit", "daily limit", "monthly limit",
  "plan limit", "limit will reset", "per-day", "per day", "daily quota", NULL
};

static const char * const cancelled_phrases[] = {
  "request cancelled", "request canceled", "cancelled by user",
  "canceled by user", "interrupted by user", "aborted by user",
  "user aborted", "stopped by user", "operation was cancelled",
  "operation was canceled", "request was aborted", NULL
};

typedef struct
{
  MendReason         reason;
  const char * const phrases[32];
} PhraseGroup;

static const PhraseGroup phrase_groups[] = {
  { MEND_REASON_AUTH, {
      "invalid x-api-key", "invalid api key", "invalid_api_key",
      "incorrect api key", "api key not valid", "missing api key",
      "authentication_error", "authentication failed", "invalid authentication",
      "unauthorized", "unauthenticated", "invalid bearer", "oauth token has expired",
      "token has expired", "token expired", "please run /login", NULL } },
  { MEND_REASON_PERMISSION, {
      "permission_error", "permission denied", "permission_denied", "forbidden",
      "do not have permission", "does not have permission",
      "does not have access", "access denied", "not allowed to", NULL } },
  { MEND_REASON_BAD_REQUEST, {
      "prompt is too long", "invalid_request_error", "context_length_exceeded",
      "maximum context length", "context window", "validation error",
      "validation_error", "bad request", "invalid request", "request too large",
      "request_too_large", "not_found_error", "model not found",
      "unprocessable", "invalid_argument", "malformed", NULL } },
  { MEND_REASON_CAPACITY, {
      "overloaded", "no non-exhausted", "at capacity", "over capacity",
      "capacity", "service unavailable", "temporarily unavailable",
      "server is busy", NULL } },
  { MEND_REASON_RATE_LIMIT, {
      "rate limit", "rate_limit", "ratelimit", "too many requests",
      "resource_exhausted", "throttl", "slow down", NULL } },
  { MEND_REASON_TIMEOUT, {
      "timed out", "timeout", "etimedout", "deadline exceeded",
      "deadline_exceeded", "took too long", NULL } },
  { MEND_REASON_TRANSPORT, {
      "econnreset", "connection reset", "econnrefused", "connection refused",
      "econnaborted", "epipe", "broken pipe", "socket hang up", "unexpected eof",
      "premature close", "premature eof", "connection closed", "connection error",
      "connection lost", "network error", "network is unreachable",
      "enetunreach", "ehostunreach", "no route to host", "eai_again",
      "temporary failure in name resolution", "fetch failed",
      "other side closed", "upstream connect error", "socket disconnected",
      NULL } },
  { MEND_REASON_EMPTY, {
      "empty response", "empty model response", "response was empty",
      "returned no content", "no content in the response", "empty completion",
      NULL } },
  { MEND_REASON_SERVER, {
      "internal server error", "internal error", "api_error", "server_error",
      "server error", "bad gateway", "upstream error", NULL } },
};

/* Lower-cased text with URLs blanked out: "…/account/billing" in a link
 * says nothing about the error. */
static char *
lower_without_urls (const char *text)
{
  char *lower = g_ascii_strdown (text, -1);

  for (char *p = lower; (p = strstr (p, "http")) != NULL; )
    {
      if (g_str_has_prefix (p, "http://") || g_str_has_prefix (p, "https://"))
        while (*p != '\0' && !g_ascii_isspace (*p))
          *p++ = ' ';
      else
        p += 4;
    }

  return lower;
}

static gboolean
contains_any (const char         *lower,
              const char * const *phrases)
{
  for (guint i = 0; phrases[i] != NULL; i++)
    if (strstr (lower, phrases[i]) != NULL)
      return TRUE;

  return FALSE;
}

static MendReason
reason_from_phrases (const char *lower)
{
  for (guint i = 0; i < G_N_ELEMENTS (phrase_groups); i++)
    if (contains_any (lower, phrase_groups[i].phrases))
      return phrase_groups[i].reason;

  return MEND_REASON_UNKNOWN;
}

static MendReason
reason_from_status (guint status)
{
  switch (status)
    {
    case 503:
    case 529:
      return MEND_REASON_CAPACITY;
    case 429:
      return MEND_REASON_RATE_LIMIT;
    case 408:
    case 504:
    case 524:
      return MEND_REASON_TIMEOUT;
    case 500:
    case 502:
    case 409:
    case 520:
    case 521:
    case 522:
    case 523:
      return MEND_REASON_SERVER;
    case 401:
    case 407:
      return MEND_REASON_AUTH;
    case 403:
      return MEND_REASON_PERMISSION;
    case 402:
      return MEND_REASON_USAGE_LIMIT;
    case 499:
      return MEND_REASON_CANCELLED;
    default:
      if (status >= 400 && status < 500)
        return MEND_REASON_BAD_REQUEST;
      return MEND_REASON_UNKNOWN;
    }
}

/* The type or code of an Anthropic, OpenAI or Google error body. */
static MendReason
reason_from_api_type (const char *type)
{
  static const struct {
    const char *type;
    MendReason  reason;
  } table[] = {
    { "overloaded_error", MEND_REASON_CAPACITY },
    { "overloaded", MEND_REASON_CAPACITY },
    { "unavailable", MEND_REASON_CAPACITY },
    { "service_unavailable", MEND_REASON_CAPACITY },
    { "rate_limit_error", MEND_REASON_RATE_LIMIT },
    { "rate_limit_exceeded", MEND_REASON_RATE_LIMIT },
    { "resource_exhausted", MEND_REASON_RATE_LIMIT },
    { "tokens", MEND_REASON_RATE_LIMIT },
    { "requests", MEND_REASON_RATE_LIMIT },
    { "timeout_error", MEND_REASON_TIMEOUT },
    { "deadline_exceeded", MEND_REASON_TIMEOUT },
    { "api_error", MEND_REASON_SERVER },
    { "server_error", MEND_REASON_SERVER },
    { "internal", MEND_REASON_SERVER },
    { "internal_error", MEND_REASON_SERVER },
    { "authentication_error", MEND_REASON_AUTH },
    { "invalid_api_key", MEND_REASON_AUTH },
    { "unauthenticated", MEND_REASON_AUTH },
    { "permission_error", MEND_REASON_PERMISSION },
    { "permission_denied", MEND_REASON_PERMISSION },
    { "invalid_request_error", MEND_REASON_BAD_REQUEST },
    { "not_found_error", MEND_REASON_BAD_REQUEST },
    { "request_too_large", MEND_REASON_BAD_REQUEST },
    { "context_length_exceeded", MEND_REASON_BAD_REQUEST },
    { "invalid_argument", MEND_REASON_BAD_REQUEST },
    { "model_not_found", MEND_REASON_BAD_REQUEST },
    { "insufficient_quota", MEND_REASON_USAGE_LIMIT },
    { "billing_error", MEND_REASON_USAGE_LIMIT },
    { "billing_hard_limit_reached", MEND_REASON_USAGE_LIMIT },
    { "billing_not_active", MEND_REASON_USAGE_LIMIT },
  };

  if (type == NULL)
    return MEND_REASON_UNKNOWN;

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_ascii_strcasecmp (type, table[i].type) == 0)
      return table[i].reason;

  return MEND_REASON_UNKNOWN;
}

static gboolean
is_word_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == ',';
}

/* The first whole number in the text that is an HTTP status we know, or 0. */
guint
mend_reason_status_in_text (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      guint64 value;

      if (!g_ascii_isdigit (*p) || (p > text && is_word_char (p[-1])))
        continue;

      if (!g_ascii_isdigit (p[1]) || !g_ascii_isdigit (p[2]) ||
          g_ascii_isalnum (p[3]) || p[3] == '_' ||
          /* "1,500" and "2.500" are numbers, "500." ends a sentence */
          ((p[3] == '.' || p[3] == ',') && g_ascii_isdigit (p[4])))
        {
          while (g_ascii_isdigit (p[1]))
            p++;
          continue;
        }

      value = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
      if (value >= 400 && value <= 599 &&
          reason_from_status ((guint) value) != MEND_REASON_UNKNOWN &&
          reason_from_status ((guint) value) != MEND_REASON_BAD_REQUEST)
        return (guint) value;
      if (value == 400 || value == 404 || value == 413 || value == 422)
        return (guint) value;
      p += 2;
    }

  return 0;
}

static gint64
saturating_ms (double value,
               double unit_ms)
{
  double ms = value * unit_ms;

  if (!isfinite (ms) || ms < 0)
    return -1;
  if (ms >= (double) G_MAXINT64 / 2)
    return G_MAXINT64 / 2;
  return (gint64) ceil (ms);
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
  *rest = end;

  return saturating_ms (value, unit);
}

/* A duration, which may have several parts: "2 days 3 hours 12 minutes". */
static gint64
parse_duration (const char *p)
{
  gint64 total = -1;

  while (*p == ' ' || *p == ':' || *p == '=')
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
  static const char * const markers[] = {
    "retry after", "retry-after", "retry in", "try again in", "retrying in", NULL
  };
  g_autofree char *lower = NULL;

  if (text == NULL)
    return -1;

  lower = g_ascii_strdown (text, -1);
  for (guint i = 0; markers[i] != NULL; i++)
    {
      const char *found = strstr (lower, markers[i]);

      if (found != NULL)
        {
          gint64 ms = parse_duration (found + strlen (markers[i]));

          if (ms >= 0)
            return ms;
        }
    }

  return -1;
}

gint64
mend_failure_parse_retry_after (const char *value,
                                gint64      now_wall_us)
{
  g_autoptr(GDateTime) date = NULL;
  const char *p;

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

  date = soup_date_time_new_from_http_string (value);
  if (date == NULL)
    return -1;

  {
    gint64 at_us = g_date_time_to_unix (date) * G_USEC_PER_SEC;
    gint64 delta = at_us - now_wall_us;

    return delta <= 0 ? 0 : (delta + 999) / 1000;
  }
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

static MendReason
reason_from_api_error (const MendApiError *api)
{
  MendReason reason = reason_from_api_type (api->code);

  if (reason == MEND_REASON_UNKNOWN)
    reason = reason_from_api_type (api->type);

  return reason;
}

static gboolean
text_says (const char         *text,
           const char * const *phrases)
{
  g_autofree char *lower = NULL;

  if (text == NULL)
    return FALSE;

  lower = lower_without_urls (text);
  return contains_any (lower, phrases);
}

/* A bad request whose words say the key was refused is an auth failure
 * (Google answers an invalid key with 400 INVALID_ARGUMENT). */
static MendReason
refine_bad_request (MendReason  reason,
                    const char *message)
{
  if (reason == MEND_REASON_BAD_REQUEST && message != NULL)
    {
      g_autofree char *lower = lower_without_urls (message);

      if (contains_any (lower, phrase_groups[0].phrases))
        return MEND_REASON_AUTH;
    }

  return reason;
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
mend_reason_from_text (const char  *text,
                       char       **api_error_type)
{
  g_autofree char *lower = lower_without_urls (text);
  g_autoptr(JsonNode) json = embedded_json (text);
  MendReason reason = MEND_REASON_UNKNOWN;
  MendApiError api;
  gboolean has_api = read_api_error (json, &api);
  guint status;

  if (has_api)
    {
      g_free (*api_error_type);
      *api_error_type = g_strdup (api.type);
    }

  if (contains_any (lower, usage_phrases))
    return MEND_REASON_USAGE_LIMIT;
  if (contains_any (lower, cancelled_phrases))
    return MEND_REASON_CANCELLED;

  if (has_api)
    {
      reason = reason_from_api_error (&api);
      if (reason == MEND_REASON_SERVER && api.message != NULL)
        {
          g_autofree char *msg = lower_without_urls (api.message);

          if (reason_from_phrases (msg) == MEND_REASON_CAPACITY)
            reason = MEND_REASON_CAPACITY;
        }
    }

  if (reason == MEND_REASON_UNKNOWN)
    {
      status = mend_reason_status_in_text (lower);
      if (status != 0)
        reason = reason_from_status (status);
    }

  if (reason == MEND_REASON_UNKNOWN)
    reason = reason_from_phrases (lower);

  return refine_bad_request (reason, text);
}

MendReason
mend_reason_from_gerror (const GError *error)
{
  if (error->domain == G_IO_ERROR)
    {
      switch (error->code)
        {
        case G_IO_ERROR_CANCELLED:
          return MEND_REASON_CANCELLED;
        case G_IO_ERROR_TIMED_OUT:
          return MEND_REASON_TIMEOUT;
        case G_IO_ERROR_CONNECTION_REFUSED:
        case G_IO_ERROR_CONNECTION_CLOSED:
        case G_IO_ERROR_HOST_UNREACHABLE:
        case G_IO_ERROR_NETWORK_UNREACHABLE:
        case G_IO_ERROR_NOT_CONNECTED:
        case G_IO_ERROR_PARTIAL_INPUT:
        case G_IO_ERROR_PROXY_FAILED:
          return MEND_REASON_TRANSPORT;
        default:
          break;
        }
    }
  else if (error->domain == G_RESOLVER_ERROR)
    {
      if (error->code == G_RESOLVER_ERROR_TEMPORARY_FAILURE)
        return MEND_REASON_TRANSPORT;
      return MEND_REASON_UNKNOWN;
    }
  else if (error->domain == G_TLS_ERROR)
    {
      if (error->code == G_TLS_ERROR_EOF)
        return MEND_REASON_TRANSPORT;
      return MEND_REASON_UNKNOWN;
    }
  else if (error->domain == SOUP_SESSION_ERROR)
    {
      switch (error->code)
        {
        case SOUP_SESSION_ERROR_PARSING:
        case SOUP_SESSION_ERROR_ENCODING:
          return MEND_REASON_TRANSPORT;
        case SOUP_SESSION_ERROR_TOO_MANY_REDIRECTS:
        case SOUP_SESSION_ERROR_REDIRECT_NO_LOCATION:
        case SOUP_SESSION_ERROR_REDIRECT_BAD_URI:
          return MEND_REASON_BAD_REQUEST;
        default:
          return MEND_REASON_UNKNOWN;
        }
    }

  return MEND_REASON_UNKNOWN;
}


MendReason
mend_reason_from_http (guint          status,
                       const char    *data,
                       gsize          size,
                       JsonNode     **json,
                       MendApiError  *api,
                       char         **body_text)
{
  MendReason api_reason = MEND_REASON_UNKNOWN;
  MendReason reason;

  memset (api, 0, sizeof *api);

  if (size > 0)
    {
      *json = mend_json_parse (data, size, NULL);
      if (read_api_error (*json, api))
        api_reason = reason_from_api_error (api);
      else
        *body_text = g_strndup (data, MIN (size, MEND_FAILURE_MAX_MESSAGE_BYTES * 2));
    }

  reason = reason_from_status (status);

  if (status == 402 || api_reason == MEND_REASON_USAGE_LIMIT ||
      text_says (api->message, usage_phrases) ||
      ((status == 429 || status == 400 || status == 403) && text_says (*body_text, usage_phrases)))
    reason = MEND_REASON_USAGE_LIMIT;
  else if (reason == MEND_REASON_SERVER && api_reason == MEND_REASON_CAPACITY)
    reason = MEND_REASON_CAPACITY;
  else if (reason == MEND_REASON_UNKNOWN && api_reason != MEND_REASON_UNKNOWN)
    reason = api_reason;
  else if (reason == MEND_REASON_UNKNOWN && status >= 200 && status < 300 && size == 0)
    reason = MEND_REASON_EMPTY;
  else if (reason == MEND_REASON_UNKNOWN && (api->message != NULL || *body_text != NULL))
    {
      g_autofree char *lower = lower_without_urls (api->message ? api->message : *body_text);
      reason = reason_from_phrases (lower);
    }

  return refine_bad_request (reason, api->message ? api->message : *body_text);
}

void
mend_reason_read_headers (SoupMessageHeaders *headers,
                          gint64              now_wall_us,
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
        *retry_after_ms = mend_failure_parse_retry_after (value, now_wall_us);
    }
}
