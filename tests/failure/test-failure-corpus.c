/* test-failure-corpus.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs the corpus of real failures (the JSON lines under tests/data/failures: error
 * text, HTTP responses and GErrors copied from public issue threads and SDK
 * sources, each with its source and the verdict its provider documents)
 * through MendFailure and the default MendErrorPolicy.
 *
 * The corpus is split by a fixed rule on each case's id (the first byte of
 * its SHA-256: even is the rules half, odd the check half; see the
 * corpus's README). The classifier's rules are written from the rules
 * half; the check half is the estimate of how it does on failures nobody
 * tuned it for. For each half the test prints kind and reason accuracy,
 * the kind × kind confusion table, how many cases that must not be retried
 * were retried, and the share of limits classified as limits; it lists the
 * rules half's mismatches, and the check half's only when
 * MEND_CORPUS_SHOW_CHECK=1 is set, so that writing a rule never starts
 * from a check case.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-failure-private.h"

#define N_KINDS 4

typedef enum
{
  HALF_RULES,
  HALF_CHECK,
  N_HALVES
} Half;

static const char *half_names[N_HALVES] = { "rules", "check" };

typedef struct
{
  char            *id;
  char            *family;
  char            *source;
  char            *input;
  char            *ambiguous;
  Half             half;
  gboolean         gathered;   /* <family>-gNNN: gathered after the first rules */
  MendFailureKind  want_kind;
  MendReason       want_reason;
  gint64           want_hint;  /* -1: not checked */
  MendFailureKind  kind;
  MendReason       reason;
  gint64           hint;
  char            *rule;       /* what decided, for the report */
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

      return mend_failure_new_from_http_with_clock ((guint) json_object_get_int_member (obj, "status"),
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

/* The split: the first byte of the SHA-256 of the id, even or odd. */
static Half
half_of (const char *id)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize len = sizeof digest;

  g_checksum_update (sum, (const guchar *) id, -1);
  g_checksum_get_digest (sum, digest, &len);
  return digest[0] % 2 == 0 ? HALF_RULES : HALF_CHECK;
}

static gboolean
is_gathered (const char *id,
             const char *family)
{
  const char *p = id + strlen (family);

  if (!g_str_has_prefix (id, family) || p[0] != '-' || p[1] != 'g')
    return FALSE;
  for (p += 2; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
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
      c->half = half_of (c->id);
      c->gathered = is_gathered (c->id, family);

      g_assert_true ((int) c->want_kind >= 0);
      g_assert_true ((int) c->want_reason >= 0);
      g_assert_nonnull (c->source);
      g_assert_nonnull (json_object_get_string_member_with_default (obj, "why", NULL));

      failure = failure_from_case (obj, clock);
      c->kind = mend_error_policy_classify (policy, failure);
      c->reason = mend_failure_get_reason (failure);
      c->hint = mend_failure_get_retry_after_ms (failure);
      c->rule = g_strdup (mend_failure_get_rule (failure));
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

/* The bars each half is held to. The targets, on the check half:
 * the kind right for 95 %, nothing that must not be retried retried, 90 %
 * of the limits classified as limits and the reason right for 90 %,
 * measured on the clear cases (those not marked ambiguous); on the rules
 * half every kind right. Over all the check half's cases, ambiguous ones
 * included, the bar is the floor measured so far, so that nothing falls
 * back. */
#define RULES_KIND_PERCENT_MIN       100.0
#define RULES_NEVER_RETRIED_MAX        0
#define RULES_REASON_WRONG_MAX         1    /* clear cases; target 0 */
#define RULES_HINTS_WRONG_MAX          0
#define CHECK_KIND_PERCENT_MIN        95.0  /* clear cases */
#define CHECK_NEVER_RETRIED_MAX        0    /* clear cases */
#define CHECK_LIMIT_PERCENT_MIN       90.0  /* clear cases */
#define CHECK_REASON_PERCENT_MIN      90.0  /* clear cases */
#define CHECK_ALL_KIND_PERCENT_MIN    94.6  /* all cases; target 95 */
#define CHECK_ALL_NEVER_RETRIED_MAX    4    /* all cases; target 0 */
#define CHECK_ALL_LIMIT_PERCENT_MIN   91.7  /* all cases */
#define CHECK_ALL_REASON_PERCENT_MIN  91.5  /* all cases; 91.7 before billing had a reason
                                             * of its own (relays-g003, a budget pool,
                                             * is billing in words of a quota) */

typedef struct
{
  guint n;
  guint clear;                 /* not marked ambiguous */
  guint table[N_KINDS][N_KINDS];
  guint kind_right;
  guint kind_right_clear;
  guint reason_right;
  guint reason_right_clear;
  guint never;                 /* must not be retried: permanent, limit, stopped */
  guint never_retried;         /* … and were classified transient */
  guint never_clear;
  guint never_retried_clear;
  guint limits;
  guint limits_as_limit;
  guint limits_clear;
  guint limits_as_limit_clear;
  guint transient;
  guint transient_missed;
  guint hints;
  guint hints_right;
} Score;

typedef enum
{
  ONLY_ALL,
  ONLY_GATHERED,
} Only;

static void
score_half (Half   half,
            Only   only,
            Score *s)
{
  memset (s, 0, sizeof *s);

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);
      gboolean kind_right = c->kind == c->want_kind;
      gboolean reason_right = c->reason == c->want_reason;

      if (c->half != half || (only == ONLY_GATHERED && !c->gathered))
        continue;

      s->n++;
      s->table[c->want_kind][c->kind]++;
      s->kind_right += kind_right;
      s->reason_right += reason_right;
      if (c->ambiguous == NULL)
        {
          s->clear++;
          s->kind_right_clear += kind_right;
          s->reason_right_clear += reason_right;
        }
      if (c->want_kind != MEND_FAILURE_TRANSIENT)
        {
          s->never++;
          s->never_retried += c->kind == MEND_FAILURE_TRANSIENT;
          if (c->ambiguous == NULL)
            {
              s->never_clear++;
              s->never_retried_clear += c->kind == MEND_FAILURE_TRANSIENT;
            }
        }
      else
        {
          s->transient++;
          s->transient_missed += c->kind != MEND_FAILURE_TRANSIENT;
        }
      if (c->want_kind == MEND_FAILURE_LIMIT)
        {
          s->limits++;
          s->limits_as_limit += c->kind == MEND_FAILURE_LIMIT;
          if (c->ambiguous == NULL)
            {
              s->limits_clear++;
              s->limits_as_limit_clear += c->kind == MEND_FAILURE_LIMIT;
            }
        }
      if (c->want_hint >= 0)
        {
          s->hints++;
          s->hints_right += c->hint == c->want_hint;
        }
    }
}

static double
percent (guint part,
         guint whole)
{
  return whole == 0 ? 100.0 : 100.0 * part / whole;
}

static void
print_score (const char  *title,
             const Score *s)
{
  g_autoptr(GString) line = g_string_new (NULL);

  g_test_message ("%s: %u cases (%u clear, %u marked ambiguous)", title, s->n, s->clear,
                  s->n - s->clear);
  g_test_message ("  kind right:   %u of %u (%.1f %%); clear cases %u of %u (%.1f %%)",
                  s->kind_right, s->n, percent (s->kind_right, s->n),
                  s->kind_right_clear, s->clear, percent (s->kind_right_clear, s->clear));
  g_test_message ("  reason right: %u of %u (%.1f %%); clear cases %u of %u (%.1f %%)",
                  s->reason_right, s->n, percent (s->reason_right, s->n),
                  s->reason_right_clear, s->clear, percent (s->reason_right_clear, s->clear));
  g_test_message ("  must not be retried, retried: %u of %u; clear cases %u of %u",
                  s->never_retried, s->never, s->never_retried_clear, s->never_clear);
  g_test_message ("  transient, not retried: %u of %u", s->transient_missed, s->transient);
  g_test_message ("  limits classified limit: %u of %u (%.1f %%); clear cases %u of %u (%.1f %%)",
                  s->limits_as_limit, s->limits, percent (s->limits_as_limit, s->limits),
                  s->limits_as_limit_clear, s->limits_clear,
                  percent (s->limits_as_limit_clear, s->limits_clear));
  g_test_message ("  hints read: %u of %u", s->hints_right, s->hints);
  g_test_message ("  expected \\ got  transient  permanent      limit    stopped");
  for (int w = 0; w < N_KINDS; w++)
    {
      g_string_printf (line, "  %-14s", kind_nick (w));
      for (int g = 0; g < N_KINDS; g++)
        g_string_append_printf (line, " %10u", s->table[w][g]);
      g_test_message ("%s", line->str);
    }
}

/* A half's mismatches. The check half's are listed only on request: its
 * cases are the estimate, never the material of a rule. */
static void
print_mismatches (Half half)
{
  if (half == HALF_CHECK && g_strcmp0 (g_getenv ("MEND_CORPUS_SHOW_CHECK"), "1") != 0)
    return;

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      if (c->half == half && c->want_hint >= 0 && c->hint != c->want_hint)
        g_test_message ("%s %s: hint want %" G_GINT64_FORMAT " got %" G_GINT64_FORMAT,
                        half_names[half], c->id, c->want_hint, c->hint);
      if (c->half != half || (c->kind == c->want_kind && c->reason == c->want_reason))
        continue;
      g_test_message ("%s %s %s: want %s/%s, got %s/%s by %s", half_names[half],
                      c->ambiguous ? "~" : "!", c->id,
                      kind_nick (c->want_kind), mend_reason_to_nick (c->want_reason),
                      kind_nick (c->kind), mend_reason_to_nick (c->reason), c->rule);
    }
}

static void
print_report (void)
{
  g_autoptr(GHashTable) families = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GList) keys = NULL;
  Score s;

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      g_hash_table_insert (families, c->family,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (families, c->family)) + 1));
    }

  g_test_message ("corpus: %u cases in %u families", corpus->len, g_hash_table_size (families));
  keys = g_list_sort (g_hash_table_get_keys (families), (GCompareFunc) strcmp);
  for (GList *l = keys; l != NULL; l = l->next)
    g_test_message ("  %-16s %3u", (char *) l->data,
                    GPOINTER_TO_UINT (g_hash_table_lookup (families, l->data)));

  score_half (HALF_RULES, ONLY_ALL, &s);
  print_score ("rules half", &s);
  score_half (HALF_CHECK, ONLY_ALL, &s);
  print_score ("check half (the estimate)", &s);
  score_half (HALF_CHECK, ONLY_GATHERED, &s);
  print_score ("check half, gathered cases only", &s);

  print_mismatches (HALF_RULES);
  print_mismatches (HALF_CHECK);
}

static void
test_corpus_is_sourced (void)
{
  g_autoptr(GHashTable) families = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  guint halves[N_HALVES] = { 0 };

  g_assert_cmpuint (corpus->len, >=, 600);
  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      /* A repository and path, or an issue thread. */
      g_assert_true (g_str_has_prefix (c->source, "https://github.com/") ||
                     strchr (c->source, '/') != NULL);
      g_assert_true (g_str_has_prefix (c->id, c->family));
      g_assert_true (g_hash_table_add (ids, c->id));
      g_hash_table_add (families, c->family);
      halves[c->half]++;
    }
  g_assert_cmpuint (g_hash_table_size (families), >=, 30);
  /* The split is the id's hash: neither half is a sliver. */
  g_assert_cmpuint (halves[HALF_RULES], >=, corpus->len / 3);
  g_assert_cmpuint (halves[HALF_CHECK], >=, corpus->len / 3);

  print_report ();
}

static void
test_rules_kinds_match (void)
{
  Score s;

  score_half (HALF_RULES, ONLY_ALL, &s);
  g_assert_cmpfloat (percent (s.kind_right, s.n), >=, RULES_KIND_PERCENT_MIN);
}

static void
test_rules_never_retries_what_cannot_succeed (void)
{
  Score s;

  score_half (HALF_RULES, ONLY_ALL, &s);
  g_assert_cmpuint (s.never_retried, <=, RULES_NEVER_RETRIED_MAX);

  for (guint i = 0; i < corpus->len; i++)
    {
      Case *c = g_ptr_array_index (corpus, i);

      /* In either half: what the classifier calls a refusal or a limit
       * it never retries. */
      if (c->reason == MEND_REASON_AUTH || c->reason == MEND_REASON_PERMISSION ||
          c->reason == MEND_REASON_USAGE_LIMIT)
        g_assert_cmpint (c->kind, !=, MEND_FAILURE_TRANSIENT);
    }
}

static void
test_rules_misses_few_transient_cases (void)
{
  Score s;

  score_half (HALF_RULES, ONLY_ALL, &s);
  g_assert_cmpuint (s.transient_missed * 100, <=, s.transient * 2);
}

static void
test_rules_reasons_match_unless_ambiguous (void)
{
  Score s;

  score_half (HALF_RULES, ONLY_ALL, &s);
  g_assert_cmpuint (s.clear - s.reason_right_clear, <=, RULES_REASON_WRONG_MAX);
}

static void
test_rules_server_hints_are_read (void)
{
  Score s;

  score_half (HALF_RULES, ONLY_ALL, &s);
  g_assert_cmpuint (s.hints, >=, 10);
  g_assert_cmpuint (s.hints - s.hints_right, <=, RULES_HINTS_WRONG_MAX);
}

static void
test_check_kind_accuracy (void)
{
  Score s;

  score_half (HALF_CHECK, ONLY_ALL, &s);
  g_test_message ("check half: kind right for %.1f %% of the clear cases (the bar is %.0f %%), "
                  "%.1f %% of all (the floor is %.1f %%)",
                  percent (s.kind_right_clear, s.clear), CHECK_KIND_PERCENT_MIN,
                  percent (s.kind_right, s.n), CHECK_ALL_KIND_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.kind_right_clear, s.clear), >=, CHECK_KIND_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.kind_right, s.n), >=, CHECK_ALL_KIND_PERCENT_MIN);
}

static void
test_check_never_retries_what_cannot_succeed (void)
{
  Score s;

  score_half (HALF_CHECK, ONLY_ALL, &s);
  g_test_message ("check half: %u clear cases that must not be retried are retried (the bar is %u), "
                  "%u of all (the floor is %u)",
                  s.never_retried_clear, CHECK_NEVER_RETRIED_MAX,
                  s.never_retried, CHECK_ALL_NEVER_RETRIED_MAX);
  g_assert_cmpuint (s.never_retried_clear, <=, CHECK_NEVER_RETRIED_MAX);
  g_assert_cmpuint (s.never_retried, <=, CHECK_ALL_NEVER_RETRIED_MAX);
}

static void
test_check_limits_are_limits (void)
{
  Score s;

  score_half (HALF_CHECK, ONLY_ALL, &s);
  g_test_message ("check half: %.1f %% of the clear limits are limits (the bar is %.0f %%), "
                  "%.1f %% of all (the floor is %.1f %%)",
                  percent (s.limits_as_limit_clear, s.limits_clear), CHECK_LIMIT_PERCENT_MIN,
                  percent (s.limits_as_limit, s.limits), CHECK_ALL_LIMIT_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.limits_as_limit_clear, s.limits_clear), >=, CHECK_LIMIT_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.limits_as_limit, s.limits), >=, CHECK_ALL_LIMIT_PERCENT_MIN);
}

static void
test_check_reasons_match (void)
{
  Score s;

  score_half (HALF_CHECK, ONLY_ALL, &s);
  g_test_message ("check half: reason right for %.1f %% of the clear cases (the bar is %.0f %%), "
                  "%.1f %% of all (the floor is %.1f %%)",
                  percent (s.reason_right_clear, s.clear), CHECK_REASON_PERCENT_MIN,
                  percent (s.reason_right, s.n), CHECK_ALL_REASON_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.reason_right_clear, s.clear), >=, CHECK_REASON_PERCENT_MIN);
  g_assert_cmpfloat (percent (s.reason_right, s.n), >=, CHECK_ALL_REASON_PERCENT_MIN);
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
  g_test_add_func ("/Mend/FailureCorpus/rules-half/kind-matches-the-providers-rule",
                   test_rules_kinds_match);
  g_test_add_func ("/Mend/FailureCorpus/rules-half/never-retries-what-cannot-succeed",
                   test_rules_never_retries_what_cannot_succeed);
  g_test_add_func ("/Mend/FailureCorpus/rules-half/misses-at-most-two-percent-of-transient",
                   test_rules_misses_few_transient_cases);
  g_test_add_func ("/Mend/FailureCorpus/rules-half/reason-right-unless-ambiguous",
                   test_rules_reasons_match_unless_ambiguous);
  g_test_add_func ("/Mend/FailureCorpus/rules-half/server-hints-are-read",
                   test_rules_server_hints_are_read);
  g_test_add_func ("/Mend/FailureCorpus/check-half/kind-right-for-95-percent-of-clear-cases",
                   test_check_kind_accuracy);
  g_test_add_func ("/Mend/FailureCorpus/check-half/no-clear-case-that-must-not-be-retried-is-retried",
                   test_check_never_retries_what_cannot_succeed);
  g_test_add_func ("/Mend/FailureCorpus/check-half/90-percent-of-clear-limits-are-limits",
                   test_check_limits_are_limits);
  g_test_add_func ("/Mend/FailureCorpus/check-half/reason-right-for-90-percent-of-clear-cases",
                   test_check_reasons_match);

  ret = g_test_run ();
  g_ptr_array_unref (corpus);
  return ret;
}
