/* fuzz-rules.c: the classifier's rules as data, and an app's own rules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Byte 0 of the input says whether the rules must have their order line
 * (bit 0); the rest is read by mend_rule_set_parse (), the loader of
 * lib/failure/rules/classifier-rules.txt. Checked besides crashes and leaks:
 * - a result or an error (MEND_POLICY_ERROR, UTF-8 message), never both;
 * - every row it keeps is one the classifier can match: words already
 *   normalized, tokens of token characters, a source;
 * - the text a set writes reads back to the same set;
 * - the set weighs the input and known texts to a valid reason, saying
 *   what decided in UTF-8.
 * Then the app's path: each line of the rest is a phrase given to
 * mend_error_policy_add_rule () with a reason from byte 0, and the same
 * phrases go into a policy's JSON "rules"; the policies classify the input
 * as a failure's text; the user's Stop stays a Stop; a policy's JSON reads
 * back to the same policy; a refused update changes nothing.
 */

#include "fuzz-common.h"

#include <json-glib/json-glib.h>

#include "mend-classifier-private.h"
#include "mend-classifier-rules-private.h"

#define MAX_LINES 16

static const char *texts[] = {
  "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
  "Error code: 429, with error text {\"error\":{\"code\":\"1113\",\"message\":\"您的账户已欠费\"}}",
  "fetch failed | Headers Timeout Error",
  "The model `gtp-4` does not exist or you do not have access to it.",
  "pool drained",
};

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static void
check_rows (MendRuleSet *rules)
{
  for (guint i = 0; i < mend_rule_set_get_n_rules (rules); i++)
    {
      const MendRule *rule = mend_rule_set_get_rule (rules, i);
      g_autofree char *normal = NULL;

      fuzz_check (rule->pattern[0] != '\0' && g_utf8_validate (rule->pattern, -1, NULL),
                  "row %u: pattern", i);
      fuzz_check (rule->source[0] != '\0' && g_utf8_validate (rule->source, -1, NULL),
                  "row %u: source", i);
      fuzz_check (strchr (rule->source, '\n') == NULL, "row %u: a source of two lines", i);
      fuzz_check (mend_reason_to_nick (rule->reason) != NULL, "row %u: reason", i);
      switch (rule->match)
        {
        case MEND_MATCH_WORDS:
          normal = mend_rules_normalize_text (rule->pattern);
          fuzz_check (strcmp (normal, rule->pattern) == 0, "row %u: words not normalized: %s", i,
                      rule->pattern);
          break;
        case MEND_MATCH_TOKEN:
        case MEND_MATCH_TOKEN_EXACT:
        case MEND_MATCH_INFIX:
          for (const char *p = rule->pattern; *p != '\0'; p++)
            fuzz_check (g_ascii_isalnum (*p) || *p == '_' || *p == '-', "row %u: token %s", i,
                        rule->pattern);
          fuzz_check (strlen (rule->pattern) <= MEND_RULE_MAX_TOKEN, "row %u: a long token", i);
          break;
        case MEND_MATCH_STATUS:
          fuzz_check (strlen (rule->pattern) == 3, "row %u: status %s", i, rule->pattern);
          break;
        default:
          fuzz_fail ("row %u: match %d", i, rule->match);
        }
    }
}

static void
check_match (MendRuleSet *rules,
             const char  *text)
{
  MendClassification verdict = { 0 };
  gboolean matched = mend_classifier_match (rules, text, &verdict);

  fuzz_check (matched == (verdict.rule != NULL), "matched without a rule, or the reverse");
  if (matched)
    {
      fuzz_check (g_utf8_validate (verdict.rule, -1, NULL), "rule not UTF-8");
      fuzz_check (mend_reason_to_nick (verdict.reason) != NULL, "reason");
    }
  mend_classification_clear (&verdict);
}

static void
fuzz_loader (const char *text,
             gboolean    need_order)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(MendRuleSet) rules = mend_rule_set_parse (text, -1, need_order, &error);
  g_autoptr(MendRuleSet) again = NULL;
  g_autofree char *written = NULL;
  g_autofree char *written_again = NULL;

  fuzz_check ((rules == NULL) == (error != NULL), "a result and an error, or neither");
  if (rules == NULL)
    {
      fuzz_check (error->domain == MEND_POLICY_ERROR, "error of domain %s",
                  g_quark_to_string (error->domain));
      fuzz_check (g_utf8_validate (error->message, -1, NULL), "error message not UTF-8");
      return;
    }

  check_rows (rules);

  written = mend_rule_set_to_text (rules);
  again = mend_rule_set_parse (written, -1, need_order, &error);
  if (again == NULL)
    fuzz_fail ("the written rules do not read back (%s):\n%s", error->message, written);
  written_again = mend_rule_set_to_text (again);
  if (strcmp (written, written_again) != 0)
    fuzz_fail ("the written rules read back to others:\n%s\n%s", written, written_again);

  check_match (rules, text);
  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    check_match (rules, texts[i]);
}

/* The failure's text is cut: fuzz-text weighs long texts, this harness
 * the rules. */
#define MAX_FAILURE_TEXT 512

static void
check_policy (MendErrorPolicy *policy,
              const char      *text)
{
  g_autofree char *cut = g_utf8_make_valid (text, MIN (strlen (text), MAX_FAILURE_TEXT));
  MendFailure *failure = mend_failure_new_from_text (cut);
  MendFailure *stop = mend_failure_new_stopped ();
  g_autofree char *json = mend_error_policy_to_json (policy);
  g_autofree char *json_again = NULL;
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *copy;
  MendReason reason;

  fuzz_classify (policy, failure);
  reason = mend_error_policy_get_reason_for (policy, failure);
  fuzz_check (mend_reason_to_nick (reason) != NULL, "reason");
  /* A refusal or a limit is never retried, whoever named it. */
  if (reason == MEND_REASON_AUTH || reason == MEND_REASON_PERMISSION ||
      reason == MEND_REASON_USAGE_LIMIT)
    fuzz_check (mend_error_policy_classify (policy, failure) != MEND_FAILURE_TRANSIENT,
                "%s retried", mend_reason_to_nick (reason));
  fuzz_check (mend_error_policy_classify (policy, stop) == MEND_FAILURE_STOPPED,
              "the user's Stop became something else");

  copy = mend_error_policy_new_from_json (json, &error);
  if (copy == NULL)
    fuzz_fail ("to_json () does not read back (%s): %s", error->message, json);
  json_again = mend_error_policy_to_json (copy);
  if (strcmp (json, json_again) != 0)
    fuzz_fail ("to_json () reads back to another policy:\n%s\n%s", json, json_again);
  fuzz_check (mend_error_policy_get_reason_for (copy, failure) == reason,
              "the policy read back reads the failure otherwise");

  g_assert_finalize_object (copy);
  g_assert_finalize_object (stop);
  g_assert_finalize_object (failure);
}

static void
fuzz_app_rules (const char *text,
                guint8      flags)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", MAX_LINES + 1);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GEnumClass) reasons = g_type_class_ref (MEND_TYPE_REASON);
  g_autofree char *json = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *by_call = mend_error_policy_new ();
  MendErrorPolicy *by_json = mend_error_policy_new_for_resume ();
  guint added = 0, valid_lines = 0;
  gboolean ok;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "rules");
  json_builder_begin_array (builder);
  for (guint i = 0; lines[i] != NULL && i < MAX_LINES; i++)
    {
      MendReason reason = (MendReason) ((flags >> 1) + i) % (MEND_REASON_UNKNOWN + 1);
      const char *source = lines[i + 1];

      error = NULL;
      if (mend_error_policy_add_rule (by_call, lines[i], reason, source, &error))
        added++;
      else
        fuzz_check (error != NULL && error->domain == MEND_POLICY_ERROR, "a refused rule without an error");
      g_clear_error (&error);

      if (!g_utf8_validate (lines[i], -1, NULL))
        continue;
      valid_lines++;
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "phrase");
      json_builder_add_string_value (builder, lines[i]);
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, g_enum_get_value (reasons, reason)->value_nick);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  fuzz_check (mend_error_policy_get_n_rules (by_call) == added, "%u rules added, %u held", added,
              mend_error_policy_get_n_rules (by_call));
  check_policy (by_call, text);

  /* The same phrases in the JSON: all of them, or nothing changes. */
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json = json_generator_to_data (generator, NULL);
  before = mend_error_policy_to_json (by_json);
  ok = mend_error_policy_update_from_json (by_json, json, &error);
  after = mend_error_policy_to_json (by_json);
  if (ok)
    fuzz_check (mend_error_policy_get_n_rules (by_json) == valid_lines, "%u rules of %u lines",
                mend_error_policy_get_n_rules (by_json), valid_lines);
  else
    {
      fuzz_check (error != NULL && error->domain == MEND_POLICY_ERROR, "refused without an error");
      if (strcmp (before, after) != 0)
        fuzz_fail ("a refused update changed the policy:\n%s\n%s", before, after);
    }
  check_policy (by_json, text);

  mend_error_policy_clear_rules (by_call);
  fuzz_check (mend_error_policy_get_n_rules (by_call) == 0, "rules left after clear_rules ()");

  g_assert_finalize_object (by_call);
  g_assert_finalize_object (by_json);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = NULL;
  guint8 flags;

  if (size == 0)
    return 0;

  flags = data[0];
  text = fuzz_strndup (data + 1, size - 1);

  fuzz_loader (text, (flags & 1) != 0);
  fuzz_app_rules (text, flags);
  return 0;
}
