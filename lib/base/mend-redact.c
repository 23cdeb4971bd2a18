/* mend-redact.c — keeps credentials out of every text libmend hands out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Credentials never leave libmend in text: not in a failure's message, its
 * GError, saved state, a record or a log line. Two nets catch them: the
 * exact values a sender was given (registered while the sender lives), and
 * the shapes keys take when a server echoes a request back — a labelled
 * value ("x-api-key: …", "\"api_key\":\"…\"", "?key=…"), an auth scheme
 * ("Bearer …"), a password in a URL, and tokens with a known prefix
 * ("sk-…", "AIza…", "ghp_…", a JWT).
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mend-redact-private.h"

#define REDACTED "[redacted]"

/* A labelled value shorter than this is not taken for a secret: "max_tokens:
 * 4096" stays readable. */
#define MIN_LABELLED_VALUE 8

/* Registered values: value → number of holders. */
static GMutex secrets_lock;
static GHashTable *secrets;

void
mend_redact_add_secret (const char *value)
{
  gpointer count;

  if (value == NULL || strlen (value) < MEND_REDACT_MIN_SECRET_BYTES)
    return;

  g_mutex_lock (&secrets_lock);
  if (secrets == NULL)
    secrets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  count = g_hash_table_lookup (secrets, value);
  g_hash_table_insert (secrets, g_strdup (value), GUINT_TO_POINTER (GPOINTER_TO_UINT (count) + 1));
  g_mutex_unlock (&secrets_lock);
}

void
mend_redact_remove_secret (const char *value)
{
  guint count;

  if (value == NULL)
    return;

  g_mutex_lock (&secrets_lock);
  if (secrets != NULL)
    {
      count = GPOINTER_TO_UINT (g_hash_table_lookup (secrets, value));
      if (count > 1)
        g_hash_table_insert (secrets, g_strdup (value), GUINT_TO_POINTER (count - 1));
      else if (count == 1)
        g_hash_table_remove (secrets, value);
    }
  g_mutex_unlock (&secrets_lock);
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == '.' || c == '~' ||
         c == '+' || c == '/' || c == '=' || c == '%';
}

static gboolean
is_label_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_';
}

static gboolean
has_prefix_nocase (const char *p,
                   const char *end,
                   const char *prefix)
{
  gsize n = strlen (prefix);

  return (gsize) (end - p) >= n && g_ascii_strncasecmp (p, prefix, n) == 0;
}

/* Whether the label [p, q) names a credential: "x-api-key", "api_key",
 * "Authorization", "access_token", "client_secret", "password", "Cookie",
 * or a URL's "key" parameter. */
static gboolean
is_credential_label (const char *p,
                     const char *q,
                     gboolean    url_parameter)
{
  static const char * const words[] = {
    "key", "token", "secret", "password", "passwd", "authorization",
    "cookie", "credential", "signature", "session", "auth", NULL
  };
  g_autofree char *label = g_ascii_strdown (p, q - p);

  /* The one header named like a key that holds none. */
  if (g_str_has_prefix (label, "idempotency"))
    return FALSE;
  /* A status's name ("401 Unauthorized: Incorrect API key", gRPC's
   * "UNAUTHENTICATED: …"), followed by the reason, not a credential. */
  if (g_str_equal (label, "unauthorized") || g_str_equal (label, "unauthenticated"))
    return FALSE;

  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *hit = strstr (label, words[i]);

      /* "key" alone is a credential only as a URL's parameter, ?key=… */
      if (g_str_equal (words[i], "key") && g_str_equal (label, "key") && !url_parameter)
        continue;
      if (hit != NULL)
        return TRUE;
    }

  return FALSE;
}

gboolean
mend_redact_is_credential_name (const char *name)
{
  return name != NULL && is_credential_label (name, name + strlen (name), TRUE);
}

gboolean
mend_redact_is_credential_variable (const char *name)
{
  static const char * const words[] = {
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE", NULL
  };
  static const char * const not_credentials[] = {
    "TOKENS",           /* MAX_TOKENS, --max-tokens: a count */
    "_SOCK", "XAUTHORITY", "KEYBOARD", NULL
  };
  g_autofree char *upper = NULL;

  if (name == NULL)
    return FALSE;

  upper = g_ascii_strup (name, -1);
  for (guint i = 0; not_credentials[i] != NULL; i++)
    if (strstr (upper, not_credentials[i]) != NULL)
      return FALSE;
  for (guint i = 0; words[i] != NULL; i++)
    if (strstr (upper, words[i]) != NULL)
      return TRUE;
  return FALSE;
}

/* The end of a value that starts at @p: a quoted value runs to its closing
 * quote, a bare one to the first byte that ends a header, parameter or
 * word. */
static const char *
value_end (const char *p,
           const char *end,
           char        quote)
{
  if (quote != '\0')
    {
      while (p < end && *p != quote && *p != '\n' && *p != '\r')
        {
          if (*p == '\\' && p + 1 < end)
            p++;
          p++;
        }
      return MIN (p, end);
    }

  while (p < end && !g_ascii_isspace (*p) && strchr (",;&\"'<>(){}[]", *p) == NULL)
    p++;
  return p;
}

/* "Bearer x", "Basic x", "Token x" at @p: where the credential starts. */
static const char *
after_scheme (const char *p,
              const char *end)
{
  static const char * const schemes[] = { "bearer ", "basic ", "token ", "digest ", NULL };

  for (guint i = 0; schemes[i] != NULL; i++)
    if (has_prefix_nocase (p, end, schemes[i]))
      {
        p += strlen (schemes[i]);
        while (p < end && *p == ' ')
          p++;
        return p;
      }

  return NULL;
}

/* A labelled credential starting at @p: `label: value`, `label=value`,
 * `"label":"value"`, `'label': 'value'`. Returns the value's span. */
static gboolean
labelled_at (const char  *p,
             const char  *end,
             const char  *start,
             const char **value_at,
             const char **value_to)
{
  const char *q = p;
  const char *label_end;
  gboolean url_parameter;
  char quote = '\0';
  const char *v;

  if (p > start && (is_label_char (p[-1])))
    return FALSE;
  url_parameter = p > start && (p[-1] == '?' || p[-1] == '&' || p[-1] == ';');

  while (q < end && is_label_char (*q))
    q++;
  if (q == p)
    return FALSE;
  label_end = q;

  if (q < end && (*q == '"' || *q == '\''))
    q++;
  while (q < end && *q == ' ')
    q++;
  if (q >= end || (*q != ':' && *q != '='))
    return FALSE;
  q++;
  while (q < end && (*q == ' ' || *q == '\t'))
    q++;
  if (q < end && (*q == '"' || *q == '\''))
    quote = *q++;

  if (!is_credential_label (p, label_end, url_parameter))
    return FALSE;

  v = after_scheme (q, end);
  if (v == NULL)
    v = q;

  *value_at = v;
  *value_to = value_end (v, end, quote);
  return *value_to - v >= MIN_LABELLED_VALUE;
}

/* A token with a known prefix starting at @p: its end, or NULL. */
static const char *
prefixed_token_at (const char *p,
                   const char *end,
                   const char *start)
{
  static const struct { const char *prefix; gsize min; } shapes[] = {
    { "sk-", 12 },          /* Anthropic sk-ant-…, OpenAI sk-…, sk-proj-… */
    { "AIza", 20 },         /* Google API keys */
    { "ghp_", 20 }, { "gho_", 20 }, { "ghu_", 20 }, { "ghs_", 20 }, { "ghr_", 20 },
    { "github_pat_", 20 },
    { "glpat-", 20 },
    { "xoxb-", 20 }, { "xoxp-", 20 }, { "xoxa-", 20 },
    { "hf_", 20 },
    { "AKIA", 20 },         /* AWS access key ids */
    { "eyJ", 24 },          /* a JSON Web Token: base64 of '{"' */
  };
  const char *q;

  if (p > start && is_token_char (p[-1]))
    return NULL;

  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      gsize n = strlen (shapes[i].prefix);

      if ((gsize) (end - p) < n || memcmp (p, shapes[i].prefix, n) != 0)
        continue;
      q = p + n;
      while (q < end && is_token_char (*q))
        q++;
      if ((gsize) (q - p) >= shapes[i].min)
        return q;
    }

  return NULL;
}

/* "scheme://user:password@host": the password's span. */
static gboolean
url_password_at (const char  *p,
                 const char  *end,
                 const char **value_at,
                 const char **value_to)
{
  const char *q;
  const char *colon = NULL;

  if (!has_prefix_nocase (p, end, "://"))
    return FALSE;

  for (q = p + 3; q < end && *q != '/' && *q != '@' && !g_ascii_isspace (*q) && *q != '"'; q++)
    if (*q == ':' && colon == NULL)
      colon = q;

  if (q >= end || *q != '@' || colon == NULL || q == colon + 1)
    return FALSE;

  *value_at = colon + 1;
  *value_to = q;
  return TRUE;
}

static int
longest_first (gconstpointer a,
               gconstpointer b)
{
  gsize la = strlen (*(const char * const *) a);
  gsize lb = strlen (*(const char * const *) b);

  return la < lb ? 1 : la > lb ? -1 : 0;
}

/* The longest values first: one that is part of another (a key and a
 * token made from it) would otherwise leave the rest of the longer. */
static char *
redact_values (const char *text,
               gsize       length)
{
  GString *out = g_string_new_len (text, length);
  guint n = 0;
  const char **keys;

  g_mutex_lock (&secrets_lock);
  if (secrets != NULL)
    {
      keys = (const char **) g_hash_table_get_keys_as_array (secrets, &n);
      if (n > 1)
        qsort (keys, n, sizeof *keys, longest_first);
      for (guint i = 0; i < n; i++)
        g_string_replace (out, keys[i], REDACTED, 0);
      g_free (keys);
    }
  g_mutex_unlock (&secrets_lock);

  return g_string_free (out, FALSE);
}

char *
mend_redact_secrets (const char *text,
                     gssize      length)
{
  g_autofree char *values_gone = NULL;
  GString *out;
  const char *start;
  const char *end;
  const char *p;

  if (text == NULL)
    return NULL;
  if (length < 0)
    length = strlen (text);

  values_gone = redact_values (text, length);
  start = values_gone;
  end = start + strlen (start);
  out = g_string_sized_new (end - start);
  p = start;

  while (p < end)
    {
      const char *value_at = NULL;
      const char *value_to = NULL;
      const char *token_end;

      if (labelled_at (p, end, start, &value_at, &value_to) ||
          url_password_at (p, end, &value_at, &value_to) ||
          (has_prefix_nocase (p, end, "bearer ") &&
           (p == start || !is_label_char (p[-1])) &&
           (value_at = after_scheme (p, end)) != NULL &&
           (value_to = value_end (value_at, end, '\0')) - value_at >= MIN_LABELLED_VALUE))
        {
          g_string_append_len (out, p, value_at - p);
          g_string_append (out, REDACTED);
          p = value_to;
          continue;
        }

      token_end = prefixed_token_at (p, end, start);
      if (token_end != NULL)
        {
          g_string_append (out, REDACTED);
          p = token_end;
          continue;
        }

      g_string_append_c (out, *p++);
    }

  return g_string_free (out, FALSE);
}

/* The longest piece of a key a cut may leave at a text's start (a JWT
 * runs to a kilobyte). */
#define CUT_KEY_MAX_BYTES 1024

char *
mend_redact_head (const char *text,
                  gssize      length,
                  gsize       max_bytes)
{
  g_autofree char *redacted = mend_redact_secrets (text, length);
  gsize n;
  const char *end;

  if (redacted == NULL)
    return NULL;
  n = strlen (redacted);
  if (n <= max_bytes)
    return g_steal_pointer (&redacted);

  /* Cut where a character ends, room left for the ellipsis. */
  end = redacted + max_bytes - strlen ("…");
  while (end > redacted && (*end & 0xc0) == 0x80)
    end--;
  return g_strdup_printf ("%.*s…", (int) (end - redacted), redacted);
}

char *
mend_redact_tail (const char *text,
                  gssize      length,
                  gsize       max_bytes,
                  gboolean    cut_before)
{
  g_autofree char *redacted = NULL;
  const char *start;
  const char *end;
  gsize n;

  if (text == NULL)
    return NULL;
  if (length < 0)
    length = strlen (text);

  /* A text cut before it came here may begin inside a key, whose rest
   * no rule knows: its first line goes, or its first word, or, in a text
   * without either, as much as the longest key. */
  start = text;
  end = text + length;
  if (cut_before)
    {
      gsize most = MIN ((gsize) length, CUT_KEY_MAX_BYTES);
      const char *line = memchr (start, '\n', most);
      const char *word = start;

      while (word < start + most && !g_ascii_isspace (*word))
        word++;
      /* Without a space, that cut may fall inside another key: on to the
       * end of the run of a key's characters there, at most as far again. */
      if (line == NULL && word == start + most)
        {
          const char *limit = MIN (end, word + CUT_KEY_MAX_BYTES);

          while (word < limit && *word != '\0' && (g_ascii_isalnum (*word) || strchr ("-_.+/=~", *word) != NULL))
            word++;
        }
      start = line != NULL ? line + 1 : word;
    }

  redacted = mend_redact_secrets (start, end - start);
  n = strlen (redacted);
  if (n <= max_bytes)
    return g_steal_pointer (&redacted);

  start = redacted + n - max_bytes;
  while (*start != '\0' && (*start & 0xc0) == 0x80)
    start++;
  return g_strdup (start);
}

char *
mend_redact_cut_end (const char *text,
                     gsize       length)
{
  gsize most = MIN (length, CUT_KEY_MAX_BYTES);
  const char *end = text + length;
  const char *word = end;

  /* Its last word goes, or, in a text without a space near its end, as
   * much as the longest key. */
  while (word > end - most && !g_ascii_isspace (word[-1]))
    word--;
  /* With no space, the cut is where a character begins. */
  while (word < end && word > text && ((guchar) *word & 0xc0) == 0x80)
    word--;
  return mend_redact_secrets (text, word - text);
}

void
mend_redact_error (GError *error)
{
  char *redacted;

  if (error == NULL || error->message == NULL)
    return;

  redacted = mend_redact_secrets (error->message, -1);
  g_free (error->message);
  error->message = redacted;
}

void
mend_log_redacted (GLogLevelFlags  level,
                   const char     *format,
                   ...)
{
  g_autofree char *text = NULL;
  g_autofree char *redacted = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  redacted = mend_redact_secrets (text, -1);
  g_log (G_LOG_DOMAIN, level, "%s", redacted);
}
