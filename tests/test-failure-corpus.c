/* test-failure-corpus.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs the corpus of real failures (the JSON lines under tests/data/failures: error
 * text, HTTP responses and GErrors copied from public issue threads and SDK
 * sources, each with its source and the verdict its provider documents)
 * through MendFailure and the default MendErrorPolicy, prints the confusion
 * table, and pins the promises: nothing that cannot succeed is retried, at
 * most 2 % of the transient cases are missed, and every reason is right
 * unless the case says why it is ambiguous.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#define N_KINDS 4

typedef struct
{
  char            *id;
  char            *family;
  char            *source;
  char            *input;
  char            *ambiguous;
  MendFailureKind  want_kind;
  MendReason       want_reason;
  gint64           want_hint;  /* -1: not checked */
  MendFailureKind  kind;
  MendReason       reason;
  gint64           hint;
  char            *rule;       /* the message, for the report */
} Case;

static GPtrArray *corpus;

static void
case_free (Case *c)
{
  g_free (c->id);
  g_free (c->family);
  g_free (c->source);
  g_free (c->input);
  g_free (c->ambiguous);
  g_free (c->rule);
  g_free (c);
}

static int
nick_value (GType       type,
            const char *nick)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *value = nick ? g_enum_get_value_by_nick (klass, nick) : NULL;
  int result = value ? value->value : -1;

  g_type_class_unref (klass);
  return result;
}

static GQuark
domain_quark (const char *name,
              GType      *codes)
{
  if (g_strcmp0 (name, "g-io-error-quark") == 0)
    {
      *codes = G_TYPE_IO_ERROR_ENUM;
      return G_IO_ERROR;
    }
  if (g_strcmp0 (name, "g-resolver-error-quark") == 0)
    {
      *codes = G_TYPE_RESOLVER_ERROR;
      return G_RESOLVER_ERROR;
    }
  if (g_strcmp0 (name, "g-tls-error-quark") == 0)
    {
      *codes = G_TYPE_TLS_ERROR;
      return G_TLS_ERROR;
    }
  if (g_strcmp0 (name, "soup-session-error-quark") == 0)
    {
      *codes = SOUP_TYPE_SESSION_ERROR;
      return SOUP_SESSION_ERROR;
    }

  g_error ("unknown error domain %s in the corpus", name);
  return 0;
}

static MendFailure *
failure_from_case (JsonObject *obj,
                   MendClock  *clock)
{
  const char *input = json_object_get_string_member (obj, "input");

  if (g_strcmp0 (input, "text") == 0)
    return mend_failure_new_from_text (json_object_get_string_member (obj, "text"));

  if (g_strcmp0 (input, "http") == 0)
    {
      g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
      g_autoptr(GBytes) body = NULL;
      JsonObject *h = json_object_get_object_member (obj, "headers");
      g_autoptr(GList) names = h ? json_object_get_members (h) : NULL;

      for (GList *l = names; l != NULL; l = l->next)
        soup_message_headers_append (headers, l->data,
                                     json_object_get_string_member (h, l->data));
      if (json_object_has_member (obj, "body") && !json_object_get_null_member (obj, "body"))
        {
          const char *text = json_object_get_string_member (obj, "body");
          body = g_bytes_new (text, strlen (text));
        }

      return mend_failure_new_from_http_at ((guint) json_object_get_int_member (obj, "status"),
                                            headers, body, clock);
    }

  if (g_strcmp0 (input, "gerror") == 0)
    {
      GType codes = G_TYPE_INVALID;
      GQuark domain = domain_quark (json_object_get_string_member (obj, "domain"), &codes);
      int code = nick_value (codes, json_object_get_string_member (obj, "code"));
      g_autoptr(GError) error = NULL;

      g_assert_cmpint (code, >=, 0);
      error = g_error_new_literal (domain, code, json_object_get_string_member (obj, "message"));
      return mend_failure_new_from_error (error);
    }

  g_error ("unknown input %s in the corpus", input);
  return NULL;
}

static void
load_file (const char      *path,
           const char      *family,
           MendErrorPolicy *policy,
           MendClock       *clock)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      MendFailure *failure;
      JsonObject *obj;
      Case *c;

      if (*lines[i] == '\0')
        continue;

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      obj = json_node_get_object (json_parser_get_root (parser));

      c = g_new0 (Case, 1);
      c->id = g_strdup (json_object_get_string_member (obj, "id"));
      c->family = g_strdup (family);
      c->source = g_strdup (json_object_get_string_member_with_default (obj, "source", NULL));
      c->input = g_strdup (json_object_get_string_member (obj, "input"));
      c->ambiguous = g_strdup (json_object_get_string_member_with_default (obj, "ambiguous", NULL));
      c->want_kind = nick_value (MEND_TYPE_FAILURE_KIND, json_object_get_string_member (obj, "kind"));
      c->want_reason = nick_value (MEND_TYPE_REASON, json_object_get_string_member (obj, "reason"));
      c->want_hint = json_object_get_int_member_with_default (obj, "retryAfterMs", -1);

      g_assert_true ((int) c->want_kind >= 0);
      g_assert_true ((int) c->want_reason >= 0);
      g_assert_nonnull (c->source);
      g_assert_nonnull (json_object_get_string_member_with_default (obj, "why", NULL));

      failure = failure_from_case (obj, clock);
      c->kind = mend_error_policy_classify (policy, failure);
      c->reason = mend_failure_get_reason (failure);
      c->hint = mend_failure_get_retry_after_ms (failure);
      c->rule = g_strdup (mend_failure_get_message (failure));
      g_assert_cmpint (c->kind, ==, mend_failure_get_kind (failure));
      g_assert_finalize_object (failure);

      g_ptr_array_add (corpus, c);
    }
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static void
load_corpus (void)
{
  g_autofree char *dir_path = g_build_filename (MEND_TEST_SRCDIR, "data", "failures", NULL);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendClock *clock = mend_manual_clock_new (1764500000000000);
  const char *name;

  corpus = g_ptr_array_new_with_free_func ((GDestroyNotify) case_free);
  dir = g_dir_open (dir_path, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".jsonl"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len; i++)
    {
      const char *file = g_ptr_array_index (names, i);
      g_autofree char *path = g_build_filename (dir_path, file, NULL);
      g_autofree char *family = g_strndup (file, strlen (file) - strlen (".jsonl"));

      load_file (path, family, policy, clock);
    }

  g_assert_finalize_object (policy);
  g_assert_finalize_object (clock);
}

static const char *
kind_nick (MendFailureKind kind)
{
  return mend_failure_kind_to_nick (kind);
}

/* The confusion table (kind × kind), reason accuracy and the size of each
 * source, as TAP comments in the test log. */
static void
print_report (void)
{
  guint table[N_KINDS][N_KINDS] = { { 0 } };
  g_autoptr(GHashTable) families = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GList) keys = NULL;
  guint reasons_right = 0, ambiguous = 0;
  GString *line = g_string_new (NULL);

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      table[c->want_kind][c->kind]++;
      reasons_right += c->reason == c->want_reason;
      ambiguous += c->ambiguous != NULL;
      g_hash_table_insert (families, c->family,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (families, c->family)) + 1));
    }

  g_test_message ("corpus: %u cases (%u marked ambiguous)", corpus->len, ambiguous);
  keys = g_list_sort (g_hash_table_get_keys (families), (GCompareFunc) strcmp);
  for (GList *l = keys; l != NULL; l = l->next)
    g_test_message ("  %-14s %3u", (char *) l->data,
                    GPOINTER_TO_UINT (g_hash_table_lookup (families, l->data)));

  g_test_message ("expected \\ got  transient  permanent      limit    stopped");
  for (int w = 0; w < N_KINDS; w++)
    {
      g_string_printf (line, "%-14s", kind_nick (w));
      for (int g = 0; g < N_KINDS; g++)
        g_string_append_printf (line, " %10u", table[w][g]);
      g_test_message ("%s", line->str);
    }
  g_test_message ("reason right: %u of %u (%.1f %%)", reasons_right, corpus->len,
                  100.0 * reasons_right / corpus->len);

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->kind != c->want_kind || c->reason != c->want_reason)
        g_test_message ("%s %s: want %s/%s, got %s/%s", c->ambiguous ? "~" : "!", c->id,
                        kind_nick (c->want_kind), mend_reason_to_nick (c->want_reason),
                        kind_nick (c->kind), mend_reason_to_nick (c->reason));
    }

  g_string_free (line, TRUE);
}

static void
test_corpus_is_sourced (void)
{
  g_autoptr(GHashTable) families = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_cmpuint (corpus->len, >=, 200);
  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      /* A repository and path, or an issue thread. */
      g_assert_true (g_str_has_prefix (c->source, "https://github.com/") ||
                     strchr (c->source, '/') != NULL);
      g_hash_table_add (families, c->family);
    }
  g_assert_cmpuint (g_hash_table_size (families), >=, 10);

  print_report ();
}

static void
test_never_retries_what_cannot_succeed (void)
{
  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);
      gboolean never = c->want_kind != MEND_FAILURE_TRANSIENT ||
                       c->want_reason == MEND_REASON_AUTH ||
                       c->want_reason == MEND_REASON_PERMISSION ||
                       c->want_reason == MEND_REASON_USAGE_LIMIT;

      if (never && c->kind == MEND_FAILURE_TRANSIENT)
        g_test_message ("retried: %s (%s)", c->id, c->source);
      if (never)
        g_assert_cmpint (c->kind, !=, MEND_FAILURE_TRANSIENT);
      if (c->reason == MEND_REASON_AUTH || c->reason == MEND_REASON_PERMISSION ||
          c->reason == MEND_REASON_USAGE_LIMIT)
        g_assert_cmpint (c->kind, !=, MEND_FAILURE_TRANSIENT);
    }
}

static void
test_misses_few_transient_cases (void)
{
  guint transient = 0, missed = 0;

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->want_kind != MEND_FAILURE_TRANSIENT)
        continue;
      transient++;
      if (c->kind != MEND_FAILURE_TRANSIENT)
        {
          missed++;
          g_test_message ("missed: %s (%s)", c->id, c->source);
        }
    }

  g_test_message ("transient missed: %u of %u", missed, transient);
  g_assert_cmpuint (missed * 100, <=, transient * 2);
}

static void
test_kinds_match (void)
{
  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->kind != c->want_kind)
        g_test_message ("kind: %s want %s got %s", c->id,
                        kind_nick (c->want_kind), kind_nick (c->kind));
    }

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      g_assert_cmpstr (kind_nick (c->kind), ==, kind_nick (c->want_kind));
    }
}

static void
test_reasons_match_unless_ambiguous (void)
{
  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->reason != c->want_reason && c->ambiguous == NULL)
        g_test_message ("reason: %s want %s got %s", c->id,
                        mend_reason_to_nick (c->want_reason), mend_reason_to_nick (c->reason));
    }

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->ambiguous == NULL)
        g_assert_cmpstr (mend_reason_to_nick (c->reason), ==, mend_reason_to_nick (c->want_reason));
    }
}

static void
test_server_hints_are_read (void)
{
  guint checked = 0;

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->want_hint < 0)
        continue;
      checked++;
      if (c->hint != c->want_hint)
        g_test_message ("hint: %s want %" G_GINT64_FORMAT " got %" G_GINT64_FORMAT,
                        c->id, c->want_hint, c->hint);
      g_assert_cmpint (c->hint, ==, c->want_hint);
    }
  g_assert_cmpuint (checked, >=, 15);
}

int
main (int   argc,
      char *argv[])
{
  int ret;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  load_corpus ();

  g_test_add_func ("/Mend/FailureCorpus/every-case-is-sourced-and-reported",
                   test_corpus_is_sourced);
  g_test_add_func ("/Mend/FailureCorpus/never-retries-permanent-auth-permission-or-limit",
                   test_never_retries_what_cannot_succeed);
  g_test_add_func ("/Mend/FailureCorpus/misses-at-most-two-percent-of-transient",
                   test_misses_few_transient_cases);
  g_test_add_func ("/Mend/FailureCorpus/kind-matches-the-providers-rule",
                   test_kinds_match);
  g_test_add_func ("/Mend/FailureCorpus/reason-right-unless-ambiguous",
                   test_reasons_match_unless_ambiguous);
  g_test_add_func ("/Mend/FailureCorpus/server-hints-are-read",
                   test_server_hints_are_read);

  ret = g_test_run ();
  g_ptr_array_unref (corpus);
  return ret;
}
