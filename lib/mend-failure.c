/* mend-failure.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/**
 * MendFailure:
 *
 * What went wrong on one attempt.
 *
 * A failure is made from what the app saw: a [struct@GLib.Error], an HTTP
 * response, the error text an agent printed, an empty answer, or the user's
 * Stop. Its facts — [property@Mend.Failure:reason],
 * [property@Mend.Failure:status], [property@Mend.Failure:retry-after-ms],
 * [property@Mend.Failure:api-error-type] — are read once, when it is made.
 * Its verdict, [property@Mend.Failure:kind], is set by the default
 * [class@Mend.ErrorPolicy] then, and again by the policy of the
 * [class@Mend.Turn] or subagent retry that handles it.
 *
 * Text is matched case-insensitively; a status inside text counts only as a
 * whole number ("15000" is not 500). Anything not recognized is
 * %MEND_REASON_UNKNOWN and fails closed: it is not retried.
 */

struct _MendFailure
{
  GObject          parent_instance;

  MendFailureKind  kind;
  MendReason       reason;
  guint            status;
  gint64           retry_after_ms;
  char            *message;
  GError          *error;
  char            *api_error_type;
  gboolean         partial;
  int              should_retry;  /* -1 unknown, 0 or 1 from x-should-retry */
};

enum {
  PROP_0,
  PROP_KIND,
  PROP_REASON,
  PROP_STATUS,
  PROP_RETRY_AFTER_MS,
  PROP_MESSAGE,
  PROP_ERROR,
  PROP_API_ERROR_TYPE,
  PROP_PARTIAL,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendFailure, mend_failure, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

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
static guint
status_in_text (const char *text)
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

static char *
truncate_message (const char *text)
{
  const char *end;
  gsize len;

  if (text == NULL)
    return NULL;

  len = strlen (text);
  if (!g_utf8_validate (text, len, &end))
    {
      g_autofree char *valid = g_utf8_make_valid (text, len);
      return truncate_message (valid);
    }

  if (len <= MEND_FAILURE_MAX_MESSAGE_BYTES)
    return g_strdup (text);

  /* Room for "…" (3 bytes), cut at a character boundary. */
  end = g_utf8_find_prev_char (text, text + MEND_FAILURE_MAX_MESSAGE_BYTES - 3 + 1);
  return g_strdup_printf ("%.*s…", (int) (end - text), text);
}

static void
classify_default (MendFailure *self)
{
  self->kind = mend_error_policy_default_kind (self->reason,
                                               self->should_retry,
                                               self->partial,
                                               FALSE);
}

static MendFailure *
failure_new (MendReason  reason,
             const char *message)
{
  MendFailure *self = g_object_new (MEND_TYPE_FAILURE, NULL);
  g_autofree char *redacted = mend_redact_secrets (message, -1);

  self->reason = reason;
  self->message = truncate_message (redacted);

  return self;
}

typedef struct
{
  const char *type;     /* error.type, or error.code / error.status as text */
  const char *message;  /* error.message, or error as a string */
  const char *code;
} ApiError;

/* Reads the Anthropic ({"type":"error","error":{"type","message"}}), OpenAI
 * ({"error":{"message","type","code"}}) and Google ({"error":{"code",
 * "status","message"}}) error shapes. */
static gboolean
read_api_error (JsonNode *root,
                ApiError *out)
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
reason_from_api_error (const ApiError *api)
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

static MendReason
reason_from_text (const char  *text,
                  char       **api_error_type)
{
  g_autofree char *lower = lower_without_urls (text);
  g_autoptr(JsonNode) json = embedded_json (text);
  MendReason reason = MEND_REASON_UNKNOWN;
  ApiError api;
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
      status = status_in_text (lower);
      if (status != 0)
        reason = reason_from_status (status);
    }

  if (reason == MEND_REASON_UNKNOWN)
    reason = reason_from_phrases (lower);

  return refine_bad_request (reason, text);
}

/**
 * mend_failure_new_from_text:
 * @detail: (nullable): error text, as an agent or a log printed it
 *
 * Makes a failure from error text such as `API Error: 529 {…}`,
 * `Connection error: ECONNRESET` or "You've hit your usage limit". A JSON
 * error body inside the text is read, and a "(retry after 30s)" hint is kept
 * in [property@Mend.Failure:retry-after-ms]. Text that says nothing known is
 * %MEND_REASON_UNKNOWN, which is not retried.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_text (const char *detail)
{
  g_autofree char *api_type = NULL;
  MendFailure *self;
  MendReason reason;

  if (detail == NULL || *detail == '\0')
    {
      self = failure_new (MEND_REASON_UNKNOWN, _("Unknown error"));
      classify_default (self);
      return self;
    }

  reason = reason_from_text (detail, &api_type);
  self = failure_new (reason, detail);
  self->api_error_type = g_steal_pointer (&api_type);
  self->retry_after_ms = mend_failure_parse_text_hint (detail);
  self->status = status_in_text (detail);
  classify_default (self);

  return self;
}

static MendReason
reason_from_gerror (const GError *error)
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

/**
 * mend_failure_new_from_error:
 * @error: the error an attempt ended with
 *
 * Makes a failure from a [struct@GLib.Error]. GIO, resolver, TLS and libsoup
 * errors are read by domain and code: %G_IO_ERROR_CANCELLED is the user's
 * Stop, a timeout is %MEND_REASON_TIMEOUT, a reset, refused or closed
 * connection, a temporary DNS failure and a TLS EOF are
 * %MEND_REASON_TRANSPORT. Errors of other domains are read as text.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_error (const GError *error)
{
  MendFailure *self;
  MendReason reason;

  g_return_val_if_fail (error != NULL, NULL);

  reason = reason_from_gerror (error);
  if (reason == MEND_REASON_UNKNOWN &&
      error->domain != G_RESOLVER_ERROR &&
      error->domain != G_TLS_ERROR &&
      error->domain != SOUP_SESSION_ERROR)
    {
      self = mend_failure_new_from_text (error->message);
    }
  else
    {
      self = failure_new (reason, error->message);
      classify_default (self);
    }

  self->error = g_error_copy (error);

  return self;
}

static void
read_headers (MendFailure        *self,
              SoupMessageHeaders *headers,
              gint64              now_wall_us)
{
  const char *value;

  if (headers == NULL)
    return;

  value = soup_message_headers_get_one (headers, "x-should-retry");
  if (value != NULL)
    {
      if (g_ascii_strcasecmp (value, "true") == 0)
        self->should_retry = 1;
      else if (g_ascii_strcasecmp (value, "false") == 0)
        self->should_retry = 0;
    }

  value = soup_message_headers_get_one (headers, "retry-after-ms");
  if (value != NULL)
    {
      char *end = NULL;
      double ms = g_ascii_strtod (value, &end);

      while (end != NULL && g_ascii_isspace (*end))
        end++;
      if (end != value && end != NULL && *end == '\0')
        self->retry_after_ms = saturating_ms (ms, 1);
    }

  if (self->retry_after_ms < 0)
    {
      value = soup_message_headers_get_one (headers, "Retry-After");
      if (value != NULL)
        self->retry_after_ms = mend_failure_parse_retry_after (value, now_wall_us);
    }
}

/**
 * mend_failure_new_from_http:
 * @status: the HTTP status
 * @headers: (nullable): the response headers
 * @body: (nullable): the response body
 *
 * Makes a failure from an HTTP response, with the default clock for a
 * `Retry-After` given as a date. See [ctor@Mend.Failure.new_from_http_at].
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_http (guint               status,
                            SoupMessageHeaders *headers,
                            GBytes             *body)
{
  return mend_failure_new_from_http_at (status, headers, body, NULL);
}

/**
 * mend_failure_new_from_http_at:
 * @status: the HTTP status
 * @headers: (nullable): the response headers
 * @body: (nullable): the response body
 * @clock: (nullable): the clock a `Retry-After` date is measured against, or
 *   %NULL for the default clock
 *
 * Makes a failure from an HTTP response. The status decides the reason; an
 * Anthropic or OpenAI JSON error body refines it (a 429 whose body speaks of
 * a quota or billing is a %MEND_REASON_USAGE_LIMIT, a 500 that says it is
 * overloaded is %MEND_REASON_CAPACITY). `x-should-retry` wins over the
 * status; `retry-after-ms`, then `Retry-After` (seconds or an HTTP-date),
 * give [property@Mend.Failure:retry-after-ms]. A 2xx response with an empty
 * body is %MEND_REASON_EMPTY.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_http_at (guint               status,
                               SoupMessageHeaders *headers,
                               GBytes             *body,
                               MendClock          *clock)
{
  g_autoptr(JsonNode) json = NULL;
  g_autofree char *body_text = NULL;
  g_autofree char *message = NULL;
  const char *data = NULL;
  gsize size = 0;
  ApiError api = { 0 };
  MendReason reason;
  MendReason api_reason = MEND_REASON_UNKNOWN;
  MendFailure *self;

  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  if (clock == NULL)
    clock = mend_clock_get_default ();

  if (body != NULL)
    data = g_bytes_get_data (body, &size);

  if (size > 0)
    {
      json = mend_json_parse (data, size, NULL);
      if (read_api_error (json, &api))
        api_reason = reason_from_api_error (&api);
      else
        body_text = g_strndup (data, MIN (size, MEND_FAILURE_MAX_MESSAGE_BYTES * 2));
    }

  reason = reason_from_status (status);

  if (status == 402 || api_reason == MEND_REASON_USAGE_LIMIT ||
      text_says (api.message, usage_phrases) ||
      ((status == 429 || status == 400 || status == 403) && text_says (body_text, usage_phrases)))
    reason = MEND_REASON_USAGE_LIMIT;
  else if (reason == MEND_REASON_SERVER && api_reason == MEND_REASON_CAPACITY)
    reason = MEND_REASON_CAPACITY;
  else if (reason == MEND_REASON_UNKNOWN && api_reason != MEND_REASON_UNKNOWN)
    reason = api_reason;
  else if (reason == MEND_REASON_UNKNOWN && status >= 200 && status < 300 && size == 0)
    reason = MEND_REASON_EMPTY;
  else if (reason == MEND_REASON_UNKNOWN && (api.message != NULL || body_text != NULL))
    {
      g_autofree char *lower = lower_without_urls (api.message ? api.message : body_text);
      reason = reason_from_phrases (lower);
    }

  reason = refine_bad_request (reason, api.message ? api.message : body_text);

  if (api.message != NULL && *api.message != '\0')
    message = g_strdup (api.message);
  else if (body_text != NULL && *g_strstrip (body_text) != '\0' &&
           g_utf8_validate (body_text, -1, NULL))
    message = g_strdup_printf ("HTTP %u: %s", status, body_text);
  else if (reason == MEND_REASON_EMPTY)
    message = g_strdup (_("The model sent an empty response"));
  else
    message = g_strdup_printf ("HTTP %u %s", status, soup_status_get_phrase (status));

  self = failure_new (reason, message);
  self->status = status;
  self->api_error_type = g_strdup (api.type);
  read_headers (self, headers, mend_clock_get_real_time (clock));
  if (self->retry_after_ms < 0)
    self->retry_after_ms = mend_failure_parse_text_hint (api.message ? api.message : body_text);
  classify_default (self);

  return self;
}

void
mend_failure_build_state (MendFailure *self,
                          JsonBuilder *builder)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder, mend_reason_to_nick (self->reason));
  json_builder_set_member_name (builder, "status");
  json_builder_add_int_value (builder, self->status);
  json_builder_set_member_name (builder, "retryAfterMs");
  json_builder_add_int_value (builder, self->retry_after_ms);
  json_builder_set_member_name (builder, "partial");
  json_builder_add_boolean_value (builder, self->partial);
  mend_json_add_string (builder, "message", self->message);
  json_builder_end_object (builder);
}

MendFailure *
mend_failure_new_from_state (JsonObject *object,
                             gboolean   *ok)
{
  gboolean valid = TRUE;
  MendReason reason = mend_json_read_nick (object, "reason", MEND_TYPE_REASON, &valid);
  guint status = (guint) mend_json_read_int (object, "status", 0, 999, &valid);
  gint64 retry_after = mend_json_read_int (object, "retryAfterMs", -1, G_MAXINT64 / 4, &valid);
  gboolean partial = mend_json_read_bool (object, "partial", &valid);
  const char *message = mend_json_read_string (object, "message", TRUE, &valid);
  MendFailure *self;

  if (!valid)
    {
      *ok = FALSE;
      return NULL;
    }

  self = failure_new (reason, message);
  self->status = status;
  self->retry_after_ms = retry_after;
  self->partial = partial;
  classify_default (self);
  return self;
}

/**
 * mend_failure_new_empty_response:
 *
 * Makes the failure of an attempt whose answer was empty: no text, no tool
 * call. It is %MEND_REASON_EMPTY and retried.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_empty_response (void)
{
  MendFailure *self = failure_new (MEND_REASON_EMPTY, _("The model sent an empty response"));

  classify_default (self);
  return self;
}

/**
 * mend_failure_new_stopped:
 *
 * Makes the failure of an attempt the user stopped. It is
 * %MEND_FAILURE_STOPPED: never retried, never an error to show.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_stopped (void)
{
  MendFailure *self = failure_new (MEND_REASON_CANCELLED, _("Stopped"));

  classify_default (self);
  return self;
}

static void
mend_failure_finalize (GObject *object)
{
  MendFailure *self = (MendFailure *) object;

  g_clear_pointer (&self->message, g_free);
  g_clear_pointer (&self->api_error_type, g_free);
  g_clear_error (&self->error);

  G_OBJECT_CLASS (mend_failure_parent_class)->finalize (object);
}

static void
mend_failure_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  MendFailure *self = MEND_FAILURE (object);

  switch (prop_id)
    {
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case PROP_REASON:
      g_value_set_enum (value, self->reason);
      break;
    case PROP_STATUS:
      g_value_set_uint (value, self->status);
      break;
    case PROP_RETRY_AFTER_MS:
      g_value_set_int64 (value, self->retry_after_ms);
      break;
    case PROP_MESSAGE:
      g_value_set_string (value, self->message);
      break;
    case PROP_ERROR:
      g_value_set_boxed (value, self->error);
      break;
    case PROP_API_ERROR_TYPE:
      g_value_set_string (value, self->api_error_type);
      break;
    case PROP_PARTIAL:
      g_value_set_boolean (value, self->partial);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_failure_class_init (MendFailureClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_failure_finalize;
  object_class->get_property = mend_failure_get_property;

  /**
   * MendFailure:kind:
   *
   * The verdict: whether the failure may be retried.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       MEND_TYPE_FAILURE_KIND, MEND_FAILURE_PERMANENT,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:reason:
   *
   * What went wrong, as the facts tell.
   */
  properties[PROP_REASON] =
    g_param_spec_enum ("reason", NULL, NULL,
                       MEND_TYPE_REASON, MEND_REASON_UNKNOWN,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:status:
   *
   * The HTTP status, or 0 when there was none.
   */
  properties[PROP_STATUS] =
    g_param_spec_uint ("status", NULL, NULL,
                       0, 999, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:retry-after-ms:
   *
   * How long the server asked to wait, in milliseconds, or -1 when it did
   * not say.
   */
  properties[PROP_RETRY_AFTER_MS] =
    g_param_spec_int64 ("retry-after-ms", NULL, NULL,
                        -1, G_MAXINT64, -1,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:message:
   *
   * The error text, at most %MEND_FAILURE_MAX_MESSAGE_BYTES bytes.
   */
  properties[PROP_MESSAGE] =
    g_param_spec_string ("message", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:error:
   *
   * The [struct@GLib.Error] the failure was made from, or %NULL.
   */
  properties[PROP_ERROR] =
    g_param_spec_boxed ("error", NULL, NULL,
                        G_TYPE_ERROR,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:api-error-type:
   *
   * The type of the API's error body, such as `overloaded_error`, or %NULL.
   */
  properties[PROP_API_ERROR_TYPE] =
    g_param_spec_string ("api-error-type", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:partial:
   *
   * Whether output was seen before the attempt failed. Such a failure is
   * not retried unless the policy's [property@Mend.ErrorPolicy:retry-partial]
   * says so, so that tools never run twice and text is never duplicated.
   */
  properties[PROP_PARTIAL] =
    g_param_spec_boolean ("partial", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_failure_init (MendFailure *self)
{
  self->kind = MEND_FAILURE_PERMANENT;
  self->reason = MEND_REASON_UNKNOWN;
  self->retry_after_ms = -1;
  self->should_retry = -1;
}

/**
 * mend_failure_get_kind:
 * @self: a failure
 *
 * Gets the verdict on the failure.
 *
 * Returns: whether the failure may be retried
 */
MendFailureKind
mend_failure_get_kind (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), MEND_FAILURE_PERMANENT);

  return self->kind;
}

/**
 * mend_failure_get_reason:
 * @self: a failure
 *
 * Gets what went wrong.
 *
 * Returns: the reason
 */
MendReason
mend_failure_get_reason (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), MEND_REASON_UNKNOWN);

  return self->reason;
}

/**
 * mend_failure_get_status:
 * @self: a failure
 *
 * Gets the HTTP status of the failure, also one read from error text.
 *
 * Returns: the status, or 0
 */
guint
mend_failure_get_status (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), 0);

  return self->status;
}

/**
 * mend_failure_get_retry_after_ms:
 * @self: a failure
 *
 * Gets how long the server asked to wait.
 *
 * Returns: the server's hint in milliseconds, or -1
 */
gint64
mend_failure_get_retry_after_ms (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), -1);

  return self->retry_after_ms;
}

/**
 * mend_failure_get_message:
 * @self: a failure
 *
 * Gets the error text.
 *
 * Returns: (nullable): the message
 */
const char *
mend_failure_get_message (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->message;
}

/**
 * mend_failure_get_error:
 * @self: a failure
 *
 * Gets the error the failure was made from.
 *
 * Returns: (nullable) (transfer none): the error, or %NULL
 */
const GError *
mend_failure_get_error (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->error;
}

/**
 * mend_failure_get_api_error_type:
 * @self: a failure
 *
 * Gets the type of the API's error body, such as `overloaded_error`.
 *
 * Returns: (nullable): the type, or %NULL
 */
const char *
mend_failure_get_api_error_type (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->api_error_type;
}

/**
 * mend_failure_get_partial:
 * @self: a failure
 *
 * Gets whether output was seen before the attempt failed.
 *
 * Returns: %TRUE if the failure came after output
 */
gboolean
mend_failure_get_partial (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), FALSE);

  return self->partial;
}

/**
 * mend_failure_get_should_retry:
 * @self: a failure
 * @should_retry: (out) (optional): what the server's `x-should-retry` said
 *
 * Gets the server's own word on retrying, from its `x-should-retry` header.
 * It wins over the status in the default classification.
 *
 * Returns: %TRUE if the server said, %FALSE if it did not
 */
gboolean
mend_failure_get_should_retry (MendFailure *self,
                               gboolean    *should_retry)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), FALSE);

  if (should_retry != NULL)
    *should_retry = self->should_retry == 1;

  return self->should_retry != -1;
}

void
mend_failure_set_kind (MendFailure     *self,
                       MendFailureKind  kind)
{
  g_return_if_fail (MEND_IS_FAILURE (self));

  if (self->kind != kind)
    {
      self->kind = kind;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KIND]);
    }
}

void
mend_failure_set_partial (MendFailure *self,
                          gboolean     partial)
{
  g_return_if_fail (MEND_IS_FAILURE (self));

  partial = !!partial;
  if (self->partial != partial)
    {
      self->partial = partial;
      classify_default (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PARTIAL]);
    }
}

static const char *
enum_nick (GType type,
           int   value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *ev = g_enum_get_value (klass, value);
  const char *nick = ev ? ev->value_nick : NULL;

  /* Enum classes are never freed once made; the nick is static. */
  g_type_class_unref (klass);
  return nick;
}

/**
 * mend_reason_to_nick:
 * @reason: a reason
 *
 * Gets the name of a reason as JSON and records spell it, such as
 * `"capacity"` or `"rate-limit"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
const char *
mend_reason_to_nick (MendReason reason)
{
  return enum_nick (MEND_TYPE_REASON, reason);
}

/**
 * mend_failure_kind_to_nick:
 * @kind: a failure kind
 *
 * Gets the name of a failure kind as JSON spells it, such as `"transient"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
const char *
mend_failure_kind_to_nick (MendFailureKind kind)
{
  return enum_nick (MEND_TYPE_FAILURE_KIND, kind);
}
