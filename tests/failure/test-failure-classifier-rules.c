/* test-failure-classifier-rules.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The classifier's rules are data (lib/failure/rules/classifier-rules.txt, compiled
 * in as a GResource): the built-in file parses, every row has its source,
 * what the library holds is the file in the tree, the text a set writes
 * reads back to the same set, and a malformed line is refused with its
 * number and what is wrong with it.
 */

#include <string.h>

#include <libmend.h>

#include "mend-classifier-rules-private.h"

static void
test_built_in_rules_parse (void)
{
  g_autoptr(GBytes) bytes = mend_rule_set_dup_default_text ();
  g_autoptr(GError) error = NULL;
  g_autoptr(MendRuleSet) rules = NULL;
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);
  guint statuses = 0, words = 0, tokens = 0;

  rules = mend_rule_set_parse (data, size, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (rules);

  for (guint i = 0; i < mend_rule_set_get_n_rules (rules); i++)
    {
      const MendRule *rule = mend_rule_set_get_rule (rules, i);

      g_assert_nonnull (rule->source);
      g_assert_cmpuint (strlen (rule->source), >=, 3);
      statuses += rule->match == MEND_MATCH_STATUS;
      words += rule->match == MEND_MATCH_WORDS;
      tokens += rule->match == MEND_MATCH_TOKEN || rule->match == MEND_MATCH_TOKEN_EXACT;
    }
  g_test_message ("%u rules: %u words, %u tokens, %u statuses",
                  mend_rule_set_get_n_rules (rules), words, tokens, statuses);
  g_assert_cmpuint (words, >=, 150);
  g_assert_cmpuint (tokens, >=, 80);
  g_assert_cmpuint (statuses, >=, 10);

  /* The set the classifier uses is the one parsed once. */
  g_assert_true (mend_rule_set_get_default () == mend_rule_set_get_default ());
  g_assert_cmpuint (mend_rule_set_get_n_rules (mend_rule_set_get_default ()), ==,
                    mend_rule_set_get_n_rules (rules));
}

static void
test_library_holds_the_file_in_the_tree (void)
{
  g_autofree char *path = g_build_filename (MEND_TEST_SRCDIR, "..", "lib", "failure", "rules",
                                            "classifier-rules.txt", NULL);
  g_autoptr(GBytes) bytes = mend_rule_set_dup_default_text ();
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize length = 0;

  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (contents, length, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

static void
test_written_rules_read_back (void)
{
  g_autofree char *text = mend_rule_set_to_text (mend_rule_set_get_default ());
  g_autoptr(GError) error = NULL;
  g_autoptr(MendRuleSet) again = mend_rule_set_parse (text, -1, TRUE, &error);
  g_autofree char *text_again = NULL;

  g_assert_no_error (error);
  text_again = mend_rule_set_to_text (again);
  g_assert_cmpstr (text, ==, text_again);
}

static void
test_statuses_and_classes (void)
{
  MendRuleSet *rules = mend_rule_set_get_default ();
  const MendRule *rule = NULL;

  g_assert_cmpint (mend_rule_set_reason_for_status (rules, 503, &rule), ==, MEND_REASON_CAPACITY);
  g_assert_cmpstr (rule->pattern, ==, "503");
  /* 418 has no row of its own: its class's. */
  g_assert_cmpint (mend_rule_set_reason_for_status (rules, 418, &rule), ==, MEND_REASON_BAD_REQUEST);
  g_assert_cmpstr (rule->pattern, ==, "4xx");
  g_assert_cmpint (mend_rule_set_reason_for_status (rules, 200, &rule), ==, MEND_REASON_UNKNOWN);
  g_assert_null (rule);
  g_assert_cmpint (mend_rule_set_reason_for_status (rules, 999, NULL), ==, MEND_REASON_UNKNOWN);
}

static void
test_malformed_lines_are_refused (void)
{
  static const struct {
    const char *text;
    const char *says;  /* in the message */
  } bad[] = {
    { "words specific capacity \"busy\"", "no source" },
    { "words specific capacity \"busy\"Somewhere", "source must follow" },
    { "words specifik capacity \"busy\" src", "not a rank" },
    { "words specific busy \"busy\" src", "not a reason" },
    { "phrase specific capacity \"busy\" src", "not a match" },
    { "words specific capacity busy src", "double quotes" },
    { "words specific capacity \"busy src", "not closed" },
    { "words specific capacity \"bu\\sy\" src", "backslash" },
    { "words specific capacity \"\" src", "empty" },
    { "words specific capacity \"Busy\" src", "lower case" },
    { "words specific capacity \"too  busy\" src", "lower case" },
    { "words specific capacity \" busy\" src", "lower case" },
    { "token code capacity \"ab\" src", "3 to" },
    { "token code capacity \"a.b.c\" src", "letters, digits" },
    { "status status capacity \"600\" src", "three digits" },
    { "near specific capacity \"busy|full\" src", "two families" },
    { "near specific capacity \"busy ~ now ~ later\" src", "two families" },
    { "near specific capacity \"busy| ~ now\" src", "lower case" },
    { "near specific capacity \"Busy ~ now\" src", "lower case" },
    { "status status capacity \"5x3\" src", "three digits" },
    { "order capacity", "names 1 of" },
    { "order capacity capacity", "named twice" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *text = g_strdup_printf ("# a comment\n\n%s\n", bad[i].text);
      g_autoptr(GError) error = NULL;
      MendRuleSet *rules = mend_rule_set_parse (text, -1, FALSE, &error);

      g_assert_null (rules);
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      if (strstr (error->message, bad[i].says) == NULL || strstr (error->message, "line 3") == NULL)
        g_error ("%s: %s", bad[i].text, error->message);
    }
}

static void
test_order_is_the_built_in_files (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(MendRuleSet) with_order = NULL;
  g_autoptr(MendRuleSet) without = NULL;
  const char *order = "order billing usage-limit cancelled auth permission bad-request unknown "
                      "capacity rate-limit timeout transport empty server\n";

  /* An app's rules take the built-in order. */
  with_order = mend_rule_set_parse (order, -1, FALSE, &error);
  g_assert_null (with_order);
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_clear_error (&error);

  without = mend_rule_set_parse ("words specific capacity \"busy\" src\n", -1, TRUE, &error);
  g_assert_null (without);
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_clear_error (&error);

  with_order = mend_rule_set_parse (order, -1, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (mend_rule_set_safety (with_order, MEND_REASON_USAGE_LIMIT), <,
                   mend_rule_set_safety (with_order, MEND_REASON_CAPACITY));
  /* A doubt between the limits is settled by the one that never waits. */
  g_assert_cmpint (mend_rule_set_safety (with_order, MEND_REASON_BILLING), <,
                   mend_rule_set_safety (with_order, MEND_REASON_USAGE_LIMIT));

  /* Text with a NUL in it, or that is not UTF-8, is not rules. */
  g_assert_null (mend_rule_set_parse ("words specific capacity \"a\0b\" src", 33, FALSE, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (mend_rule_set_parse ("words specific capacity \"\xff\" src", -1, FALSE, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
}

static void
test_added_words_are_normalized (void)
{
  g_autoptr(MendRuleSet) rules = mend_rule_set_new ();
  g_autoptr(GError) error = NULL;
  const MendRule *rule;

  g_assert_true (mend_rule_set_add_words (rules, "  Pool\tDRAINED\n now ", MEND_REASON_CAPACITY,
                                          MEND_EVIDENCE_DECISIVE, "our gateway\nv2", &error));
  g_assert_no_error (error);
  rule = mend_rule_set_get_rule (rules, 0);
  g_assert_cmpstr (rule->pattern, ==, "pool drained now");
  g_assert_cmpstr (rule->source, ==, "our gateway v2");

  g_assert_false (mend_rule_set_add_words (rules, " \t ", MEND_REASON_CAPACITY,
                                           MEND_EVIDENCE_DECISIVE, NULL, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_cmpuint (mend_rule_set_get_n_rules (rules), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/ClassifierRules/built-in-rules-parse-each-with-its-source",
                   test_built_in_rules_parse);
  g_test_add_func ("/Mend/ClassifierRules/library-holds-the-file-in-the-tree",
                   test_library_holds_the_file_in_the_tree);
  g_test_add_func ("/Mend/ClassifierRules/written-rules-read-back-the-same",
                   test_written_rules_read_back);
  g_test_add_func ("/Mend/ClassifierRules/a-status-row-wins-over-its-class",
                   test_statuses_and_classes);
  g_test_add_func ("/Mend/ClassifierRules/malformed-lines-are-refused-with-their-number",
                   test_malformed_lines_are_refused);
  g_test_add_func ("/Mend/ClassifierRules/only-the-built-in-rules-set-the-order",
                   test_order_is_the_built_in_files);
  g_test_add_func ("/Mend/ClassifierRules/added-words-are-normalized",
                   test_added_words_are_normalized);

  return g_test_run ();
}
