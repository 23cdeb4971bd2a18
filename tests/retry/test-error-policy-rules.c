/* test-error-policy-rules.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An app's own classifier rules on a MendErrorPolicy: added by a call or
 * read from the policy's JSON, they outrank the built-in rules for that
 * policy, leave the failure's facts alone, never turn the user's Stop
 * into something else, and name the reason a turn's waits carry.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

static void
test_rule_reads_unknown_words (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendErrorPolicy *plain = mend_error_policy_new ();
  MendFailure *failure = mend_failure_new_from_text ("gw: upstream pool drained, come back soon");
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_true (mend_error_policy_add_rule (policy, "Pool  DRAINED", MEND_REASON_CAPACITY,
                                             "our gateway's docs", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_n_rules (policy), ==, 1);

  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_error_policy_get_reason_for (policy, failure), ==, MEND_REASON_CAPACITY);
  /* The failure's facts, and another policy, are untouched. */
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_UNKNOWN);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_error_policy_classify (plain, failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_error_policy_get_reason_for (plain, failure), ==, MEND_REASON_UNKNOWN);

  mend_error_policy_clear_rules (policy);
  g_assert_cmpuint (mend_error_policy_get_n_rules (policy), ==, 0);
  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_PERMANENT);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (plain);
  g_assert_finalize_object (policy);
}

static void
test_rule_outranks_the_built_in_rules (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure = mend_failure_new_from_text (
    "API Error: 429 Too Many Requests: your tokens for this month are spent");
  GError *cancelled = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled");
  MendFailure *stop = mend_failure_new_stopped ();
  MendFailure *gio_stop = mend_failure_new_from_error (cancelled);

  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_true (mend_error_policy_add_rule (policy, "tokens for this month", MEND_REASON_USAGE_LIMIT,
                                             NULL, NULL));
  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_LIMIT);

  /* Two of the app's rules: the one that does not retry wins. */
  g_assert_true (mend_error_policy_add_rule (policy, "too many requests", MEND_REASON_RATE_LIMIT,
                                             "ours", NULL));
  g_assert_cmpint (mend_error_policy_get_reason_for (policy, failure), ==, MEND_REASON_USAGE_LIMIT);

  /* The user's Stop stays a Stop, whatever the words. */
  g_assert_true (mend_error_policy_add_rule (policy, "stopped", MEND_REASON_CAPACITY, NULL, NULL));
  g_assert_true (mend_error_policy_add_rule (policy, "cancelled", MEND_REASON_CAPACITY, NULL, NULL));
  g_assert_cmpint (mend_error_policy_classify (policy, stop), ==, MEND_FAILURE_STOPPED);
  g_assert_cmpint (mend_error_policy_classify (policy, gio_stop), ==, MEND_FAILURE_STOPPED);

  g_error_free (cancelled);
  g_assert_finalize_object (stop);
  g_assert_finalize_object (gio_stop);
  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
}

static void
test_rule_reads_the_error_and_the_api_type (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  GError *error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "tunnel collapsed (code 77)");
  MendFailure *from_error = mend_failure_new_from_error (error);
  const char *text = "{\"error\":{\"type\":\"pool_empty\",\"message\":\"sorry\"}}";
  g_autoptr(GBytes) body = g_bytes_new_static (text, strlen (text));
  MendFailure *from_http = mend_failure_new_from_http (418, NULL, body);

  mend_error_policy_add_rule (policy, "tunnel collapsed", MEND_REASON_TRANSPORT, NULL, NULL);
  mend_error_policy_add_rule (policy, "pool_empty", MEND_REASON_CAPACITY, NULL, NULL);
  g_assert_cmpint (mend_error_policy_get_reason_for (policy, from_error), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpint (mend_error_policy_get_reason_for (policy, from_http), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_error_policy_classify (policy, from_http), ==, MEND_FAILURE_TRANSIENT);

  g_error_free (error);
  g_assert_finalize_object (from_error);
  g_assert_finalize_object (from_http);
  g_assert_finalize_object (policy);
}

static void
test_rule_without_words_is_refused (void)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  g_autofree char *huge = g_strnfill (2000, 'a');
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_error_policy_add_rule (policy, " \n\t ", MEND_REASON_CAPACITY, NULL, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (mend_error_policy_add_rule (policy, huge, MEND_REASON_CAPACITY, NULL, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_cmpuint (mend_error_policy_get_n_rules (policy), ==, 0);

  g_assert_finalize_object (policy);
}

static void
test_rules_in_json (void)
{
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy = mend_error_policy_new_from_json (
    "{\"maxRetries\": 2, \"rules\": ["
    "{\"phrase\": \"Pool drained\", \"reason\": \"capacity\", \"source\": \"our gateway\"},"
    "{\"phrase\": \"monthly tokens\", \"reason\": \"usage-limit\"}]}", &error);
  MendFailure *failure = mend_failure_new_from_text ("pool drained");
  g_autofree char *json = NULL;
  g_autofree char *again = NULL;
  MendErrorPolicy *loaded;

  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_n_rules (policy), ==, 2);
  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_TRANSIENT);

  json = mend_error_policy_to_json (policy);
  g_assert_nonnull (strstr (json, "\"rules\":[{\"phrase\":\"pool drained\",\"reason\":\"capacity\","
                                  "\"source\":\"our gateway\"}"));
  loaded = mend_error_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  again = mend_error_policy_to_json (loaded);
  g_assert_cmpstr (json, ==, again);

  /* "rules" replaces the rules; an empty array leaves none, and a policy
   * without rules writes no "rules". */
  g_assert_true (mend_error_policy_update_from_json (loaded, "{\"rules\": []}", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_error_policy_get_n_rules (loaded), ==, 0);
  g_free (again);
  again = mend_error_policy_to_json (loaded);
  g_assert_null (strstr (again, "rules"));

  g_assert_finalize_object (failure);
  g_assert_finalize_object (loaded);
  g_assert_finalize_object (policy);
}

static void
test_bad_rules_in_json_name_the_key (void)
{
  static const struct {
    const char *json;
    const char *key;
  } cases[] = {
    { "{\"rules\": {}}", "“rules”" },
    { "{\"rules\": [3]}", "“rules[0]”" },
    { "{\"rules\": [{\"reason\": \"capacity\"}]}", "“rules[0].phrase”" },
    { "{\"rules\": [{\"phrase\": \"x y\", \"reason\": \"busy\"}]}", "“rules[0].reason”" },
    { "{\"rules\": [{\"phrase\": \"x\", \"reason\": \"capacity\"}, {\"phrase\": \" \", \"reason\": \"capacity\"}]}",
      "“rules[1].phrase”" },
    { "{\"rules\": [{\"phrase\": \"x\", \"reason\": \"capacity\", \"source\": 4}]}", "“rules[0].source”" },
    { "{\"rules\": [{\"phrase\": \"x\", \"reason\": \"capacity\", \"rank\": \"code\"}]}", "“rules[0].rank”" },
  };
  MendErrorPolicy *policy = mend_error_policy_new ();

  mend_error_policy_add_rule (policy, "kept", MEND_REASON_SERVER, NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (mend_error_policy_update_from_json (policy, cases[i].json, &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      if (strstr (error->message, cases[i].key) == NULL)
        g_error ("%s: %s", cases[i].json, error->message);
      /* Nothing of it applied. */
      g_assert_cmpuint (mend_error_policy_get_n_rules (policy), ==, 1);
    }

  g_assert_finalize_object (policy);
}

/* The turn's verdict and its wait carry the reason the app's rule gave. */
static void
test_turn_waits_carry_the_rules_reason (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure = mend_failure_new_from_text ("gw: upstream pool drained");
  MendTurn *turn;
  MendRetryWait *wait;

  mend_error_policy_add_rule (policy, "pool drained", MEND_REASON_CAPACITY, "our gateway", NULL);
  turn = g_object_new (MEND_TYPE_TURN, "prompt", "Summarize the logs", "policy", policy,
                       "clock", clock, NULL);
  mend_test_run_by_hand (turn);
  mend_turn_start (turn, NULL);
  mend_turn_fail (turn, failure);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_verdict_get_kind (mend_turn_get_last_verdict (turn)), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_CAPACITY);
  g_assert_nonnull (strstr (mend_failure_get_rule (mend_turn_get_last_failure (turn)), "our gateway"));
  wait = mend_turn_get_wait (turn);
  g_assert_nonnull (wait);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_CAPACITY);
  /* The app's failure is as it made it. */
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_UNKNOWN);

  mend_turn_stop (turn);
  g_assert_finalize_object (turn);
  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/ErrorPolicy/rules/an-apps-rule-reads-words-the-library-does-not-know",
                   test_rule_reads_unknown_words);
  g_test_add_func ("/Mend/ErrorPolicy/rules/an-apps-rule-outranks-the-built-in-rules-but-not-a-stop",
                   test_rule_outranks_the_built_in_rules);
  g_test_add_func ("/Mend/ErrorPolicy/rules/an-apps-rule-reads-the-error-and-the-api-type",
                   test_rule_reads_the_error_and_the_api_type);
  g_test_add_func ("/Mend/ErrorPolicy/rules/a-rule-without-words-is-refused",
                   test_rule_without_words_is_refused);
  g_test_add_func ("/Mend/ErrorPolicy/rules/rules-in-json-read-and-write-back",
                   test_rules_in_json);
  g_test_add_func ("/Mend/ErrorPolicy/rules/bad-rules-in-json-name-the-key-and-change-nothing",
                   test_bad_rules_in_json_name_the_key);
  g_test_add_func ("/Mend/ErrorPolicy/rules/a-turns-wait-carries-the-rules-reason",
                   test_turn_waits_carry_the_rules_reason);

  return g_test_run ();
}
