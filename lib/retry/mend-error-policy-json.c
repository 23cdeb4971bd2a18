/* mend-error-policy-json.c — MendErrorPolicy to and from JSON
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* A policy's JSON: read through its properties, written through its
 * getters, so that this file only calls into the policy. */

/* JSON keys and the properties they set, in the order to_json() writes
 * them. */
static const struct {
  const char *key;
  const char *prop;
} json_keys[] = {
  { "maxRetries", "max-retries" },
  { "baseDelayMs", "base-delay-ms" },
  { "maxDelayMs", "max-delay-ms" },
  { "multiplier", "multiplier" },
  { "jitter", "jitter" },
  { "jitterMs", "jitter-ms" },
  { "delays", "delays" },
  { "retryAfterMaxMs", "retry-after-max-ms" },
  { "staggerMs", "stagger-ms" },
  { "retryPartial", "retry-partial" },
};

static gboolean
invalid (GError     **error,
         const char  *key,
         const char  *format,
         ...) G_GNUC_PRINTF (3, 4);

static gboolean
invalid (GError     **error,
         const char  *key,
         const char  *format,
         ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  /* Translators: the first %s is a key of the policy's JSON, such as
   * “maxRetries”; the second says what is wrong with it. */
  g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
               _("Invalid policy key “%s”: %s"), key, detail);
  /* The key is the caller's text, whatever it holds. */
  if (error != NULL)
    mend_redact_error (*error);
  return FALSE;
}

/* A JSON number as an integer, refusing fractions, NaN and out-of-range. */
static gboolean
node_get_uint (JsonNode   *node,
               const char *key,
               guint       maximum,
               guint      *out,
               GError    **error)
{
  gint64 value;

  if (!JSON_NODE_HOLDS_VALUE (node))
    return invalid (error, key, _("expected a whole number"));

  if (json_node_get_value_type (node) == G_TYPE_INT64)
    value = json_node_get_int (node);
  else if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);

      if (!isfinite (d) || d != floor (d) || d < -1 || d > (double) G_MAXUINT)
        return invalid (error, key, _("expected a whole number"));
      value = (gint64) d;
    }
  else
    return invalid (error, key, _("expected a whole number"));

  if (value < 0 || value > maximum)
    return invalid (error, key, _("must be between 0 and %u"), maximum);

  *out = (guint) value;
  return TRUE;
}

static gboolean
stage_value (GObjectClass *klass,
             const char   *key,
             const char   *prop,
             JsonNode     *node,
             GValue       *value,
             GError      **error)
{
  GParamSpec *pspec = g_object_class_find_property (klass, prop);

  g_assert (pspec != NULL);
  g_assert (!G_IS_VALUE (value));

  g_value_init (value, pspec->value_type);

  if (pspec->value_type == G_TYPE_UINT)
    {
      guint v;

      if (!node_get_uint (node, key, G_PARAM_SPEC_UINT (pspec)->maximum, &v, error))
        return FALSE;
      g_value_set_uint (value, v);
      return TRUE;
    }

  if (pspec->value_type == G_TYPE_DOUBLE)
    {
      GParamSpecDouble *dspec = G_PARAM_SPEC_DOUBLE (pspec);
      double d;

      if (!JSON_NODE_HOLDS_VALUE (node) ||
          (json_node_get_value_type (node) != G_TYPE_DOUBLE &&
           json_node_get_value_type (node) != G_TYPE_INT64))
        return invalid (error, key, _("expected a number"));

      d = json_node_get_double (node);
      if (!isfinite (d) || d < dspec->minimum || d > dspec->maximum)
        return invalid (error, key, _("must be between %g and %g"), dspec->minimum, dspec->maximum);
      g_value_set_double (value, d);
      return TRUE;
    }

  if (pspec->value_type == G_TYPE_BOOLEAN)
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
        return invalid (error, key, _("expected true or false"));
      g_value_set_boolean (value, json_node_get_boolean (node));
      return TRUE;
    }

  if (pspec->value_type == MEND_TYPE_JITTER)
    {
      g_autoptr(GEnumClass) enum_class = g_type_class_ref (MEND_TYPE_JITTER);
      const char *nick = NULL;
      GEnumValue *ev = NULL;

      if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
        nick = json_node_get_string (node);
      if (nick != NULL)
        ev = g_enum_get_value_by_nick (enum_class, nick);
      if (ev == NULL)
        return invalid (error, key,
                        _("expected one of “none”, “additive”, “full”, “equal”, “decorrelated”"));
      g_value_set_enum (value, ev->value);
      return TRUE;
    }

  if (pspec->value_type == G_TYPE_VARIANT)
    {
      g_autoptr(GArray) delays = NULL;
      JsonArray *array;
      guint len;

      if (JSON_NODE_HOLDS_NULL (node))
        {
          g_value_set_variant (value, NULL);
          return TRUE;
        }
      if (!JSON_NODE_HOLDS_ARRAY (node))
        return invalid (error, key, _("expected an array of delays in milliseconds, or null"));

      array = json_node_get_array (node);
      len = json_array_get_length (array);
      if (len > MEND_ERROR_POLICY_MAX_RETRIES)
        return invalid (error, key, _("has more than %u delays"), MEND_ERROR_POLICY_MAX_RETRIES);

      delays = g_array_sized_new (FALSE, FALSE, sizeof (guint32), len);
      for (guint i = 0; i < len; i++)
        {
          g_autofree char *item_key = g_strdup_printf ("%s[%u]", key, i);
          guint v;

          if (!node_get_uint (json_array_get_element (array, i), item_key, MEND_ERROR_POLICY_MAX_MS, &v, error))
            return FALSE;
          g_array_append_val (delays, v);
        }

      g_value_set_variant (value,
                           g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32,
                                                      delays->data, delays->len,
                                                      sizeof (guint32)));
      return TRUE;
    }

  g_assert_not_reached ();
}

static int
find_key (const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
    if (g_strcmp0 (json_keys[i].key, key) == 0)
      return (int) i;

  return -1;
}

/**
 * mend_error_policy_update_from_json:
 * @self: a policy
 * @text: a JSON object
 * @error: return location for a %MEND_POLICY_ERROR
 *
 * Applies the keys of a JSON object to the policy: `maxRetries`,
 * `baseDelayMs`, `maxDelayMs`, `multiplier`, `jitter` (`"none"`,
 * `"additive"`, `"full"`, `"equal"`, `"decorrelated"`), `jitterMs`, `delays`
 * (an array of milliseconds, or null), `retryAfterMaxMs`, `staggerMs`,
 * `retryPartial`, `rules` (the app's own classifier rules, an array of
 * `{"phrase": "pool drained", "reason": "capacity", "source": "our
 * gateway"}` with `source` optional, which replaces the rules the policy
 * had: see [method@Mend.ErrorPolicy.add_rule]), and `preset` (`"turn"` or
 * `"resume"`, applied before the other keys). Keys that are not given keep
 * their values.
 *
 * Malformed JSON, an unknown key or a bad value is an error that names the
 * key, and then nothing is applied.
 *
 * Returns: %TRUE if the policy was updated
 */
gboolean
mend_error_policy_update_from_json (MendErrorPolicy  *self,
                                    const char       *text,
                                    GError          **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;
  GValue staged[G_N_ELEMENTS (json_keys)] = { G_VALUE_INIT };
  gboolean present[G_N_ELEMENTS (json_keys)] = { FALSE };
  g_autoptr(MendRuleSet) rules = NULL;
  gboolean rules_given = FALSE;
  const char *preset = NULL;
  gboolean ok = TRUE;
  JsonObject *object;
  JsonObjectIter iter;
  const char *member;
  JsonNode *node;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  root = mend_json_parse (text, -1, &parse_error);
  if (root == NULL)
    {
      g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                   _("The policy is not valid JSON: %s"), parse_error->message);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                           _("The policy must be a JSON object"));
      return FALSE;
    }

  object = json_node_get_object (root);
  json_object_iter_init (&iter, object);
  while (ok && json_object_iter_next (&iter, &member, &node))
    {
      int i;

      if (g_strcmp0 (member, "preset") == 0)
        {
          if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
            preset = json_node_get_string (node);
          if (g_strcmp0 (preset, "turn") != 0 && g_strcmp0 (preset, "resume") != 0)
            ok = invalid (error, member, _("expected “turn” or “resume”"));
          continue;
        }

      if (g_strcmp0 (member, "rules") == 0)
        {
          g_clear_pointer (&rules, mend_rule_set_unref);
          rules = mend_error_policy_rules_from_json (node, member, error);
          rules_given = TRUE;
          ok = rules != NULL;
          continue;
        }

      i = find_key (member);
      if (i < 0)
        {
          g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                       _("Unknown policy key “%s”"), member);
          if (error != NULL)
            mend_redact_error (*error);
          ok = FALSE;
          break;
        }
      present[i] = TRUE;
      ok = stage_value (G_OBJECT_GET_CLASS (self), member, json_keys[i].prop,
                        node, &staged[i], error);
    }

  if (ok)
    {
      g_object_freeze_notify (G_OBJECT (self));

      if (g_strcmp0 (preset, "resume") == 0)
        mend_error_policy_apply_resume_preset (self);
      else if (g_strcmp0 (preset, "turn") == 0)
        {
          g_autoptr(MendErrorPolicy) defaults = mend_error_policy_new ();

          for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
            {
              g_auto(GValue) v = G_VALUE_INIT;

              g_object_get_property (G_OBJECT (defaults), json_keys[i].prop, &v);
              g_object_set_property (G_OBJECT (self), json_keys[i].prop, &v);
            }
        }

      for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
        if (present[i])
          g_object_set_property (G_OBJECT (self), json_keys[i].prop, &staged[i]);

      if (rules_given)
        mend_error_policy_set_rule_set (self, mend_rule_set_get_n_rules (rules) > 0 ? rules : NULL);

      g_object_thaw_notify (G_OBJECT (self));
    }

  for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
    if (G_IS_VALUE (&staged[i]))
      g_value_unset (&staged[i]);

  return ok;
}

/**
 * mend_error_policy_new_from_json:
 * @text: a JSON object
 * @error: return location for a %MEND_POLICY_ERROR
 *
 * Creates a policy from the turn defaults and the keys of a JSON object; see
 * [method@Mend.ErrorPolicy.update_from_json].
 *
 * Returns: (transfer full) (nullable): a new policy, or %NULL on error
 */
MendErrorPolicy *
mend_error_policy_new_from_json (const char  *text,
                                 GError     **error)
{
  g_autoptr(MendErrorPolicy) self = NULL;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = mend_error_policy_new ();
  if (!mend_error_policy_update_from_json (self, text, error))
    return NULL;

  return g_steal_pointer (&self);
}

/**
 * mend_error_policy_new_from_file:
 * @path: (type filename): a JSON file
 * @error: return location for a %MEND_POLICY_ERROR or a file error
 *
 * Creates a policy from a JSON file; see
 * [method@Mend.ErrorPolicy.update_from_json].
 *
 * Returns: (transfer full) (nullable): a new policy, or %NULL on error
 */
MendErrorPolicy *
mend_error_policy_new_from_file (const char  *path,
                                 GError     **error)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!g_file_get_contents (path, &contents, &length, error))
    return NULL;

  if (memchr (contents, '\0', length) != NULL)
    {
      g_autofree char *display = g_filename_display_name (path);

      g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                   _("The policy file “%s” is not text"), display);
      return NULL;
    }

  return mend_error_policy_new_from_json (contents, error);
}

/**
 * mend_error_policy_to_json:
 * @self: a policy
 *
 * Writes the policy as a JSON object that
 * [ctor@Mend.ErrorPolicy.new_from_json] reads back to the same policy.
 *
 * Returns: (transfer full): the JSON text
 */
char *
mend_error_policy_to_json (MendErrorPolicy *self)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GEnumClass) jitters = NULL;
  const guint *delays;
  gsize n_delays = 0;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), NULL);

  builder = json_builder_new_immutable ();
  jitters = g_type_class_ref (MEND_TYPE_JITTER);
  delays = mend_error_policy_get_delays (self, &n_delays);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "maxRetries");
  json_builder_add_int_value (builder, mend_error_policy_get_max_retries (self));
  json_builder_set_member_name (builder, "baseDelayMs");
  json_builder_add_int_value (builder, mend_error_policy_get_base_delay_ms (self));
  json_builder_set_member_name (builder, "maxDelayMs");
  json_builder_add_int_value (builder, mend_error_policy_get_max_delay_ms (self));
  json_builder_set_member_name (builder, "multiplier");
  json_builder_add_double_value (builder, mend_error_policy_get_multiplier (self));
  json_builder_set_member_name (builder, "jitter");
  json_builder_add_string_value (builder,
                                 g_enum_get_value (jitters, mend_error_policy_get_jitter (self))->value_nick);
  json_builder_set_member_name (builder, "jitterMs");
  json_builder_add_int_value (builder, mend_error_policy_get_jitter_ms (self));
  json_builder_set_member_name (builder, "delays");
  if (delays == NULL)
    json_builder_add_null_value (builder);
  else
    {
      json_builder_begin_array (builder);
      for (gsize i = 0; i < n_delays; i++)
        json_builder_add_int_value (builder, delays[i]);
      json_builder_end_array (builder);
    }
  json_builder_set_member_name (builder, "retryAfterMaxMs");
  json_builder_add_int_value (builder, mend_error_policy_get_retry_after_max_ms (self));
  json_builder_set_member_name (builder, "staggerMs");
  json_builder_add_int_value (builder, mend_error_policy_get_stagger_ms (self));
  json_builder_set_member_name (builder, "retryPartial");
  json_builder_add_boolean_value (builder, mend_error_policy_get_retry_partial (self));
  if (mend_error_policy_get_n_rules (self) > 0)
    {
      json_builder_set_member_name (builder, "rules");
      mend_error_policy_rules_to_json (mend_error_policy_get_rule_set (self), builder);
    }
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}
