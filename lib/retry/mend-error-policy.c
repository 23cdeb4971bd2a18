/* mend-error-policy.c — MendErrorPolicy: which failures are retried, how often, after how long
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include <glib/gi18n-lib.h>


#include "mend-classifier-private.h"
#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"

/**
 * MendErrorPolicy:
 *
 * What is retried, how often, and how long to wait before each retry.
 *
 * [ctor@Mend.ErrorPolicy.new] gives the turn defaults: 4 retries (5 attempts
 * in all), exponential from 250 ms, ×2, capped at 4 s, with 0–250 ms of
 * additive jitter applied before the cap, and server hints honoured up to
 * 60 s. [ctor@Mend.ErrorPolicy.new_for_resume] gives the subagent-resume
 * defaults: the schedule 20 s, 45 s, 90 s, 180 s, each at most an hour.
 *
 * Subclass it and override [vfunc@Mend.ErrorPolicy.classify] to change what
 * is retried. A policy loads from and saves to JSON, with the property names
 * in camel case (`maxRetries`, `baseDelayMs`, `jitter`: `"additive"`, …);
 * bad configuration is a %MEND_POLICY_ERROR naming the key, and nothing of
 * it is applied.
 *
 * An app that knows wording the built-in classifier does not — its own
 * gateway's, say — adds rules of its own with
 * [method@Mend.ErrorPolicy.add_rule] or the JSON's `rules` key:
 * `{"rules": [{"phrase": "pool drained", "reason": "capacity"}]}`.
 *
 * Example:
 *
 * ```c
 * g_autoptr(GError) error = NULL;
 * g_autoptr(MendErrorPolicy) policy =
 *   mend_error_policy_new_from_json ("{\"maxRetries\": 6, \"baseDelayMs\": 500, \"jitter\": \"full\"}",
 *                                    &error);
 * g_autoptr(MendFailure) failure = mend_failure_new_from_text ("API Error: 529 Overloaded");
 *
 * if (policy == NULL)
 *   g_error ("%s", error->message);  // names the bad key
 * if (mend_error_policy_classify (policy, failure) == MEND_FAILURE_TRANSIENT)
 *   g_print ("first retry in %" G_GINT64_FORMAT " ms\n",
 *            mend_error_policy_delay_for (policy, 1, failure, NULL));
 * ```
 */

#define MAX_MS          MEND_ERROR_POLICY_MAX_MS
#define MAX_RETRIES     MEND_ERROR_POLICY_MAX_RETRIES
#define MAX_MULTIPLIER  100.0

/* When to retry: the schedule of the policy, or of one reason. */
typedef struct
{
  guint       max_retries;
  guint       base_delay_ms;
  guint       max_delay_ms;
  double      multiplier;
  MendJitter  jitter;
  guint       jitter_ms;
  GArray     *delays;              /* guint, or NULL */
  guint       given;               /* a reason's: MendScheduleKeys it sets */
} MendSchedule;

#define N_REASONS (MEND_REASON_UNKNOWN + 1)

typedef struct
{
  MendSchedule s;
  MendSchedule *by_reason[N_REASONS]; /* a reason's own, or NULL */
  guint       retry_after_max_ms;
  guint       stagger_ms;
  gboolean    retry_partial;
  gboolean    continue_at_reset;
  GRand      *rand;               /* made at its first draw: 2.5 kB */
  MendRuleSet *rules;              /* the app's, or NULL */
} MendErrorPolicyPrivate;

enum {
  PROP_0,
  PROP_MAX_RETRIES,
  PROP_BASE_DELAY_MS,
  PROP_MAX_DELAY_MS,
  PROP_MULTIPLIER,
  PROP_JITTER,
  PROP_JITTER_MS,
  PROP_DELAYS,
  PROP_RETRY_AFTER_MAX_MS,
  PROP_STAGGER_MS,
  PROP_RETRY_PARTIAL,
  PROP_CONTINUE_AT_RESET,
  N_PROPS
};

G_DEFINE_TYPE_WITH_PRIVATE (MendErrorPolicy, mend_error_policy, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];


static MendFailureKind
mend_error_policy_real_classify (MendErrorPolicy *self,
                                 MendFailure     *failure)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);
  gboolean should_retry = FALSE;
  int said = -1;

  if (mend_failure_get_should_retry (failure, &should_retry))
    said = should_retry ? 1 : 0;

  return mend_failure_default_kind (mend_error_policy_get_reason_for (self, failure),
                                    said,
                                    mend_failure_get_partial (failure),
                                    priv->retry_partial,
                                    mend_failure_get_retry_after_ms (failure),
                                    priv->retry_after_max_ms);
}

gboolean
mend_error_policy_judge (MendErrorPolicy  *self,
                         MendFailure      *failure,
                         MendReason       *reason,
                         char            **rule)
{
  MendRuleSet *rules = mend_error_policy_get_rule_set (self);
  MendClassification classification = { 0 };
  const GError *error;
  const char *type;
  GString *text;
  gboolean matched;

  if (rules == NULL || mend_failure_is_user_stop (failure))
    return FALSE;

  text = g_string_new (mend_failure_get_message (failure));
  error = mend_failure_get_error (failure);
  if (error != NULL && error->message != NULL)
    g_string_append_printf (text, "\n%s", error->message);
  type = mend_failure_get_api_error_type (failure);
  if (type != NULL)
    g_string_append_printf (text, "\n%s", type);

  matched = mend_classifier_match (rules, text->str, &classification);
  g_string_free (text, TRUE);
  if (!matched)
    return FALSE;

  *reason = classification.reason;
  if (rule != NULL)
    *rule = g_strdup_printf (_("the app’s rule: %s"), classification.rule);
  mend_classification_clear (&classification);
  return TRUE;
}

/**
 * mend_error_policy_get_reason_for:
 * @self: a policy
 * @failure: a failure
 *
 * Gets what the policy reads @failure as: the reason a rule the app added
 * ([method@Mend.ErrorPolicy.add_rule]) gives it, or else the failure's own
 * [property@Mend.Failure:reason].
 *
 * Returns: the reason
 */
MendReason
mend_error_policy_get_reason_for (MendErrorPolicy *self,
                                  MendFailure     *failure)
{
  MendReason reason;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), MEND_REASON_UNKNOWN);
  g_return_val_if_fail (MEND_IS_FAILURE (failure), MEND_REASON_UNKNOWN);

  if (mend_error_policy_judge (self, failure, &reason, NULL))
    return reason;
  return mend_failure_get_reason (failure);
}

MendRuleSet *
mend_error_policy_get_rule_set (MendErrorPolicy *self)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  return priv->rules;
}

void
mend_error_policy_set_rule_set (MendErrorPolicy *self,
                                MendRuleSet     *rules)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  if (rules != NULL)
    mend_rule_set_ref (rules);
  g_clear_pointer (&priv->rules, mend_rule_set_unref);
  priv->rules = rules;
}

static GVariant *
delays_to_variant (MendErrorPolicyPrivate *priv)
{
  if (priv->s.delays == NULL)
    return NULL;

  return g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32,
                                    priv->s.delays->data, priv->s.delays->len,
                                    sizeof (guint32));
}

static MendSchedule *
schedule_copy (const MendSchedule *from)
{
  MendSchedule *copy = g_memdup2 (from, sizeof *from);

  if (from->delays != NULL)
    copy->delays = g_array_copy (from->delays);
  return copy;
}

static MendSchedule *default_rate_limit_schedule (void);

static void
schedule_free (MendSchedule *sched)
{
  /* The default is shared by every policy, and lives as long as the
   * process. */
  if (sched == NULL || sched == default_rate_limit_schedule ())
    return;
  g_clear_pointer (&sched->delays, g_array_unref);
  g_free (sched);
}

static void
clear_reason_schedules (MendErrorPolicyPrivate *priv)
{
  for (guint i = 0; i < N_REASONS; i++)
    g_clear_pointer (&priv->by_reason[i], schedule_free);
}

/* The default schedule of a rate limit with no hint: a per-minute limit
 * lifts within a minute, so its waits add up to more than one (5, 10, 20
 * and 30 s, each with up to 250 ms of jitter), where an overload keeps
 * the short schedule. */
static MendSchedule *
default_rate_limit_schedule (void)
{
  static const guint delays[] = { 5000, 10000, 20000, 30000 };
  static gsize made;
  static MendSchedule *shared;

  /* One for all policies, never changed: a policy that sets a rate
   * limit's schedule replaces it by its own. */
  if (g_once_init_enter (&made))
    {
      /* Its delays only: the number of retries stays the policy's, so
       * that max-retries 0 still means no retry. */
      MendSchedule sched = {
        .given = MEND_SCHEDULE_DELAYS,
      };

      shared = schedule_copy (&sched);
      shared->delays = g_array_sized_new (FALSE, FALSE, sizeof (guint), G_N_ELEMENTS (delays));
      g_array_append_vals (shared->delays, delays, G_N_ELEMENTS (delays));
      g_once_init_leave (&made, 1);
    }
  return shared;
}

/* @own over @top: the keys @own sets, the rest @top's. @out borrows the
 * delays. */
static void
resolve_schedule (const MendSchedule *top,
                  const MendSchedule *own,
                  MendSchedule       *out)
{
  *out = *top;
  out->given = own->given;
  if (own->given & MEND_SCHEDULE_MAX_RETRIES)
    out->max_retries = own->max_retries;
  if (own->given & MEND_SCHEDULE_BASE_DELAY_MS)
    out->base_delay_ms = own->base_delay_ms;
  if (own->given & MEND_SCHEDULE_MAX_DELAY_MS)
    out->max_delay_ms = own->max_delay_ms;
  if (own->given & MEND_SCHEDULE_MULTIPLIER)
    out->multiplier = own->multiplier;
  if (own->given & MEND_SCHEDULE_JITTER)
    out->jitter = own->jitter;
  if (own->given & MEND_SCHEDULE_JITTER_MS)
    out->jitter_ms = own->jitter_ms;
  if (own->given & MEND_SCHEDULE_DELAYS)
    {
      out->delays = own->delays;
      /* Delays a reason gives are not cut by the policy's cap: they
       * are the longest it waits, unless it gives a cap of its own. */
      if ((own->given & MEND_SCHEDULE_MAX_DELAY_MS) == 0 && own->delays != NULL)
        for (guint i = 0; i < own->delays->len; i++)
          out->max_delay_ms = MAX (out->max_delay_ms, g_array_index (own->delays, guint, i));
    }
}

/* The schedule that applies to @failure, in @out: its reason's own over
 * the policy's, or the policy's. */
static const MendSchedule *
schedule_for (MendErrorPolicy *self,
              MendFailure     *failure,
              MendSchedule    *out)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);
  MendReason reason;

  if (failure == NULL)
    return &priv->s;

  reason = mend_error_policy_get_reason_for (self, failure);
  if ((guint) reason >= N_REASONS || priv->by_reason[reason] == NULL)
    return &priv->s;

  resolve_schedule (&priv->s, priv->by_reason[reason], out);
  return out;
}

guint
mend_error_policy_get_max_retries_for (MendErrorPolicy *self,
                                       MendFailure     *failure)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);
  MendSchedule resolved;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), 0);

  /* As mend_error_policy_delay_for (): a hint goes by the policy's. */
  if (failure != NULL && mend_failure_get_retry_after_ms (failure) >= 0)
    return priv->s.max_retries;
  return schedule_for (self, failure, &resolved)->max_retries;
}

MendErrorPolicy *
mend_error_policy_new_for_schedule (MendErrorPolicy *self,
                                    MendReason       reason,
                                    guint           *given)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);
  MendErrorPolicy *policy;
  MendErrorPolicyPrivate *ppriv;
  MendSchedule resolved;

  if ((guint) reason >= N_REASONS || priv->by_reason[reason] == NULL)
    return NULL;

  resolve_schedule (&priv->s, priv->by_reason[reason], &resolved);
  policy = mend_error_policy_new ();
  ppriv = mend_error_policy_get_instance_private (policy);
  g_clear_pointer (&ppriv->s.delays, g_array_unref);
  ppriv->s = resolved;
  ppriv->s.given = 0;
  if (ppriv->s.delays != NULL)
    ppriv->s.delays = g_array_copy (ppriv->s.delays);
  *given = resolved.given;
  return policy;
}

void
mend_error_policy_adopt_schedule (MendErrorPolicy *self,
                                  MendReason       reason,
                                  MendErrorPolicy *from,
                                  guint            given)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  g_return_if_fail ((guint) reason < N_REASONS);

  g_clear_pointer (&priv->by_reason[reason], schedule_free);
  if (from != NULL)
    {
      MendErrorPolicyPrivate *fpriv = mend_error_policy_get_instance_private (from);

      priv->by_reason[reason] = schedule_copy (&fpriv->s);
      priv->by_reason[reason]->given = given;
    }
}

void
mend_error_policy_clear_schedules (MendErrorPolicy *self,
                                   gboolean         defaults)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  clear_reason_schedules (priv);
  if (defaults)
    priv->by_reason[MEND_REASON_RATE_LIMIT] = default_rate_limit_schedule ();
}

static void
mend_error_policy_finalize (GObject *object)
{
  MendErrorPolicy *self = (MendErrorPolicy *) object;
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  g_clear_pointer (&priv->s.delays, g_array_unref);
  clear_reason_schedules (priv);
  g_clear_pointer (&priv->rand, g_rand_free);
  g_clear_pointer (&priv->rules, mend_rule_set_unref);

  G_OBJECT_CLASS (mend_error_policy_parent_class)->finalize (object);
}

static void
mend_error_policy_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  MendErrorPolicy *self = MEND_ERROR_POLICY (object);
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_MAX_RETRIES:
      g_value_set_uint (value, priv->s.max_retries);
      break;
    case PROP_BASE_DELAY_MS:
      g_value_set_uint (value, priv->s.base_delay_ms);
      break;
    case PROP_MAX_DELAY_MS:
      g_value_set_uint (value, priv->s.max_delay_ms);
      break;
    case PROP_MULTIPLIER:
      g_value_set_double (value, priv->s.multiplier);
      break;
    case PROP_JITTER:
      g_value_set_enum (value, priv->s.jitter);
      break;
    case PROP_JITTER_MS:
      g_value_set_uint (value, priv->s.jitter_ms);
      break;
    case PROP_DELAYS:
      g_value_take_variant (value, delays_to_variant (priv));
      break;
    case PROP_RETRY_AFTER_MAX_MS:
      g_value_set_uint (value, priv->retry_after_max_ms);
      break;
    case PROP_STAGGER_MS:
      g_value_set_uint (value, priv->stagger_ms);
      break;
    case PROP_RETRY_PARTIAL:
      g_value_set_boolean (value, priv->retry_partial);
      break;
    case PROP_CONTINUE_AT_RESET:
      g_value_set_boolean (value, priv->continue_at_reset);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_delays_variant (MendErrorPolicy *self,
                    GVariant        *variant)
{
  const guint32 *data;
  gsize n = 0;

  if (variant == NULL)
    {
      mend_error_policy_set_delays (self, NULL, 0);
      return;
    }

  data = g_variant_get_fixed_array (variant, &n, sizeof (guint32));
  mend_error_policy_set_delays (self, data, n);
}

static void
mend_error_policy_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  MendErrorPolicy *self = MEND_ERROR_POLICY (object);

  switch (prop_id)
    {
    case PROP_MAX_RETRIES:
      mend_error_policy_set_max_retries (self, g_value_get_uint (value));
      break;
    case PROP_BASE_DELAY_MS:
      mend_error_policy_set_base_delay_ms (self, g_value_get_uint (value));
      break;
    case PROP_MAX_DELAY_MS:
      mend_error_policy_set_max_delay_ms (self, g_value_get_uint (value));
      break;
    case PROP_MULTIPLIER:
      mend_error_policy_set_multiplier (self, g_value_get_double (value));
      break;
    case PROP_JITTER:
      mend_error_policy_set_jitter (self, g_value_get_enum (value));
      break;
    case PROP_JITTER_MS:
      mend_error_policy_set_jitter_ms (self, g_value_get_uint (value));
      break;
    case PROP_DELAYS:
      set_delays_variant (self, g_value_get_variant (value));
      break;
    case PROP_RETRY_AFTER_MAX_MS:
      mend_error_policy_set_retry_after_max_ms (self, g_value_get_uint (value));
      break;
    case PROP_STAGGER_MS:
      mend_error_policy_set_stagger_ms (self, g_value_get_uint (value));
      break;
    case PROP_RETRY_PARTIAL:
      mend_error_policy_set_retry_partial (self, g_value_get_boolean (value));
      break;
    case PROP_CONTINUE_AT_RESET:
      mend_error_policy_set_continue_at_reset (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_error_policy_class_init (MendErrorPolicyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_error_policy_finalize;
  object_class->get_property = mend_error_policy_get_property;
  object_class->set_property = mend_error_policy_set_property;

  klass->classify = mend_error_policy_real_classify;

  /**
   * MendErrorPolicy:max-retries:
   *
   * How many retries follow the first attempt; 4 means 5 attempts in all.
   */
  properties[PROP_MAX_RETRIES] =
    g_param_spec_uint ("max-retries", NULL, NULL,
                       0, MAX_RETRIES, 4,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:base-delay-ms:
   *
   * The delay before the first retry, before jitter, in milliseconds.
   */
  properties[PROP_BASE_DELAY_MS] =
    g_param_spec_uint ("base-delay-ms", NULL, NULL,
                       0, MAX_MS, 250,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:max-delay-ms:
   *
   * The cap on every scheduled delay, in milliseconds. A server's hint may
   * go above it, up to [property@Mend.ErrorPolicy:retry-after-max-ms].
   */
  properties[PROP_MAX_DELAY_MS] =
    g_param_spec_uint ("max-delay-ms", NULL, NULL,
                       0, MAX_MS, 4000,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:multiplier:
   *
   * How much each delay grows over the one before.
   */
  properties[PROP_MULTIPLIER] =
    g_param_spec_double ("multiplier", NULL, NULL,
                         1.0, MAX_MULTIPLIER, 2.0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:jitter:
   *
   * How delays are spread so that many clients do not retry at once.
   */
  properties[PROP_JITTER] =
    g_param_spec_enum ("jitter", NULL, NULL,
                       MEND_TYPE_JITTER, MEND_JITTER_ADDITIVE,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:jitter-ms:
   *
   * The most additive jitter, in milliseconds; also the most added to a
   * server's hint.
   */
  properties[PROP_JITTER_MS] =
    g_param_spec_uint ("jitter-ms", NULL, NULL,
                       0, MAX_MS, 250,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:delays:
   *
   * An explicit schedule (type `au`, milliseconds) that wins over the
   * exponential one when set: retry n waits the n-th entry, or the last one
   * past the end, jittered and capped like the exponential delays.
   */
  properties[PROP_DELAYS] =
    g_param_spec_variant ("delays", NULL, NULL,
                          G_VARIANT_TYPE ("au"), NULL,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:retry-after-max-ms:
   *
   * The longest server hint that is waited out, in milliseconds. A failure
   * whose hint is longer gives up at once and keeps the hint, so that the
   * app can say when to come back instead of hanging; a rate limit whose
   * hint is longer is classified %MEND_FAILURE_LIMIT. A `Retry-After` date
   * that only this machine's clock (no `Date` header to read it against)
   * puts beyond it is no hint at all: see
   * [ctor@Mend.Failure.new_from_http].
   */
  properties[PROP_RETRY_AFTER_MAX_MS] =
    g_param_spec_uint ("retry-after-max-ms", NULL, NULL,
                       0, MAX_MS, MEND_ERROR_POLICY_DEFAULT_RETRY_AFTER_MAX_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:stagger-ms:
   *
   * The spread between chats: each chat's waits are offset by a stable
   * amount in [0, stagger-ms) derived from its id, so that chats failing on
   * the same gateway blip do not all retry at the same instant.
   */
  properties[PROP_STAGGER_MS] =
    g_param_spec_uint ("stagger-ms", NULL, NULL,
                       0, MAX_MS, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:retry-partial:
   *
   * Whether a failure after output was seen may be retried. Off by default:
   * a retry would run tools again and duplicate text.
   */
  properties[PROP_RETRY_PARTIAL] =
    g_param_spec_boolean ("retry-partial", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendErrorPolicy:continue-at-reset:
   *
   * Whether a usage limit whose reset is known ([property@Mend.Failure:resets-at])
   * waits for it and tries once more, instead of giving up. Off by
   * default: a plan's window does not lift in seconds, and what runs at
   * the reset runs while the user may be away. On, the turn waits on a
   * [class@Mend.RetryWait] of reason %MEND_REASON_USAGE_LIMIT whose
   * [property@Mend.RetryWait:next-at] is the reset plus up to a minute of
   * jitter, following the wall clock (a machine asleep past the reset
   * tries when it wakes); Stop ends it as any wait. Still limited at the
   * reset, it waits for the next one, at most %MEND_ERROR_POLICY_MAX_RESET_WAITS
   * times in a turn. A billing limit never waits.
   */
  properties[PROP_CONTINUE_AT_RESET] =
    g_param_spec_boolean ("continue-at-reset", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_error_policy_init (MendErrorPolicy *self)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  priv->s.max_retries = 4;
  priv->s.base_delay_ms = 250;
  priv->s.max_delay_ms = 4000;
  priv->s.multiplier = 2.0;
  priv->s.jitter = MEND_JITTER_ADDITIVE;
  priv->s.jitter_ms = 250;
  priv->retry_after_max_ms = MEND_ERROR_POLICY_DEFAULT_RETRY_AFTER_MAX_MS;
  priv->by_reason[MEND_REASON_RATE_LIMIT] = default_rate_limit_schedule ();
}

/* The random source, made when a delay is first drawn: a chat that never
 * waits keeps none (a Mersenne Twister's state is 2.5 kB, and it reads
 * /dev/urandom when made). */
static GRand *
get_rand (MendErrorPolicyPrivate *priv)
{
  if (priv->rand == NULL)
    priv->rand = g_rand_new ();
  return priv->rand;
}

/**
 * mend_error_policy_new:
 *
 * Creates a policy with the turn defaults: 4 retries, exponential from
 * 250 ms ×2 capped at 4000 ms, 0–250 ms additive jitter, server hints up to
 * 60 s.
 *
 * Returns: (transfer full): a new policy
 */
MendErrorPolicy *
mend_error_policy_new (void)
{
  return g_object_new (MEND_TYPE_ERROR_POLICY, NULL);
}

void
mend_error_policy_apply_resume_preset (MendErrorPolicy *self)
{
  static const guint resume_delays[] = { 20000, 45000, 90000, 180000 };

  g_object_freeze_notify (G_OBJECT (self));
  mend_error_policy_set_max_retries (self, G_N_ELEMENTS (resume_delays));
  mend_error_policy_set_delays (self, resume_delays, G_N_ELEMENTS (resume_delays));
  mend_error_policy_set_base_delay_ms (self, resume_delays[0]);
  mend_error_policy_set_max_delay_ms (self, 3600000);
  mend_error_policy_set_retry_after_max_ms (self, 3600000);
  mend_error_policy_set_jitter (self, MEND_JITTER_NONE);
  mend_error_policy_set_stagger_ms (self, 5000);
  /* The resume schedule is long already, for every reason. */
  mend_error_policy_clear_schedules (self, FALSE);
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * mend_error_policy_new_for_resume:
 *
 * Creates a policy with the subagent-resume defaults: the schedule 20 s,
 * 45 s, 90 s, 180 s (4 retries), each at most an hour, server hints up to
 * an hour, no jitter and a per-chat stagger of up to 5 s.
 *
 * Returns: (transfer full): a new policy
 */
MendErrorPolicy *
mend_error_policy_new_for_resume (void)
{
  MendErrorPolicy *self = mend_error_policy_new ();

  mend_error_policy_apply_resume_preset (self);
  return self;
}

/**
 * mend_error_policy_classify: (virtual classify)
 * @self: a policy
 * @failure: a failure
 *
 * Decides whether @failure may be retried. The default: the user's Stop is
 * %MEND_FAILURE_STOPPED; a usage limit, and a rate limit whose server hint
 * is longer than [property@Mend.ErrorPolicy:retry-after-max-ms] (a per-day
 * limit that resets in 28 minutes, under the turn defaults), are
 * %MEND_FAILURE_LIMIT; a refused key or permission is
 * %MEND_FAILURE_PERMANENT whatever a header says; a failure after output was
 * seen is %MEND_FAILURE_PERMANENT unless
 * [property@Mend.ErrorPolicy:retry-partial]; the server's `x-should-retry`
 * decides when given; capacity, rate-limit, transport, timeout, empty and
 * server errors are %MEND_FAILURE_TRANSIENT; everything else is permanent.
 * The reason read is [method@Mend.ErrorPolicy.get_reason_for]'s: the
 * failure's own, or the one a rule the app added gives it.
 *
 * Returns: the kind of the failure
 */
MendFailureKind
mend_error_policy_classify (MendErrorPolicy *self,
                            MendFailure     *failure)
{
  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), MEND_FAILURE_PERMANENT);
  g_return_val_if_fail (MEND_IS_FAILURE (failure), MEND_FAILURE_PERMANENT);

  return MEND_ERROR_POLICY_GET_CLASS (self)->classify (self, failure);
}

static double
raw_delay (const MendSchedule *sched,
           guint               retry)
{
  double raw;

  g_assert (retry >= 1);

  if (sched->delays != NULL && sched->delays->len > 0)
    return g_array_index (sched->delays, guint, MIN (retry, sched->delays->len) - 1);

  /* 0 × ∞ would be NaN, and NaN slips through MIN (): a zero base stays
   * zero, and an exponential past what a double holds is simply huge. */
  if (sched->base_delay_ms == 0)
    return 0;
  raw = sched->base_delay_ms * pow (sched->multiplier, (double) retry - 1);
  return isfinite (raw) ? raw : G_MAXDOUBLE;
}

static double
random_between (MendErrorPolicyPrivate *priv,
                double                  low,
                double                  high)
{
  if (high <= low)
    return low;
  return g_rand_double_range (get_rand (priv), low, high);
}

static gint64
scheduled_delay (MendErrorPolicyPrivate *priv,
                 const MendSchedule     *sched,
                 guint                   retry)
{
  double cap = sched->max_delay_ms;
  double raw = raw_delay (sched, retry);
  double delay;

  switch (sched->jitter)
    {
    case MEND_JITTER_ADDITIVE:
      delay = raw + (double) g_rand_int_range (get_rand (priv), 0, sched->jitter_ms + 1);
      delay = MIN (cap, delay);
      break;
    case MEND_JITTER_FULL:
      delay = random_between (priv, 0, MIN (cap, raw));
      break;
    case MEND_JITTER_EQUAL:
      delay = MIN (cap, raw) / 2;
      delay += random_between (priv, 0, delay);
      break;
    case MEND_JITTER_DECORRELATED:
      {
        /* The AWS formula takes the previous sleep; a policy keeps no state
         * between turns, so the previous retry's undithered delay stands in. */
        double base = MIN (cap, sched->base_delay_ms);
        double prev = retry > 1 ? MIN (cap, raw_delay (sched, retry - 1)) : base;

        delay = random_between (priv, base, MAX (base, prev * 3));
        delay = MIN (cap, delay);
      }
      break;
    case MEND_JITTER_NONE:
    default:
      delay = MIN (cap, raw);
      break;
    }

  return (gint64) llround (delay);
}

/**
 * mend_error_policy_delay_for:
 * @self: a policy
 * @retry: the number of the retry, from 1
 * @failure: (nullable): the failure that the retry follows
 * @server_hint: (out) (optional): set to %TRUE when the server's hint set
 *   the delay
 *
 * Computes how long to wait before retry number @retry. With
 * %MEND_JITTER_NONE the turn defaults give 250, 500, 1000 and 2000 ms.
 *
 * When @failure carries a server hint ([property@Mend.Failure:retry-after-ms])
 * the delay is the larger of the hint plus positive jitter and the scheduled
 * delay, so never below the schedule. A hint above
 * [property@Mend.ErrorPolicy:retry-after-max-ms] means giving up now: the
 * result is -1.
 *
 * Returns: the delay in milliseconds, or -1 to give up
 */
gint64
mend_error_policy_delay_for (MendErrorPolicy *self,
                             guint            retry,
                             MendFailure     *failure,
                             gboolean        *server_hint)
{
  MendErrorPolicyPrivate *priv;
  const MendSchedule *schedule;
  MendSchedule resolved;
  gint64 delay;
  gint64 hint = -1;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), -1);
  g_return_val_if_fail (failure == NULL || MEND_IS_FAILURE (failure), -1);

  priv = mend_error_policy_get_instance_private (self);

  if (server_hint != NULL)
    *server_hint = FALSE;

  retry = MAX (retry, 1);
  if (failure != NULL)
    hint = mend_failure_get_retry_after_ms (failure);
  /* A reason's own schedule is for the failures that give no hint: with
   * one, the hint decides, over the policy's schedule. */
  schedule = hint >= 0 ? &priv->s : schedule_for (self, failure, &resolved);
  delay = scheduled_delay (priv, schedule, retry);

  if (hint >= 0)
    {
      gint64 jitter = 0;

      if (hint > priv->retry_after_max_ms)
        {
          if (server_hint != NULL)
            *server_hint = TRUE;
          return -1;
        }

      if (schedule->jitter != MEND_JITTER_NONE)
        jitter = g_rand_int_range (get_rand (priv), 0, schedule->jitter_ms + 1);

      if (hint + jitter >= delay)
        {
          delay = hint + jitter;
          if (server_hint != NULL)
            *server_hint = TRUE;
        }
    }

  return delay;
}

guint
mend_error_policy_reset_jitter (MendErrorPolicy *self)
{
  MendErrorPolicyPrivate *priv = mend_error_policy_get_instance_private (self);

  if (priv->s.jitter == MEND_JITTER_NONE)
    return 0;
  return (guint) g_rand_int_range (get_rand (priv), 0, 60001);
}

/* The per-chat offset, in milliseconds. */
guint
mend_error_policy_get_stagger_for (MendErrorPolicy *self,
                                   const char      *key)
{
  MendErrorPolicyPrivate *priv;
  guint32 hash = 2166136261u;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), 0);

  priv = mend_error_policy_get_instance_private (self);
  if (priv->stagger_ms == 0 || key == NULL)
    return 0;

  /* FNV-1a: stable across processes and versions, unlike a seeded hash. */
  for (const guchar *p = (const guchar *) key; *p != '\0'; p++)
    {
      hash ^= *p;
      hash *= 16777619u;
    }

  return hash % priv->stagger_ms;
}

void
mend_error_policy_set_seed (MendErrorPolicy *self,
                            guint32          seed)
{
  MendErrorPolicyPrivate *priv;

  g_return_if_fail (MEND_IS_ERROR_POLICY (self));

  priv = mend_error_policy_get_instance_private (self);
  if (priv->rand == NULL)
    priv->rand = g_rand_new_with_seed (seed);
  else
    g_rand_set_seed (priv->rand, seed);
}

/* Setters: each notifies only on change. */
#define DEFINE_UINT_ACCESSORS(name, field, PROP)                               \
guint                                                                          \
mend_error_policy_get_##name (MendErrorPolicy *self)                           \
{                                                                              \
  MendErrorPolicyPrivate *priv;                                                \
  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), 0);                       \
  priv = mend_error_policy_get_instance_private (self);                        \
  return priv->field;                                                          \
}                                                                              \
void                                                                           \
mend_error_policy_set_##name (MendErrorPolicy *self,                           \
                              guint            value)                          \
{                                                                              \
  MendErrorPolicyPrivate *priv;                                                \
  GParamSpecUInt *spec = G_PARAM_SPEC_UINT (properties[PROP]);                 \
  g_return_if_fail (MEND_IS_ERROR_POLICY (self));                              \
  g_return_if_fail (value <= spec->maximum);                                   \
  priv = mend_error_policy_get_instance_private (self);                        \
  if (priv->field != value)                                                    \
    {                                                                          \
      priv->field = value;                                                     \
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP]);            \
    }                                                                          \
}

/**
 * mend_error_policy_get_max_retries:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:max-retries].
 *
 * Returns: the number of retries after the first attempt
 */
/**
 * mend_error_policy_set_max_retries:
 * @self: a policy
 * @max_retries: retries after the first attempt, at most 1000
 *
 * Sets [property@Mend.ErrorPolicy:max-retries].
 */
DEFINE_UINT_ACCESSORS (max_retries, s.max_retries, PROP_MAX_RETRIES)

/**
 * mend_error_policy_get_base_delay_ms:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:base-delay-ms].
 *
 * Returns: the first delay in milliseconds
 */
/**
 * mend_error_policy_set_base_delay_ms:
 * @self: a policy
 * @base_delay_ms: the first delay in milliseconds, at most a day
 *
 * Sets [property@Mend.ErrorPolicy:base-delay-ms].
 */
DEFINE_UINT_ACCESSORS (base_delay_ms, s.base_delay_ms, PROP_BASE_DELAY_MS)

/**
 * mend_error_policy_get_max_delay_ms:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:max-delay-ms].
 *
 * Returns: the cap in milliseconds
 */
/**
 * mend_error_policy_set_max_delay_ms:
 * @self: a policy
 * @max_delay_ms: the cap in milliseconds, at most a day
 *
 * Sets [property@Mend.ErrorPolicy:max-delay-ms].
 */
DEFINE_UINT_ACCESSORS (max_delay_ms, s.max_delay_ms, PROP_MAX_DELAY_MS)

/**
 * mend_error_policy_get_jitter_ms:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:jitter-ms].
 *
 * Returns: the most jitter in milliseconds
 */
/**
 * mend_error_policy_set_jitter_ms:
 * @self: a policy
 * @jitter_ms: the most jitter in milliseconds
 *
 * Sets [property@Mend.ErrorPolicy:jitter-ms].
 */
DEFINE_UINT_ACCESSORS (jitter_ms, s.jitter_ms, PROP_JITTER_MS)

/**
 * mend_error_policy_get_retry_after_max_ms:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:retry-after-max-ms].
 *
 * Returns: the longest server hint waited out, in milliseconds
 */
/**
 * mend_error_policy_set_retry_after_max_ms:
 * @self: a policy
 * @retry_after_max_ms: the longest server hint to wait out, in milliseconds
 *
 * Sets [property@Mend.ErrorPolicy:retry-after-max-ms].
 */
DEFINE_UINT_ACCESSORS (retry_after_max_ms, retry_after_max_ms, PROP_RETRY_AFTER_MAX_MS)

/**
 * mend_error_policy_get_stagger_ms:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:stagger-ms].
 *
 * Returns: the per-chat spread in milliseconds
 */
/**
 * mend_error_policy_set_stagger_ms:
 * @self: a policy
 * @stagger_ms: the per-chat spread in milliseconds, 0 for none
 *
 * Sets [property@Mend.ErrorPolicy:stagger-ms].
 */
DEFINE_UINT_ACCESSORS (stagger_ms, stagger_ms, PROP_STAGGER_MS)

/**
 * mend_error_policy_get_multiplier:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:multiplier].
 *
 * Returns: the growth factor
 */
double
mend_error_policy_get_multiplier (MendErrorPolicy *self)
{
  MendErrorPolicyPrivate *priv;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), 0);

  priv = mend_error_policy_get_instance_private (self);
  return priv->s.multiplier;
}

/**
 * mend_error_policy_set_multiplier:
 * @self: a policy
 * @multiplier: the growth factor, from 1 to 100
 *
 * Sets [property@Mend.ErrorPolicy:multiplier].
 */
void
mend_error_policy_set_multiplier (MendErrorPolicy *self,
                                  double           multiplier)
{
  MendErrorPolicyPrivate *priv;

  g_return_if_fail (MEND_IS_ERROR_POLICY (self));
  g_return_if_fail (isfinite (multiplier) && multiplier >= 1.0 && multiplier <= MAX_MULTIPLIER);

  priv = mend_error_policy_get_instance_private (self);
  if (priv->s.multiplier != multiplier)
    {
      priv->s.multiplier = multiplier;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MULTIPLIER]);
    }
}

/**
 * mend_error_policy_get_jitter:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:jitter].
 *
 * Returns: the jitter kind
 */
MendJitter
mend_error_policy_get_jitter (MendErrorPolicy *self)
{
  MendErrorPolicyPrivate *priv;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), MEND_JITTER_NONE);

  priv = mend_error_policy_get_instance_private (self);
  return priv->s.jitter;
}

/**
 * mend_error_policy_set_jitter:
 * @self: a policy
 * @jitter: the jitter kind
 *
 * Sets [property@Mend.ErrorPolicy:jitter].
 */
void
mend_error_policy_set_jitter (MendErrorPolicy *self,
                              MendJitter       jitter)
{
  MendErrorPolicyPrivate *priv;

  g_return_if_fail (MEND_IS_ERROR_POLICY (self));
  g_return_if_fail (jitter <= MEND_JITTER_DECORRELATED);

  priv = mend_error_policy_get_instance_private (self);
  if (priv->s.jitter != jitter)
    {
      priv->s.jitter = jitter;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_JITTER]);
    }
}

/**
 * mend_error_policy_get_delays:
 * @self: a policy
 * @n_delays: (out): the number of delays
 *
 * Gets the explicit schedule, [property@Mend.ErrorPolicy:delays].
 *
 * Returns: (array length=n_delays) (nullable) (transfer none): the delays in
 *   milliseconds, or %NULL when the exponential schedule is used
 */
const guint *
mend_error_policy_get_delays (MendErrorPolicy *self,
                              gsize           *n_delays)
{
  MendErrorPolicyPrivate *priv;

  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), NULL);
  g_return_val_if_fail (n_delays != NULL, NULL);

  priv = mend_error_policy_get_instance_private (self);
  if (priv->s.delays == NULL)
    {
      *n_delays = 0;
      return NULL;
    }

  *n_delays = priv->s.delays->len;
  return (const guint *) (gpointer) priv->s.delays->data;
}

/**
 * mend_error_policy_set_delays:
 * @self: a policy
 * @delays: (array length=n_delays) (nullable): delays in milliseconds, each
 *   at most a day, or %NULL for the exponential schedule
 * @n_delays: the number of delays, at most 1000
 *
 * Sets the explicit schedule, [property@Mend.ErrorPolicy:delays].
 */
void
mend_error_policy_set_delays (MendErrorPolicy *self,
                              const guint     *delays,
                              gsize            n_delays)
{
  MendErrorPolicyPrivate *priv;

  g_return_if_fail (MEND_IS_ERROR_POLICY (self));
  g_return_if_fail (n_delays == 0 || delays != NULL);
  g_return_if_fail (n_delays <= MAX_RETRIES);

  for (gsize i = 0; i < n_delays; i++)
    g_return_if_fail (delays[i] <= MAX_MS);

  priv = mend_error_policy_get_instance_private (self);

  if (n_delays == 0)
    delays = NULL;

  if (delays == NULL && priv->s.delays == NULL)
    return;
  if (delays != NULL && priv->s.delays != NULL && priv->s.delays->len == n_delays &&
      memcmp (priv->s.delays->data, delays, n_delays * sizeof (guint)) == 0)
    return;

  g_clear_pointer (&priv->s.delays, g_array_unref);
  if (delays != NULL)
    {
      priv->s.delays = g_array_sized_new (FALSE, FALSE, sizeof (guint), n_delays);
      g_array_append_vals (priv->s.delays, delays, n_delays);
    }

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DELAYS]);
}

/* Boolean accessors: each setter notifies only on change. */
#define DEFINE_BOOL_ACCESSORS(name, PROP)                                      \
gboolean                                                                       \
mend_error_policy_get_##name (MendErrorPolicy *self)                           \
{                                                                              \
  MendErrorPolicyPrivate *priv;                                                \
  g_return_val_if_fail (MEND_IS_ERROR_POLICY (self), FALSE);                   \
  priv = mend_error_policy_get_instance_private (self);                        \
  return priv->name;                                                           \
}                                                                              \
void                                                                           \
mend_error_policy_set_##name (MendErrorPolicy *self,                           \
                              gboolean         value)                          \
{                                                                              \
  MendErrorPolicyPrivate *priv;                                                \
  g_return_if_fail (MEND_IS_ERROR_POLICY (self));                              \
  priv = mend_error_policy_get_instance_private (self);                        \
  value = !!value;                                                             \
  if (priv->name != value)                                                     \
    {                                                                          \
      priv->name = value;                                                      \
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP]);            \
    }                                                                          \
}

/**
 * mend_error_policy_get_retry_partial:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:retry-partial].
 *
 * Returns: whether failures after output are retried
 */
/**
 * mend_error_policy_set_retry_partial:
 * @self: a policy
 * @retry_partial: whether failures after output are retried
 *
 * Sets [property@Mend.ErrorPolicy:retry-partial].
 */
DEFINE_BOOL_ACCESSORS (retry_partial, PROP_RETRY_PARTIAL)

/**
 * mend_error_policy_get_continue_at_reset:
 * @self: a policy
 *
 * Gets [property@Mend.ErrorPolicy:continue-at-reset].
 *
 * Returns: whether a usage limit waits for its reset
 */
/**
 * mend_error_policy_set_continue_at_reset:
 * @self: a policy
 * @continue_at_reset: whether a usage limit waits for its reset
 *
 * Sets [property@Mend.ErrorPolicy:continue-at-reset].
 */
DEFINE_BOOL_ACCESSORS (continue_at_reset, PROP_CONTINUE_AT_RESET)
