/* mend-http-headers.c — MendHttpSender's headers, checked and registered for redaction
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What MendHttpSender checks of the headers it is given, and the values it
 * registers with the redactor.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "mend-http-headers-private.h"
#include "mend-redact-private.h"

/* RFC 9110: a field name is a token; a value holds no CR, LF, NUL or other
 * control character but a tab. */
gboolean
mend_http_header_name_is_valid (const char *name,
                                gsize      *bad_offset)
{
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("!#$%&'*+-.^_`|~", *p) == NULL)
      {
        if (bad_offset != NULL)
          *bad_offset = p - name;
        return FALSE;
      }
  if (bad_offset != NULL)
    *bad_offset = 0;
  return *name != '\0';
}

gboolean
mend_http_header_value_is_valid (const char *value)
{
  for (const guchar *p = (const guchar *) value; *p != '\0'; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
      return FALSE;
  return TRUE;
}

/* Credentials: every value the sender sends that may be one is registered
 * with the redactor while the sender lives, so that no echo of it leaves
 * the library in text, whatever its shape. */

gboolean
mend_http_header_is_public (const char *name)
{
  static const char * const names[] = {
    "accept", "accept-encoding", "accept-language", "content-type", "user-agent",
    "anthropic-version", "anthropic-beta", "openai-beta", "idempotency-key", NULL
  };

  for (guint i = 0; names[i] != NULL; i++)
    if (g_ascii_strcasecmp (name, names[i]) == 0)
      return TRUE;
  return FALSE;
}

typedef void (*ApplyFunc) (MendSecretSet *secrets,
                           const char    *value);

/* A header's value, and for a Cookie ("theme=dark; sid=…") each value of
 * its pairs too: a server may echo one alone. Of a Set-Cookie only the
 * first pair is the cookie; the others are attributes (Path, Domain,
 * Expires…). Short values are left out by @apply. */
static void
apply_to_header (MendSecretSet *secrets,
                 const char    *name,
                 const char    *value,
                 ApplyFunc      apply)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);
  g_auto(GStrv) pairs = NULL;
  gboolean set_cookie;

  apply (secrets, value);
  if (strstr (lower, "cookie") == NULL)
    return;

  set_cookie = g_str_has_prefix (lower, "set-cookie");
  pairs = g_strsplit (value, ";", -1);
  for (guint i = 0; pairs[i] != NULL && (i == 0 || !set_cookie); i++)
    {
      char *equals = strchr (pairs[i], '=');
      char *pair_value;
      gsize length;

      if (equals == NULL)
        continue;

      pair_value = g_strstrip (equals + 1);
      length = strlen (pair_value);
      /* A quoted value: the server may say it without its quotes. */
      if (length >= 2 && pair_value[0] == '"' && pair_value[length - 1] == '"')
        {
          pair_value[length - 1] = '\0';
          pair_value++;
        }
      apply (secrets, pair_value);
    }
}

void
mend_http_secrets_pin_header (MendSecretSet *secrets,
                              const char    *name,
                              const char    *value)
{
  if (!mend_http_header_is_public (name))
    apply_to_header (secrets, name, value, mend_secret_set_pin);
}

void
mend_http_secrets_unpin_header (MendSecretSet *secrets,
                                const char    *name,
                                const char    *value)
{
  if (!mend_http_header_is_public (name))
    apply_to_header (secrets, name, value, mend_secret_set_unpin);
}

/* Headers a build-message handler added, and the request's own
 * Authorization: those named like credentials. They may change with each
 * request, so they rotate. */
void
mend_http_secrets_remember_headers (MendSecretSet      *secrets,
                                    SoupMessageHeaders *headers)
{
  SoupMessageHeadersIter iter;
  const char *name;
  const char *value;

  soup_message_headers_iter_init (&iter, headers);
  while (soup_message_headers_iter_next (&iter, &name, &value))
    if (!mend_http_header_is_public (name) && mend_redact_is_credential_name (name))
      apply_to_header (secrets, name, value, mend_secret_set_add_rotating);
}

/* A key in the endpoint: "https://user:key@host/…", "…?key=…". */
void
mend_http_secrets_remember_uri (MendSecretSet *secrets,
                                const char    *text)
{
  g_autoptr(GUri) uri = text ? g_uri_parse (text, SOUP_HTTP_URI_FLAGS, NULL) : NULL;
  GUriParamsIter iter;
  char *name;
  char *value;

  if (uri == NULL)
    return;

  mend_secret_set_pin (secrets, g_uri_get_password (uri));
  if (g_uri_get_query (uri) == NULL)
    return;

  g_uri_params_iter_init (&iter, g_uri_get_query (uri), -1, "&", G_URI_PARAMS_NONE);
  while (g_uri_params_iter_next (&iter, &name, &value, NULL))
    {
      if (mend_redact_is_credential_name (name))
        {
          g_autofree char *escaped = g_uri_escape_string (value, NULL, FALSE);

          mend_secret_set_pin (secrets, value);
          mend_secret_set_pin (secrets, escaped);
        }
      g_free (name);
      g_free (value);
    }
}

/* Rate-limit headers: OpenAI's (and Groq's) x-ratelimit-reset-requests and
 * x-ratelimit-reset-tokens, Go durations such as "1s", "6m0s", "20ms",
 * "2.5s" or "1h2m3.5s" (https://platform.openai.com/docs/guides/rate-limits). */

/* A Go duration in milliseconds, rounded up; -1 unless the whole value is
 * one. */
static gint64
parse_go_duration (const char *value)
{
  const char *p = value;
  double total = 0;
  gboolean any = FALSE;

  while (*p == ' ')
    p++;
  while (*p != '\0' && *p != ' ')
    {
      static const struct {
        const char *unit;
        double      ms;
      } units[] = {
        /* Longest first: "ms" before "m". */
        { "ms", 1 }, { "us", 0.001 }, { "µs", 0.001 }, { "ns", 0.000001 },
        { "h", 3600000 }, { "m", 60000 }, { "s", 1000 },
      };
      char *end = NULL;
      double number;
      guint i;

      if (!g_ascii_isdigit (*p) && *p != '.')
        return -1;
      number = g_ascii_strtod (p, &end);
      if (end == p || number < 0)
        return -1;
      for (i = 0; i < G_N_ELEMENTS (units); i++)
        if (g_str_has_prefix (end, units[i].unit))
          break;
      if (i == G_N_ELEMENTS (units))
        return -1;
      total += number * units[i].ms;
      p = end + strlen (units[i].unit);
      any = TRUE;
    }
  while (*p == ' ')
    p++;
  if (!any || *p != '\0' || !isfinite (total) || total >= (double) G_MAXINT64 / 2)
    return -1;

  return (gint64) ceil (total - 1e-6);
}

/* A remaining count: -1 when absent or not a number. */
static gint64
remaining (SoupMessageHeaders *headers,
           const char         *name)
{
  const char *value = soup_message_headers_get_one (headers, name);
  char *end = NULL;
  gint64 count;

  if (value == NULL)
    return -1;
  count = g_ascii_strtoll (value, &end, 10);
  return end != value && *end == '\0' && count >= 0 ? count : -1;
}

gint64
mend_http_rate_limit_reset_ms (SoupMessageHeaders *headers)
{
  const char *requests_value;
  const char *tokens_value;
  gint64 requests = -1;
  gint64 tokens = -1;
  gboolean requests_apply;
  gboolean tokens_apply;

  if (headers == NULL)
    return -1;

  requests_value = soup_message_headers_get_one (headers, "x-ratelimit-reset-requests");
  tokens_value = soup_message_headers_get_one (headers, "x-ratelimit-reset-tokens");
  if (requests_value != NULL)
    requests = parse_go_duration (requests_value);
  if (tokens_value != NULL)
    tokens = parse_go_duration (tokens_value);

  /* A limit whose remaining count is left is not the one that was hit; a
   * request refused with requests left was too large for the tokens left. */
  requests_apply = requests >= 0 && remaining (headers, "x-ratelimit-remaining-requests") <= 0;
  tokens_apply = tokens >= 0 && (remaining (headers, "x-ratelimit-remaining-tokens") <= 0 || !requests_apply);

  if (requests_apply && tokens_apply)
    return MAX (requests, tokens);
  if (requests_apply)
    return requests;
  if (tokens_apply)
    return tokens;
  return -1;
}
