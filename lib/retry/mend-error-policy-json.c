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
  { "continueAtReset", "continue-at-reset" },
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

/* The keys of a schedule, which a reason may have of its own: the first
 * ones of json_keys, up to "delays". */
#define N_SCHEDULE_KEYS 7
G_STATIC_ASSERT (MEND_SCHEDULE_DELAYS == 1 << (N_SCHEDULE_KEYS - 1));

/* Applies a preset (or none) and then the staged keys. */
static void
apply_staged (MendErrorPolicy *self,
              const char      *preset,
              const GValue    *staged,
              const gboolean  *present)
{
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
      mend_error_policy_clear_schedules (self, TRUE);
    }

  for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
    if (present[i])
      g_object_set_property (G_OBJECT (self), json_keys[i].prop, &staged[i]);
}

/* A reason as "byReason" names it: its nick, with - or _. */
static gboolean
reason_from_name (const char *name,
                  MendReason *reason)
{
  g_autoptr(GEnumClass) reasons = g_type_class_ref (MEND_TYPE_REASON);
  g_autofree char *nick = g_strdelimit (g_strdup (name), "_", '-');
  GEnumValue *ev = g_enum_get_value_by_nick (reasons, nick);

  if (ev == NULL)
    return FALSE;
  *reason = ev->value;
  return TRUE;
}

/* A reason's schedule from a JSON object of schedule keys: a new policy
 * with those keys set, named in @given, or NULL with @error naming the
 * key. */
static MendErrorPolicy *
schedule_from_node (JsonNode         *node,
                    const char       *key,
                    guint            *given,
                    GError          **error)
{
  g_autoptr(MendErrorPolicy) schedule = NULL;
  JsonObjectIter iter;
  const char *member;
  JsonNode *value;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      invalid (error, key, _("expected an object of schedule keys"));
      return NULL;
    }

  schedule = mend_error_policy_new ();
  *given = 0;
  json_object_iter_init (&iter, json_node_get_object (node));
  while (json_object_iter_next (&iter, &member, &value))
    {
      g_autofree char *item_key = g_strdup_printf ("%s.%s", key, member);
      g_auto(GValue) staged = G_VALUE_INIT;
      int i = find_key (member);

      if (i < 0 || i >= N_SCHEDULE_KEYS)
        {
          invalid (error, item_key,
                   _("a reason’s schedule takes maxRetries, baseDelayMs, maxDelayMs, multiplier, jitter, jitterMs and delays"));
          return NULL;
        }
      if (!stage_value (G_OBJECT_GET_CLASS (schedule), item_key, json_keys[i].prop, value, &staged, error))
        return NULL;
      g_object_set_property (G_OBJECT (schedule), json_keys[i].prop, &staged);
      *given |= 1u << i;
    }

  return g_steal_pointer (&schedule);
}

/* "byReason": each reason named, with its schedule and the keys it sets;
 * a reason given null has none. FALSE with @error naming the key. */
static gboolean
schedules_from_node (JsonNode         *node,
                     MendErrorPolicy **schedules,
                     guint            *given,
                     GError          **error)
{
  JsonObjectIter iter;
  const char *member;
  JsonNode *value;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return invalid (error, "byReason", _("expected an object whose keys are reasons"));

  json_object_iter_init (&iter, json_node_get_object (node));
  while (json_object_iter_next (&iter, &member, &value))
    {
      g_autofree char *key = g_strdup_printf ("byReason.%s", member);
      MendReason reason;

      if (!reason_from_name (member, &reason))
        return invalid (error, key, _("not a reason, such as “rate_limit” or “capacity”"));
      g_clear_object (&schedules[reason]);
      if (JSON_NODE_HOLDS_NULL (value))
        continue;
      schedules[reason] = schedule_from_node (value, key, &given[reason], error);
      if (schedules[reason] == NULL)
        return FALSE;
    }
  return TRUE;
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
 * `retryPartial`, `continueAtReset`, `rules` (the app's own classifier rules, an array of
 * `{"phrase": "pool drained", "reason": "capacity", "source": "our
 * gateway"}` with `source` optional, which replaces the rules the policy
 * had: see [method@Mend.ErrorPolicy.add_rule]), `byReason` (the schedules
 * of reasons that have their own, such as
 * `{"rate_limit": {"delays": [10000, 30000]}}`, each following the top
 * level for the keys it does not give; it replaces the schedules the
 * policy had, so that `{}` leaves every reason on the top level's: see
 * [method@Mend.ErrorPolicy.set_schedule_for_reason]), and `preset`
 * (`"turn"` or `"resume"`, applied before the other keys). Keys that are
 * not given keep their values.
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
  JsonNode *by_reason = NULL;
  MendErrorPolicy *schedules[MEND_REASON_UNKNOWN + 1] = { NULL };
  guint schedule_keys[MEND_REASON_UNKNOWN + 1] = { 0 };
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

      if (g_strcmp0 (member, "byReason") == 0)
        {
          by_reason = node;
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

  if (ok && by_reason != NULL)
    ok = schedules_from_node (by_reason, schedules, schedule_keys, error);

  if (ok)
    {
      g_object_freeze_notify (G_OBJECT (self));

      apply_staged (self, preset, staged, present);
      /* Given, the reasons' schedules replace those the policy had. */
      if (by_reason != NULL)
        for (guint i = 0; i <= MEND_REASON_UNKNOWN; i++)
          mend_error_policy_adopt_schedule (self, i, schedules[i], schedule_keys[i]);

      if (rules_given)
        mend_error_policy_set_rule_set (self, mend_rule_set_get_n_rules (rules) > 0 ? rules : NULL);

      g_object_thaw_notify (G_OBJECT (self));
    }

  for (guint i = 0; i <= MEND_REASON_UNKNOWN; i++)
    g_clear_object (&schedules[i]);
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

/* Writes the keys of json_keys in @mask (bit i for key i), as the
 * getters give them. */
static void
write_keys (MendErrorPolicy *self,
            JsonBuilder     *builder,
            guint            mask)
{
  for (guint i = 0; i < G_N_ELEMENTS (json_keys); i++)
    {
      g_auto(GValue) v = G_VALUE_INIT;

      if ((mask & (1u << i)) == 0)
        continue;

      g_object_get_property (G_OBJECT (self), json_keys[i].prop, &v);
      json_builder_set_member_name (builder, json_keys[i].key);
      if (G_VALUE_HOLDS_UINT (&v))
        json_builder_add_int_value (builder, g_value_get_uint (&v));
      else if (G_VALUE_HOLDS_DOUBLE (&v))
        json_builder_add_double_value (builder, g_value_get_double (&v));
      else if (G_VALUE_HOLDS_BOOLEAN (&v))
        json_builder_add_boolean_value (builder, g_value_get_boolean (&v));
      else if (G_VALUE_HOLDS_ENUM (&v))
        json_builder_add_string_value (builder, mend_jitter_to_nick (g_value_get_enum (&v)));
      else if (g_value_get_variant (&v) == NULL)
        json_builder_add_null_value (builder);
      else
        {
          gsize n_delays = 0;
          const guint32 *delays = g_variant_get_fixed_array (g_value_get_variant (&v), &n_delays,
                                                              sizeof (guint32));

          json_builder_begin_array (builder);
          for (gsize d = 0; d < n_delays; d++)
            json_builder_add_int_value (builder, delays[d]);
          json_builder_end_array (builder);
        }
    }
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

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), NULL);

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  write_keys (self, builder, (1u << G_N_ELEMENTS (json_keys)) - 1);
  /* Always, so that what reads it back has the same: none for none. */
  json_builder_set_member_name (builder, "byReason");
  json_builder_begin_object (builder);
  for (guint i = 0; i <= MEND_REASON_UNKNOWN; i++)
    {
      guint given = 0;
      g_autoptr(MendErrorPolicy) schedule = mend_error_policy_new_for_schedule (self, i, &given);

      if (schedule == NULL)
        continue;
      json_builder_set_member_name (builder, mend_reason_to_nick (i));
      json_builder_begin_object (builder);
      write_keys (schedule, builder, given);
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);
  if (mend_error_policy_get_n_rules (self) > 0)
    {
      json_builder_set_member_name (builder, "rules");
      mend_error_policy_rules_to_json (mend_error_policy_get_rule_set (self), builder);
    }
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}

/**
 * mend_error_policy_set_schedule_for_reason:
 * @self: a policy
 * @reason: a reason
 * @json: (nullable): a JSON object of schedule keys, or %NULL
 * @error: return location for a %MEND_POLICY_ERROR
 *
 * Gives @reason a schedule of its own: `maxRetries`, `baseDelayMs`,
 * `maxDelayMs`, `multiplier`, `jitter`, `jitterMs` and `delays`, as at the
 * top level of [method@Mend.ErrorPolicy.update_from_json]; for the keys
 * not given it follows the policy's values, but for its cap when it
 * gives `delays`: they are its longest wait then. %NULL drops @reason's
 * own schedule: it follows the policy's again. The JSON's
 * `"byReason": {"rate_limit": {…}}` does the same.
 *
 * A failure of that reason waits and retries on that schedule (a server's
 * hint still counts, up to [property@Mend.ErrorPolicy:retry-after-max-ms]);
 * whether a failure is retried at all does not change.
 *
 * ```python
 * policy.set_schedule_for_reason(Mend.Reason.RATE_LIMIT,
 *                                '{"delays": [10000, 20000, 30000]}')
 * ```
 *
 * Returns: %TRUE if it was set; on error nothing changes
 */
gboolean
mend_error_policy_set_schedule_for_reason (MendErrorPolicy  *self,
                                           MendReason        reason,
                                           const char       *json,
                                           GError          **error)
{
  g_autoptr(MendErrorPolicy) schedule = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;
  guint given = 0;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), FALSE);
  g_return_val_if_fail ((guint) reason <= MEND_REASON_UNKNOWN, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (json != NULL)
    {
      root = mend_json_parse (json, -1, &parse_error);
      if (root == NULL)
        {
          g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
                       _("The policy is not valid JSON: %s"), parse_error->message);
          return FALSE;
        }
      schedule = schedule_from_node (root, mend_reason_to_nick (reason), &given, error);
      if (schedule == NULL)
        return FALSE;
    }

  mend_error_policy_adopt_schedule (self, reason, schedule, given);
  return TRUE;
}

/**
 * mend_error_policy_dup_schedule_for_reason:
 * @self: a policy
 * @reason: a reason
 *
 * Gets @reason's own schedule, as
 * [method@Mend.ErrorPolicy.set_schedule_for_reason] takes it: the keys it
 * sets. The turn defaults give a rate limit one, for a 429 that gives no
 * hint: `{"delays":[5000,10000,20000,30000]}`
 * (5, 10, 20 and 30 s: a per-minute limit is ridden out).
 *
 * Returns: (transfer full) (nullable): the JSON object, or %NULL when
 *   @reason follows the policy's schedule
 */
char *
mend_error_policy_dup_schedule_for_reason (MendErrorPolicy *self,
                                           MendReason       reason)
{
  g_autoptr(MendErrorPolicy) schedule = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  guint given = 0;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), NULL);
  g_return_val_if_fail ((guint) reason <= MEND_REASON_UNKNOWN, NULL);

  schedule = mend_error_policy_new_for_schedule (self, reason, &given);
  if (schedule == NULL)
    return NULL;

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  write_keys (schedule, builder, given);
  json_builder_end_object (builder);
  return mend_json_builder_finish (builder);
}
