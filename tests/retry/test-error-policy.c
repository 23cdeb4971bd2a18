/* test-error-policy.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include <libmend.h>

#include "mend-error-policy-private.h"
#include "mend-failure-private.h"

static MendErrorPolicy *
policy_without_jitter (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  return policy;
}

static void
test_turn_defaults (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  gsize n_delays = 99;

  g_assert_cmpuint (mend_error_policy_get_max_retries (policy), ==, 4);
  g_assert_cmpuint (mend_error_policy_get_base_delay_ms (policy), ==, 250);
  g_assert_cmpuint (mend_error_policy_get_max_delay_ms (policy), ==, 4000);
  g_assert_cmpfloat (mend_error_policy_get_multiplier (policy), ==, 2.0);
  g_assert_cmpint (mend_error_policy_get_jitter (policy), ==, MEND_JITTER_ADDITIVE);
  g_assert_cmpuint (mend_error_policy_get_jitter_ms (policy), ==, 250);
  g_assert_null (mend_error_policy_get_delays (policy, &n_delays));
  g_assert_cmpuint (n_delays, ==, 0);
  g_assert_cmpuint (mend_error_policy_get_retry_after_max_ms (policy), ==, 60000);
  g_assert_false (mend_error_policy_get_retry_partial (policy));

  g_assert_finalize_object (g_steal_pointer (&policy));
}

static void
test_turn_schedule_without_jitter (void)
{
  MendErrorPolicy *policy = policy_without_jitter ();
  const gint64 expected[] = { 250, 500, 1000, 2000, 4000, 4000, 4000 };

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      gboolean hint = TRUE;

      g_assert_cmpint (mend_error_policy_delay_for (policy, i + 1, NULL, &hint), ==, expected[i]);
      g_assert_false (hint);
    }

  /* Far past the end, the exponential saturates at the cap. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1000, NULL, NULL), ==, 4000);
  g_assert_finalize_object (policy);
}

static void
test_additive_jitter_applies_before_the_cap (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();

  mend_error_policy_set_seed (policy, 42);
  for (guint round = 0; round < 500; round++)
    for (guint retry = 1; retry <= 5; retry++)
      {
        gint64 base = MIN (4000, 250 << (retry - 1));
        gint64 delay = mend_error_policy_delay_for (policy, retry, NULL, NULL);

        g_assert_cmpint (delay, >=, base);
        g_assert_cmpint (delay, <=, MIN (4000, base + 250));
      }

  /* Retry 5 is 4000 before jitter: the cap holds it at exactly 4000. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 5, NULL, NULL), ==, 4000);
  g_assert_finalize_object (policy);
}

static void
test_full_jitter_stays_within_the_capped_delay (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  gint64 min = G_MAXINT64, max = 0;

  mend_error_policy_set_jitter (policy, MEND_JITTER_FULL);
  mend_error_policy_set_seed (policy, 7);
  for (guint round = 0; round < 2000; round++)
    {
      gint64 delay = mend_error_policy_delay_for (policy, 3, NULL, NULL);

      g_assert_cmpint (delay, >=, 0);
      g_assert_cmpint (delay, <=, 1000);
      min = MIN (min, delay);
      max = MAX (max, delay);
    }

  /* Spread over the whole range, not stuck at one end. */
  g_assert_cmpint (min, <, 100);
  g_assert_cmpint (max, >, 900);
  g_assert_finalize_object (policy);
}

static void
test_equal_jitter_keeps_half (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_EQUAL);
  mend_error_policy_set_seed (policy, 9);
  for (guint round = 0; round < 2000; round++)
    {
      gint64 delay = mend_error_policy_delay_for (policy, 4, NULL, NULL);

      g_assert_cmpint (delay, >=, 1000);
      g_assert_cmpint (delay, <=, 2000);
    }
  g_assert_finalize_object (policy);
}

static void
test_decorrelated_jitter_between_base_and_three_times_previous (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_DECORRELATED);
  mend_error_policy_set_seed (policy, 11);
  for (guint round = 0; round < 2000; round++)
    {
      gint64 first = mend_error_policy_delay_for (policy, 1, NULL, NULL);
      gint64 third = mend_error_policy_delay_for (policy, 3, NULL, NULL);
      gint64 late = mend_error_policy_delay_for (policy, 10, NULL, NULL);

      /* The first sleep follows the base: between base and three times it. */
      g_assert_cmpint (first, >=, 250);
      g_assert_cmpint (first, <=, 750);
      g_assert_cmpint (third, >=, 250);
      g_assert_cmpint (third, <=, 1500);
      g_assert_cmpint (late, >=, 250);
      g_assert_cmpint (late, <=, 4000);
    }
  g_assert_finalize_object (policy);
}

static void
test_same_seed_same_delays (void)
{
  MendErrorPolicy *a = mend_error_policy_new ();
  MendErrorPolicy *b = mend_error_policy_new ();

  mend_error_policy_set_seed (a, 1234);
  mend_error_policy_set_seed (b, 1234);
  for (guint retry = 1; retry <= 20; retry++)
    g_assert_cmpint (mend_error_policy_delay_for (a, retry, NULL, NULL), ==,
                     mend_error_policy_delay_for (b, retry, NULL, NULL));

  g_assert_finalize_object (a);
  g_assert_finalize_object (b);
}

static void
test_explicit_delays_win (void)
{
  MendErrorPolicy *policy = policy_without_jitter ();
  const guint delays[] = { 100, 3000, 10000 };

  mend_error_policy_set_delays (policy, delays, G_N_ELEMENTS (delays));
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, NULL, NULL), ==, 100);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 2, NULL, NULL), ==, 3000);
  /* Capped by max-delay-ms like every scheduled delay. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 3, NULL, NULL), ==, 4000);
  /* Past the end, the last entry repeats. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 9, NULL, NULL), ==, 4000);

  mend_error_policy_set_delays (policy, NULL, 0);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 2, NULL, NULL), ==, 500);
  g_assert_finalize_object (policy);
}

static void
test_resume_defaults (void)
{
  MendErrorPolicy *policy = mend_error_policy_new_for_resume ();
  const gint64 expected[] = { 20000, 45000, 90000, 180000 };
  const guint *delays;
  gsize n = 0;

  g_assert_cmpuint (mend_error_policy_get_max_retries (policy), ==, 4);
  g_assert_cmpuint (mend_error_policy_get_retry_after_max_ms (policy), ==, 3600000);
  g_assert_cmpuint (mend_error_policy_get_max_delay_ms (policy), ==, 3600000);
  delays = mend_error_policy_get_delays (policy, &n);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpuint (delays[3], ==, 180000);

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpint (mend_error_policy_delay_for (policy, i + 1, NULL, NULL), ==, expected[i]);

  g_assert_finalize_object (policy);
}

static MendFailure *
failure_with_retry_after (const char *value)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);

  soup_message_headers_append (headers, "Retry-After", value);
  return mend_failure_new_from_http (429, headers, NULL);
}

static void
test_server_hint_is_waited_exactly_without_jitter (void)
{
  MendErrorPolicy *policy = policy_without_jitter ();
  MendFailure *failure = failure_with_retry_after ("7");
  gboolean hint = FALSE;

  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, failure, &hint), ==, 7000);
  g_assert_true (hint);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_server_hint_gets_positive_jitter_only (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure = failure_with_retry_after ("7");

  mend_error_policy_set_seed (policy, 3);
  for (guint round = 0; round < 500; round++)
    {
      gint64 delay = mend_error_policy_delay_for (policy, 1, failure, NULL);

      g_assert_cmpint (delay, >=, 7000);
      g_assert_cmpint (delay, <=, 7250);
    }

  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_server_hint_never_below_the_schedule (void)
{
  MendErrorPolicy *policy = policy_without_jitter ();
  MendFailure *failure = failure_with_retry_after ("1");
  gboolean hint = TRUE;

  /* Retry 4 is scheduled at 2000 ms; a 1 s hint does not shorten it. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 4, failure, &hint), ==, 2000);
  g_assert_false (hint);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_server_hint_above_max_gives_up_at_once (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure = failure_with_retry_after ("2820");
  gboolean hint = FALSE;

  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, failure, &hint), ==, -1);
  g_assert_true (hint);
  /* The failure keeps the hint, to say when to come back. */
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 2820000);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_classify_default (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *capacity = mend_failure_new_from_http (503, NULL, NULL);
  MendFailure *auth = mend_failure_new_from_http (401, NULL, NULL);
  MendFailure *limit = mend_failure_new_from_text ("You've hit your usage limit");
  MendFailure *stopped = mend_failure_new_stopped ();

  g_assert_cmpint (mend_error_policy_classify (policy, capacity), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_error_policy_classify (policy, auth), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_error_policy_classify (policy, limit), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_error_policy_classify (policy, stopped), ==, MEND_FAILURE_STOPPED);

  g_assert_finalize_object (capacity);
  g_assert_finalize_object (auth);
  g_assert_finalize_object (limit);
  g_assert_finalize_object (stopped);
  g_assert_finalize_object (policy);
}

/* A subclass that retries 401s too: the classifier seam. */
typedef struct { MendErrorPolicy parent; } RetryAuthPolicy;
typedef struct { MendErrorPolicyClass parent_class; } RetryAuthPolicyClass;
static GType retry_auth_policy_get_type (void);
G_DEFINE_TYPE (RetryAuthPolicy, retry_auth_policy, MEND_TYPE_ERROR_POLICY)

static MendFailureKind
retry_auth_policy_classify (MendErrorPolicy *policy,
                            MendFailure     *failure)
{
  if (mend_failure_get_reason (failure) == MEND_REASON_AUTH)
    return MEND_FAILURE_TRANSIENT;

  return MEND_ERROR_POLICY_CLASS (retry_auth_policy_parent_class)->classify (policy, failure);
}

static void
retry_auth_policy_class_init (RetryAuthPolicyClass *klass)
{
  MEND_ERROR_POLICY_CLASS (klass)->classify = retry_auth_policy_classify;
}

static void
retry_auth_policy_init (RetryAuthPolicy *self)
{
}

static void
test_classify_overridden_in_subclass (void)
{
  MendErrorPolicy *policy = g_object_new (retry_auth_policy_get_type (), NULL);
  MendFailure *auth = mend_failure_new_from_http (401, NULL, NULL);
  MendFailure *bad = mend_failure_new_from_http (400, NULL, NULL);

  g_assert_cmpint (mend_error_policy_classify (policy, auth), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_error_policy_classify (policy, bad), ==, MEND_FAILURE_PERMANENT);

  g_assert_finalize_object (auth);
  g_assert_finalize_object (bad);
  g_assert_finalize_object (policy);
}

static void
test_partial_failure_is_permanent_unless_retry_partial (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  GError error = { G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, (char *) "Connection closed" };
  MendFailure *failure = mend_failure_new_from_error (&error);
  MendFailure *partial;

  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_TRANSIENT);

  /* The same fact after output was seen: a retry would duplicate text. */
  partial = mend_failure_new_partial_copy (failure);
  g_assert_true (mend_failure_get_partial (partial));
  g_assert_cmpint (mend_failure_get_kind (partial), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_error_policy_classify (policy, partial), ==, MEND_FAILURE_PERMANENT);

  mend_error_policy_set_retry_partial (policy, TRUE);
  g_assert_cmpint (mend_error_policy_classify (policy, partial), ==, MEND_FAILURE_TRANSIENT);

  g_assert_finalize_object (partial);
  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_stagger_is_stable_and_in_range (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  guint a, b;

  g_assert_cmpuint (mend_error_policy_get_stagger_for (policy, "chat-a"), ==, 0);

  mend_error_policy_set_stagger_ms (policy, 1000);
  a = mend_error_policy_get_stagger_for (policy, "chat-a");
  b = mend_error_policy_get_stagger_for (policy, "chat-b");
  g_assert_cmpuint (a, <, 1000);
  g_assert_cmpuint (b, <, 1000);
  g_assert_cmpuint (a, !=, b);
  /* Stable: the same key gives the same offset, in every process. FNV-1a of
   * "chat-a" is 0x4ca7a1b7 → 1286054327 % 1000. */
  g_assert_cmpuint (a, ==, mend_error_policy_get_stagger_for (policy, "chat-a"));

  g_assert_finalize_object (policy);
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              guint      *count)
{
  (*count)++;
}

static void
test_setters_notify_only_on_change (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  guint notified = 0;
  const guint delays[] = { 1, 2 };

  g_signal_connect (policy, "notify", G_CALLBACK (count_notify), &notified);
  mend_error_policy_set_max_retries (policy, 4);
  mend_error_policy_set_jitter (policy, MEND_JITTER_ADDITIVE);
  mend_error_policy_set_delays (policy, NULL, 0);
  g_assert_cmpuint (notified, ==, 0);

  mend_error_policy_set_max_retries (policy, 6);
  mend_error_policy_set_delays (policy, delays, 2);
  mend_error_policy_set_delays (policy, delays, 2);
  g_assert_cmpuint (notified, ==, 2);

  g_assert_finalize_object (policy);
}

static void
test_json_round_trip (void)
{
  MendErrorPolicy *policy = mend_error_policy_new_for_resume ();
  g_autofree char *json = NULL;
  g_autofree char *again = NULL;
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *loaded;

  mend_error_policy_set_retry_partial (policy, TRUE);
  mend_error_policy_set_multiplier (policy, 1.5);
  json = mend_error_policy_to_json (policy);
  g_assert_nonnull (strstr (json, "\"delays\":[20000,45000,90000,180000]"));
  g_assert_nonnull (strstr (json, "\"jitter\":\"none\""));

  loaded = mend_error_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  again = mend_error_policy_to_json (loaded);
  g_assert_cmpstr (json, ==, again);

  g_assert_finalize_object (loaded);
  g_assert_finalize_object (policy);
}

static void
test_json_partial_keys_keep_defaults (void)
{
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy;

  policy = mend_error_policy_new_from_json ("{\"maxRetries\": 2, \"jitter\": \"full\"}", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_max_retries (policy), ==, 2);
  g_assert_cmpint (mend_error_policy_get_jitter (policy), ==, MEND_JITTER_FULL);
  g_assert_cmpuint (mend_error_policy_get_base_delay_ms (policy), ==, 250);
  g_assert_finalize_object (policy);

  policy = mend_error_policy_new_from_json ("{\"preset\": \"resume\", \"maxRetries\": 2}", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_max_retries (policy), ==, 2);
  g_assert_cmpuint (mend_error_policy_get_retry_after_max_ms (policy), ==, 3600000);
  g_assert_finalize_object (policy);
}

static void
test_json_bad_configuration_names_the_key (void)
{
  const struct {
    const char *json;
    const char *key;
  } cases[] = {
    { "{\"maxRetries\": 1001}", "maxRetries" },
    { "{\"maxRetries\": -1}", "maxRetries" },
    { "{\"maxRetries\": 2.5}", "maxRetries" },
    { "{\"maxRetries\": \"4\"}", "maxRetries" },
    { "{\"maxRetries\": true}", "maxRetries" },
    { "{\"baseDelayMs\": 1e300}", "baseDelayMs" },
    { "{\"maxDelayMs\": 86400001}", "maxDelayMs" },
    { "{\"multiplier\": 0.5}", "multiplier" },
    { "{\"multiplier\": 1e309}", "multiplier" },
    { "{\"multiplier\": null}", "multiplier" },
    { "{\"jitter\": \"sometimes\"}", "jitter" },
    { "{\"jitter\": 2}", "jitter" },
    { "{\"jitterMs\": -5}", "jitterMs" },
    { "{\"delays\": [100, -1]}", "delays[1]" },
    { "{\"delays\": \"100,200\"}", "delays" },
    { "{\"delays\": [100, 200.5]}", "delays[1]" },
    { "{\"retryAfterMaxMs\": {}}", "retryAfterMaxMs" },
    { "{\"staggerMs\": []}", "staggerMs" },
    { "{\"retryPartial\": 1}", "retryPartial" },
    { "{\"preset\": \"fast\"}", "preset" },
    { "{\"maxRetries\": 3, \"maxretries\": 3}", "maxretries" },
    { "{\"max-retries\": 3}", "max-retries" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      MendErrorPolicy *policy = mend_error_policy_new_from_json (cases[i].json, &error);
      g_autofree char *quoted = g_strdup_printf ("“%s”", cases[i].key);

      g_test_message ("%s", cases[i].json);
      g_assert_null (policy);
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, quoted));
    }
}

static void
test_json_malformed_is_an_error (void)
{
  const char *cases[] = {
    "",
    "{",
    "[1, 2]",
    "42",
    "{\"maxRetries\": NaN}",
    "{\"maxRetries\": Infinity}",
    "{\"maxRetries\": 3,}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", cases[i]);
      g_assert_null (mend_error_policy_new_from_json (cases[i], &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
    }
}

static void
test_json_deep_nesting_is_refused_without_recursion (void)
{
  g_autoptr(GString) deep = g_string_new ("{\"delays\":");
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  g_assert_null (mend_error_policy_new_from_json (deep->str, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
}

static void
test_huge_exponent_saturates_at_the_cap (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  const MendJitter jitters[] = { MEND_JITTER_NONE, MEND_JITTER_ADDITIVE, MEND_JITTER_FULL,
                                 MEND_JITTER_EQUAL, MEND_JITTER_DECORRELATED };

  mend_error_policy_set_multiplier (policy, 100);
  mend_error_policy_set_max_retries (policy, 1000);
  for (guint j = 0; j < G_N_ELEMENTS (jitters); j++)
    {
      mend_error_policy_set_jitter (policy, jitters[j]);

      /* 100^999 is past what a double holds: the cap, never garbage. */
      mend_error_policy_set_base_delay_ms (policy, 250);
      g_assert_cmpint (mend_error_policy_delay_for (policy, 1000, NULL, NULL), >=, 0);
      g_assert_cmpint (mend_error_policy_delay_for (policy, 1000, NULL, NULL), <=, 4000);

      /* A zero base stays zero however far the exponent goes. */
      mend_error_policy_set_base_delay_ms (policy, 0);
      g_assert_cmpint (mend_error_policy_delay_for (policy, 200, NULL, NULL), >=, 0);
      g_assert_cmpint (mend_error_policy_delay_for (policy, 200, NULL, NULL), <=, 4000);
    }

  g_assert_finalize_object (policy);
}

static void
test_json_more_than_one_value_is_refused (void)
{
  const char *cases[] = { "{\"maxRetries\": 1}{}", "{} {\"maxRetries\": 2}", "1 {}", "[] 2", "\"a\" \"b\"" };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", cases[i]);
      g_assert_null (mend_error_policy_new_from_json (cases[i], &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
    }
}

static void
test_json_nothing_half_applied (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *before = mend_error_policy_to_json (policy);
  g_autofree char *after = NULL;

  /* The first keys are good, the last is not: none of them is applied. */
  g_assert_false (mend_error_policy_update_from_json (policy,
                                                      "{\"maxRetries\": 9, \"baseDelayMs\": 10,"
                                                      " \"jitter\": \"bogus\"}",
                                                      &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  after = mend_error_policy_to_json (policy);
  g_assert_cmpstr (before, ==, after);

  g_assert_finalize_object (policy);
}

static void
test_json_from_file (void)
{
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), "policy.json", NULL);
  g_autofree char *missing = g_build_filename (g_get_tmp_dir (), "missing.json", NULL);
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy;

  g_assert_true (g_file_set_contents (path, "{\"maxRetries\": 7}", -1, NULL));
  policy = mend_error_policy_new_from_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_max_retries (policy), ==, 7);
  g_assert_finalize_object (policy);

  g_assert_null (mend_error_policy_new_from_file (missing, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (path, "{\"maxRetries\"\0: 7}", 17, NULL));
  g_assert_null (mend_error_policy_new_from_file (path, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
}

static MendFailure *
http_failure (guint       status,
              const char *body)
{
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

  return mend_failure_new_from_http (status, NULL, bytes);
}

/* The sum of the waits a policy makes before giving up on @failure, each
 * retry as the turn would ask for it. */
static gint64
total_wait (MendErrorPolicy *policy,
            MendFailure     *failure,
            guint           *n_retries)
{
  guint max = mend_error_policy_get_max_retries (policy);
  g_autofree char *own = mend_error_policy_dup_schedule_for_reason (policy, mend_failure_get_reason (failure));
  gint64 total = 0;

  if (own != NULL)
    {
      g_autoptr(JsonNode) node = json_from_string (own, NULL);
      JsonObject *object = json_node_get_object (node);

      if (json_object_has_member (object, "maxRetries"))
        max = json_object_get_int_member (object, "maxRetries");
    }
  for (guint retry = 1; retry <= max; retry++)
    total += mend_error_policy_delay_for (policy, retry, failure, NULL);
  *n_retries = max;
  return total;
}

/* The defaults ride out a per-minute rate limit that gives no hint, and
 * keep an overload's short schedule. */
static void
test_defaults_ride_out_a_hintless_rate_limit (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(MendFailure) limited = http_failure (429, "{\"error\":{\"message\":\"Too many requests\"}}");
  g_autoptr(MendFailure) hinted = mend_failure_new_from_text ("HTTP 429: Too many requests. Please retry after 2 seconds");
  g_autoptr(MendFailure) overloaded = http_failure (529, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
  guint n = 0;
  gint64 total;

  g_assert_cmpint (mend_failure_get_reason (limited), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (limited), ==, -1);
  total = total_wait (policy, limited, &n);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpint (total, >=, 60000);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), >=, 5000);

  total = total_wait (policy, overloaded, &n);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpint (total, <, 8000);

  /* A hint decides over the reason's schedule. */
  if (mend_failure_get_retry_after_ms (hinted) >= 0)
    g_assert_cmpint (mend_error_policy_delay_for (policy, 1, hinted, NULL), <, 5000);
}

static void
test_by_reason_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(MendErrorPolicy) policy =
    mend_error_policy_new_from_json ("{\"jitter\":\"none\",\"maxRetries\":2,"
                                     "\"byReason\":{\"rate_limit\":{\"delays\":[10000,20000,40000],\"maxRetries\":3},"
                                     "\"capacity\":{\"baseDelayMs\":1000}}}", &error);
  g_autoptr(MendFailure) limited = http_failure (429, "slow down");
  g_autoptr(MendFailure) overloaded = http_failure (503, "no non-exhausted accounts");
  g_autoptr(MendFailure) reset = mend_failure_new_from_text ("Connection reset by peer");
  g_autoptr(MendErrorPolicy) again = NULL;
  g_autofree char *json = NULL;
  g_autofree char *json_again = NULL;
  g_autofree char *own = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), ==, 10000);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 3, limited, NULL), ==, 40000);
  /* The keys a reason does not give follow the top level: no jitter, ×2. */
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, overloaded, NULL), ==, 1000);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 2, overloaded, NULL), ==, 2000);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, reset, NULL), ==, 250);
  mend_error_policy_set_multiplier (policy, 3.0);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 2, overloaded, NULL), ==, 3000);

  own = mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT);
  g_assert_cmpstr (own, ==, "{\"maxRetries\":3,\"delays\":[10000,20000,40000]}");
  g_assert_null (mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_TRANSPORT));

  /* Round trip: the same schedules, none added. */
  json = mend_error_policy_to_json (policy);
  again = mend_error_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  json_again = mend_error_policy_to_json (again);
  g_assert_cmpstr (json, ==, json_again);
  g_assert_nonnull (strstr (json, "\"byReason\":{\"capacity\":{\"baseDelayMs\":1000},\"rate-limit\":"));

  /* Given, byReason replaces them all: {} leaves none. */
  g_assert_true (mend_error_policy_update_from_json (again, "{\"byReason\":{}}", &error));
  g_assert_no_error (error);
  g_assert_null (mend_error_policy_dup_schedule_for_reason (again, MEND_REASON_RATE_LIMIT));
  g_assert_cmpint (mend_error_policy_delay_for (again, 1, limited, NULL), ==, 250);

  g_assert_finalize_object (g_steal_pointer (&again));
  g_assert_finalize_object (g_steal_pointer (&policy));
}

static void
test_by_reason_errors_name_the_key (void)
{
  static const struct {
    const char *json;
    const char *names;
  } bad[] = {
    { "{\"byReason\":[]}", "“byReason”" },
    { "{\"byReason\":{\"overloaded\":{}}}", "“byReason.overloaded”" },
    { "{\"byReason\":{\"rate_limit\":{\"staggerMs\":5}}}", "“byReason.rate_limit.staggerMs”" },
    { "{\"byReason\":{\"rate_limit\":{\"delays\":[-1]}}}", "“byReason.rate_limit.delays[0]”" },
    { "{\"byReason\":{\"capacity\":7}}", "“byReason.capacity”" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
      g_autofree char *before = mend_error_policy_to_json (policy);
      g_autofree char *after = NULL;
      g_autoptr(GError) error = NULL;

      g_assert_false (mend_error_policy_update_from_json (policy, bad[i].json, &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, bad[i].names));
      after = mend_error_policy_to_json (policy);
      g_assert_cmpstr (before, ==, after);
    }
}

static void
test_schedule_for_reason_setter (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(MendFailure) limited = http_failure (429, "slow down");
  g_autoptr(GError) error = NULL;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), ==, 5000);
  g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT,
                                                            "{\"baseDelayMs\":7000,\"maxDelayMs\":60000}", &error));
  g_assert_no_error (error);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), ==, 7000);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 2, limited, NULL), ==, 14000);

  g_assert_false (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT,
                                                             "{\"rules\":[]}", &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), ==, 7000);

  g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT, NULL, NULL));
  g_assert_cmpint (mend_error_policy_delay_for (policy, 1, limited, NULL), ==, 250);

  /* The resume preset has no reason of its own. */
  {
    g_autoptr(MendErrorPolicy) resume = mend_error_policy_new_for_resume ();

    g_assert_null (mend_error_policy_dup_schedule_for_reason (resume, MEND_REASON_RATE_LIMIT));
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/ErrorPolicy/turn-defaults", test_turn_defaults);
  g_test_add_func ("/Mend/ErrorPolicy/turn-schedule-without-jitter-is-250-500-1000-2000", test_turn_schedule_without_jitter);
  g_test_add_func ("/Mend/ErrorPolicy/additive-jitter-applies-before-the-cap", test_additive_jitter_applies_before_the_cap);
  g_test_add_func ("/Mend/ErrorPolicy/full-jitter-stays-within-the-capped-delay", test_full_jitter_stays_within_the_capped_delay);
  g_test_add_func ("/Mend/ErrorPolicy/equal-jitter-keeps-half", test_equal_jitter_keeps_half);
  g_test_add_func ("/Mend/ErrorPolicy/decorrelated-jitter-between-base-and-three-times-previous", test_decorrelated_jitter_between_base_and_three_times_previous);
  g_test_add_func ("/Mend/ErrorPolicy/same-seed-same-delays", test_same_seed_same_delays);
  g_test_add_func ("/Mend/ErrorPolicy/explicit-delays-win-over-exponential", test_explicit_delays_win);
  g_test_add_func ("/Mend/ErrorPolicy/resume-defaults-20-45-90-180-s", test_resume_defaults);
  g_test_add_func ("/Mend/ErrorPolicy/server-hint-is-waited-exactly-without-jitter", test_server_hint_is_waited_exactly_without_jitter);
  g_test_add_func ("/Mend/ErrorPolicy/server-hint-gets-positive-jitter-only", test_server_hint_gets_positive_jitter_only);
  g_test_add_func ("/Mend/ErrorPolicy/server-hint-never-below-the-schedule", test_server_hint_never_below_the_schedule);
  g_test_add_func ("/Mend/ErrorPolicy/server-hint-above-max-gives-up-at-once", test_server_hint_above_max_gives_up_at_once);
  g_test_add_func ("/Mend/ErrorPolicy/classify-default-table", test_classify_default);
  g_test_add_func ("/Mend/ErrorPolicy/classify-overridden-in-subclass", test_classify_overridden_in_subclass);
  g_test_add_func ("/Mend/ErrorPolicy/partial-failure-is-permanent-unless-retry-partial", test_partial_failure_is_permanent_unless_retry_partial);
  g_test_add_func ("/Mend/ErrorPolicy/stagger-is-stable-and-in-range", test_stagger_is_stable_and_in_range);
  g_test_add_func ("/Mend/ErrorPolicy/setters-notify-only-on-change", test_setters_notify_only_on_change);
  g_test_add_func ("/Mend/ErrorPolicy/json-round-trip", test_json_round_trip);
  g_test_add_func ("/Mend/ErrorPolicy/json-missing-keys-keep-defaults", test_json_partial_keys_keep_defaults);
  g_test_add_func ("/Mend/ErrorPolicy/json-bad-configuration-names-the-key", test_json_bad_configuration_names_the_key);
  g_test_add_func ("/Mend/ErrorPolicy/json-malformed-is-an-error", test_json_malformed_is_an_error);
  g_test_add_func ("/Mend/ErrorPolicy/json-deep-nesting-is-refused", test_json_deep_nesting_is_refused_without_recursion);
  g_test_add_func ("/Mend/ErrorPolicy/json-nothing-half-applied", test_json_nothing_half_applied);
  g_test_add_func ("/Mend/ErrorPolicy/huge-exponent-saturates-at-the-cap", test_huge_exponent_saturates_at_the_cap);
  g_test_add_func ("/Mend/ErrorPolicy/json-more-than-one-value-is-refused", test_json_more_than_one_value_is_refused);
  g_test_add_func ("/Mend/ErrorPolicy/json-from-file", test_json_from_file);
  g_test_add_func ("/Mend/ErrorPolicy/defaults-ride-out-a-hintless-rate-limit", test_defaults_ride_out_a_hintless_rate_limit);
  g_test_add_func ("/Mend/ErrorPolicy/by-reason-json", test_by_reason_json);
  g_test_add_func ("/Mend/ErrorPolicy/by-reason-errors-name-the-key", test_by_reason_errors_name_the_key);
  g_test_add_func ("/Mend/ErrorPolicy/schedule-for-reason-setter", test_schedule_for_reason_setter);

  return g_test_run ();
}
