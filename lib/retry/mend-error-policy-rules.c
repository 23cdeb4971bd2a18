/* mend-error-policy-rules.c — MendErrorPolicy: the app's own classifier rules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-classifier-private.h"
#include "mend-enum-types.h"
#include "mend-error.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-redact-private.h"

/* The most rules a policy holds: a policy file is configuration, not a
 * corpus, and every failure is matched against each. */
#define MAX_RULES 1000

/**
 * mend_error_policy_add_rule:
 * @self: a policy
 * @phrase: words to find in a failure's text
 * @reason: what a failure whose text has @phrase is
 * @source: (nullable): where the wording comes from, for people: shown in
 *   what decided, such as “our gateway's docs”
 * @error: return location for a %MEND_POLICY_ERROR
 *
 * Adds a rule of the app's own: a failure whose message (or the message
 * of its [struct@GLib.Error], or its API error type) holds @phrase is read
 * as @reason by this policy — by [method@Mend.ErrorPolicy.classify],
 * [method@Mend.ErrorPolicy.get_reason_for], and the turns and subagent
 * retries that use the policy, whose waits and records then carry
 * @reason.
 *
 * @phrase matches as the built-in words do: in any case, anywhere, with
 * runs of white space (a terminal's line wrap included) read as one space
 * and links left out. An app's rule outranks the built-in rules; between
 * two of the app's rules that both match, the reason that does not retry
 * wins. A rule never turns the user's Stop into something else.
 *
 * A rule whose phrase has nothing to match, or is longer than 1024 bytes,
 * is an error and is not added; a policy holds at most 1000 rules.
 *
 * Example:
 *
 * ```c
 * mend_error_policy_add_rule (policy, "pool drained", MEND_REASON_CAPACITY,
 *                             "our gateway: every upstream account is busy", NULL);
 * mend_error_policy_add_rule (policy, "tokens for this month", MEND_REASON_USAGE_LIMIT,
 *                             "our gateway's monthly allowance", NULL);
 * ```
 *
 * Returns: %TRUE if the rule was added
 */
gboolean
mend_error_policy_add_rule (MendErrorPolicy  *self,
                            const char       *phrase,
                            MendReason        reason,
                            const char       *source,
                            GError          **error)
{
  MendRuleSet *rules;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), FALSE);
  g_return_val_if_fail (phrase != NULL, FALSE);
  g_return_val_if_fail (reason <= MEND_REASON_UNKNOWN, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  rules = mend_error_policy_get_rule_set (self);
  if (rules != NULL && mend_rule_set_get_n_rules (rules) >= MAX_RULES)
    {
      g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                   _("A policy holds at most %d rules"), MAX_RULES);
      return FALSE;
    }

  if (rules == NULL)
    {
      g_autoptr(MendRuleSet) fresh = mend_rule_set_new ();

      if (!mend_rule_set_add_words (fresh, phrase, reason, MEND_EVIDENCE_DECISIVE, source, error))
        return FALSE;
      mend_error_policy_set_rule_set (self, fresh);
      return TRUE;
    }

  return mend_rule_set_add_words (rules, phrase, reason, MEND_EVIDENCE_DECISIVE, source, error);
}

/**
 * mend_error_policy_clear_rules:
 * @self: a policy
 *
 * Removes every rule the app added with [method@Mend.ErrorPolicy.add_rule]
 * or the policy's JSON; the built-in rules stay.
 */
void
mend_error_policy_clear_rules (MendErrorPolicy *self)
{
  g_return_if_fail (MEND_IS_ERROR_POLICY (self));

  mend_error_policy_set_rule_set (self, NULL);
}

/**
 * mend_error_policy_get_n_rules:
 * @self: a policy
 *
 * Gets how many rules the app added.
 *
 * Returns: the number of the app's rules
 */
guint
mend_error_policy_get_n_rules (MendErrorPolicy *self)
{
  MendRuleSet *rules;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), 0);

  rules = mend_error_policy_get_rule_set (self);
  return rules != NULL ? mend_rule_set_get_n_rules (rules) : 0;
}

static gboolean
invalid (GError     **error,
         const char  *key,
         const char  *detail)
{
  /* Translators: the first %s is a key of the policy's JSON, such as
   * “rules[2].reason”; the second says what is wrong with it. */
  g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
               _("Invalid policy key “%s”: %s"), key, detail);
  if (error != NULL)
    mend_redact_error (*error);
  return FALSE;
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static gboolean
read_rule (MendRuleSet  *rules,
           JsonNode     *node,
           const char   *key,
           GError      **error)
{
  g_autoptr(GEnumClass) reasons = g_type_class_ref (MEND_TYPE_REASON);
  g_autoptr(GError) local_error = NULL;
  JsonObjectIter iter;
  JsonObject *object;
  const char *member;
  const char *phrase;
  const char *nick;
  const char *source = NULL;
  GEnumValue *reason;
  JsonNode *value;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return invalid (error, key, _("expected an object with “phrase”, “reason” and “source”"));
  object = json_node_get_object (node);

  json_object_iter_init (&iter, object);
  while (json_object_iter_next (&iter, &member, &value))
    if (strcmp (member, "phrase") != 0 && strcmp (member, "reason") != 0 &&
        strcmp (member, "source") != 0)
      {
        g_autofree char *where = g_strdup_printf ("%s.%s", key, member);

        return invalid (error, where, _("unknown key"));
      }

  phrase = string_member (object, "phrase");
  if (phrase == NULL)
    {
      g_autofree char *where = g_strdup_printf ("%s.phrase", key);

      return invalid (error, where, _("expected a string"));
    }

  nick = string_member (object, "reason");
  reason = nick != NULL ? g_enum_get_value_by_nick (reasons, nick) : NULL;
  if (reason == NULL)
    {
      g_autofree char *where = g_strdup_printf ("%s.reason", key);

      return invalid (error, where, _("expected a reason such as “capacity” or “usage-limit”"));
    }

  if (json_object_has_member (object, "source"))
    {
      source = string_member (object, "source");
      if (source == NULL)
        {
          g_autofree char *where = g_strdup_printf ("%s.source", key);

          return invalid (error, where, _("expected a string"));
        }
    }

  if (!mend_rule_set_add_words (rules, phrase, reason->value, MEND_EVIDENCE_DECISIVE, source,
                                &local_error))
    {
      g_autofree char *where = g_strdup_printf ("%s.phrase", key);

      return invalid (error, where, _("has nothing to match, or is longer than 1024 bytes"));
    }

  return TRUE;
}

MendRuleSet *
mend_error_policy_rules_from_json (JsonNode    *node,
                                   const char  *key,
                                   GError     **error)
{
  g_autoptr(MendRuleSet) rules = mend_rule_set_new ();
  JsonArray *array;
  guint len;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      invalid (error, key, _("expected an array of rules"));
      return NULL;
    }

  array = json_node_get_array (node);
  len = json_array_get_length (array);
  if (len > MAX_RULES)
    {
      g_autofree char *detail = g_strdup_printf (_("has more than %d rules"), MAX_RULES);

      invalid (error, key, detail);
      return NULL;
    }

  for (guint i = 0; i < len; i++)
    {
      g_autofree char *item_key = g_strdup_printf ("%s[%u]", key, i);

      if (!read_rule (rules, json_array_get_element (array, i), item_key, error))
        return NULL;
    }

  return g_steal_pointer (&rules);
}

void
mend_error_policy_rules_to_json (MendRuleSet *rules,
                                 JsonBuilder *builder)
{
  g_autoptr(GEnumClass) reasons = g_type_class_ref (MEND_TYPE_REASON);

  json_builder_begin_array (builder);
  for (guint i = 0; i < mend_rule_set_get_n_rules (rules); i++)
    {
      const MendRule *rule = mend_rule_set_get_rule (rules, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "phrase");
      json_builder_add_string_value (builder, rule->pattern);
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, g_enum_get_value (reasons, rule->reason)->value_nick);
      json_builder_set_member_name (builder, "source");
      json_builder_add_string_value (builder, rule->source);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}
