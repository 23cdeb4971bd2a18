/* mend-verdict.c — MendVerdict: what the policy made of one failure in its context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-verdict-private.h"

/**
 * MendVerdict:
 *
 * What a [class@Mend.Turn]'s policy decided about one failed attempt.
 *
 * A [class@Mend.Failure] holds the facts of what went wrong, fixed when it
 * was made; the verdict is the turn's: the kind its
 * [class@Mend.ErrorPolicy] gave the failure in the turn's context — the
 * attempt, whether output was seen before it failed — and how long the
 * turn waits before the next attempt. The turn keeps the latest as
 * [property@Mend.Turn:last-verdict]. A verdict never changes.
 *
 * Example:
 *
 * ```c
 * static void
 * on_turn_finished (MendChat *chat, MendTurn *turn, gpointer data)
 * {
 *   MendVerdict *verdict = mend_turn_get_last_verdict (turn);
 *
 *   if (verdict != NULL && mend_verdict_get_kind (verdict) != MEND_FAILURE_TRANSIENT)
 *     g_print ("attempt %u was not retried: %s (%s)\n",
 *              mend_verdict_get_attempt (verdict),
 *              mend_failure_get_message (mend_verdict_get_failure (verdict)),
 *              mend_failure_kind_to_nick (mend_verdict_get_kind (verdict)));
 * }
 * ```
 */

struct _MendVerdict
{
  GObject          parent_instance;

  MendFailure     *failure;
  MendFailureKind  kind;
  guint            attempt;
  gboolean         partial;
  gint64           delay_ms;
  gboolean         server_hint;
};

enum {
  PROP_0,
  PROP_FAILURE,
  PROP_KIND,
  PROP_ATTEMPT,
  PROP_PARTIAL,
  PROP_DELAY_MS,
  PROP_SERVER_HINT,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendVerdict, mend_verdict, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

MendFailureKind
mend_verdict_classify (MendErrorPolicy  *policy,
                       MendFailure      *failure,
                       gboolean          output_seen,
                       MendFailure     **judged)
{
  MendReason reason;
  g_autofree char *rule = NULL;

  g_assert (MEND_IS_ERROR_POLICY (policy));
  g_assert (MEND_IS_FAILURE (failure));
  g_assert (judged != NULL && *judged == NULL);

  /* "Output was seen" belongs to the attempt: the policy reads it from a
   * failure that says so, as it always has, and the app's stays as made. */
  if (output_seen && !mend_failure_get_partial (failure))
    *judged = mend_failure_new_partial_copy (failure);
  else
    *judged = g_object_ref (failure);

  /* A rule the app added names the reason the turn's waits and records
   * carry. */
  if (mend_error_policy_judge (policy, *judged, &reason, &rule) &&
      reason != mend_failure_get_reason (*judged))
    {
      MendFailure *ruled = mend_failure_new_judged_copy (*judged, reason, rule);

      g_object_unref (*judged);
      *judged = ruled;
    }

  return mend_error_policy_classify (policy, *judged);
}

MendVerdict *
mend_verdict_new (MendFailure     *failure,
                  MendFailureKind  kind,
                  guint            attempt,
                  gint64           delay_ms,
                  gboolean         server_hint)
{
  g_assert (failure == NULL || MEND_IS_FAILURE (failure));

  return g_object_new (MEND_TYPE_VERDICT,
                       "failure", failure,
                       "kind", kind,
                       "attempt", attempt,
                       "partial", failure != NULL && mend_failure_get_partial (failure),
                       "delay-ms", delay_ms,
                       "server-hint", server_hint,
                       NULL);
}

MendVerdict *
mend_verdict_decide (MendErrorPolicy          *policy,
                     MendFailure              *judged,
                     MendFailureKind           kind,
                     const MendAttemptContext *context,
                     MendVerdictStep          *step)
{
  gboolean server_hint = FALSE;
  gint64 delay = -1;

  g_assert (MEND_IS_ERROR_POLICY (policy));
  g_assert (MEND_IS_FAILURE (judged));
  g_assert (context->attempt >= 1);

  switch (kind)
    {
    case MEND_FAILURE_TRANSIENT:
      /* A failed probe is the gate's, not the turn's: the attempt is not
       * spent, and runs again when the gate next checks. */
      if (context->hold_ms >= 0)
        {
          *step = MEND_VERDICT_HOLD;
          delay = context->hold_ms;
        }
      else if (context->attempt > context->max_retries)
        *step = MEND_VERDICT_EXHAUSTED;
      else
        {
          delay = mend_error_policy_delay_for (policy, context->attempt, judged, &server_hint);
          if (delay < 0)
            /* The server asked for a wait longer than the policy allows. */
            *step = MEND_VERDICT_GIVE_UP;
          else
            {
              *step = MEND_VERDICT_RETRY;
              delay += context->delay_offset_ms;
            }
        }
      break;
    case MEND_FAILURE_STOPPED:
      *step = MEND_VERDICT_STOP;
      break;
    case MEND_FAILURE_LIMIT:
      /* A usage limit whose reset is known, with continue-at-reset on:
       * a wait for it, up to a minute late so that the chats of one
       * account do not all go at once; never a billing limit, and never
       * more than a few times in a turn. */
      if (mend_error_policy_get_continue_at_reset (policy) &&
          mend_failure_get_reason (judged) == MEND_REASON_USAGE_LIMIT &&
          mend_failure_get_resets_at (judged) > 0 && context->now_us > 0 &&
          context->reset_waits < MEND_ERROR_POLICY_MAX_RESET_WAITS)
        {
          gint64 until = MAX (0, mend_failure_get_resets_at (judged) - context->now_us) / 1000;

          *step = MEND_VERDICT_AT_RESET;
          delay = until + mend_error_policy_reset_jitter (policy);
        }
      else
        *step = MEND_VERDICT_GIVE_UP;
      break;
    case MEND_FAILURE_PERMANENT:
    default:
      *step = MEND_VERDICT_GIVE_UP;
      break;
    }

  return mend_verdict_new (judged, kind, context->attempt, delay, server_hint);
}

MendVerdict *
mend_verdict_reach (MendErrorPolicy *policy,
                    MendFailure     *failure,
                    int              kind,
                    guint            attempt,
                    const char      *stagger_key,
                    gint64           now_us,
                    MendVerdictStep *step)
{
  g_autoptr(MendFailure) judged = NULL;
  MendAttemptContext context = {
    .attempt = attempt,
    .max_retries = mend_error_policy_get_max_retries (policy),
    .delay_offset_ms = mend_error_policy_get_stagger_for (policy, stagger_key),
    .hold_ms = -1,
    .now_us = now_us,
  };

  if (kind == -1)
    kind = mend_verdict_classify (policy, failure, FALSE, &judged);
  else
    judged = g_object_ref (failure);
  /* A reason with a schedule of its own has its own number of retries. */
  context.max_retries = mend_error_policy_get_max_retries_for (policy, judged);

  return mend_verdict_decide (policy, judged, kind, &context, step);
}

static void
mend_verdict_finalize (GObject *object)
{
  MendVerdict *self = (MendVerdict *) object;

  g_clear_object (&self->failure);

  G_OBJECT_CLASS (mend_verdict_parent_class)->finalize (object);
}

static void
mend_verdict_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  MendVerdict *self = MEND_VERDICT (object);

  switch (prop_id)
    {
    case PROP_FAILURE:
      g_value_set_object (value, self->failure);
      break;
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case PROP_ATTEMPT:
      g_value_set_uint (value, self->attempt);
      break;
    case PROP_PARTIAL:
      g_value_set_boolean (value, self->partial);
      break;
    case PROP_DELAY_MS:
      g_value_set_int64 (value, self->delay_ms);
      break;
    case PROP_SERVER_HINT:
      g_value_set_boolean (value, self->server_hint);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Construct-only: a verdict is given once. */
static void
mend_verdict_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  MendVerdict *self = MEND_VERDICT (object);

  switch (prop_id)
    {
    case PROP_FAILURE:
      g_assert (self->failure == NULL);
      self->failure = g_value_dup_object (value);
      break;
    case PROP_KIND:
      self->kind = g_value_get_enum (value);
      break;
    case PROP_ATTEMPT:
      self->attempt = g_value_get_uint (value);
      break;
    case PROP_PARTIAL:
      self->partial = g_value_get_boolean (value);
      break;
    case PROP_DELAY_MS:
      self->delay_ms = g_value_get_int64 (value);
      break;
    case PROP_SERVER_HINT:
      self->server_hint = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_verdict_class_init (MendVerdictClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_verdict_finalize;
  object_class->get_property = mend_verdict_get_property;
  object_class->set_property = mend_verdict_set_property;

  /**
   * MendVerdict:failure:
   *
   * The failure judged. After output was seen it is a copy of the failed
   * attempt's failure marked [property@Mend.Failure:partial]; the
   * attempt's own failure is never changed.
   */
  properties[PROP_FAILURE] =
    g_param_spec_object ("failure", NULL, NULL,
                         MEND_TYPE_FAILURE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendVerdict:kind:
   *
   * The kind the turn's policy gave the failure in the turn's context: a
   * transient failure is retried while retries remain.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       MEND_TYPE_FAILURE_KIND, MEND_FAILURE_PERMANENT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendVerdict:attempt:
   *
   * The attempt that failed, from 1.
   */
  properties[PROP_ATTEMPT] =
    g_param_spec_uint ("attempt", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendVerdict:partial:
   *
   * Whether output was seen before the attempt failed. Such a failure is
   * not retried unless the policy's
   * [property@Mend.ErrorPolicy:retry-partial] says so.
   */
  properties[PROP_PARTIAL] =
    g_param_spec_boolean ("partial", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendVerdict:delay-ms:
   *
   * How long the turn waits before its next attempt, in milliseconds (the
   * chat's stagger, or a gate's hold after a failed probe, included), or
   * -1 when no attempt follows: the failure is not transient, the retries
   * are used up, or the server asked for a wait beyond
   * [property@Mend.ErrorPolicy:retry-after-max-ms].
   */
  properties[PROP_DELAY_MS] =
    g_param_spec_int64 ("delay-ms", NULL, NULL,
                        -1, G_MAXINT64, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendVerdict:server-hint:
   *
   * Whether the server's hint ([property@Mend.Failure:retry-after-ms]) set
   * the delay, or, with a delay of -1, was too long to wait for.
   */
  properties[PROP_SERVER_HINT] =
    g_param_spec_boolean ("server-hint", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_verdict_init (MendVerdict *self)
{
  self->kind = MEND_FAILURE_PERMANENT;
  self->delay_ms = -1;
}

/**
 * mend_verdict_get_failure:
 * @self: a verdict
 *
 * Gets the failure judged: see [property@Mend.Verdict:failure].
 *
 * Returns: (nullable) (transfer none): the failure
 */
MendFailure *
mend_verdict_get_failure (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), NULL);

  return self->failure;
}

/**
 * mend_verdict_get_kind:
 * @self: a verdict
 *
 * Gets the kind the turn's policy gave the failure.
 *
 * Returns: the kind
 */
MendFailureKind
mend_verdict_get_kind (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), MEND_FAILURE_PERMANENT);

  return self->kind;
}

/**
 * mend_verdict_get_attempt:
 * @self: a verdict
 *
 * Gets the attempt that failed.
 *
 * Returns: the attempt, from 1
 */
guint
mend_verdict_get_attempt (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), 0);

  return self->attempt;
}

/**
 * mend_verdict_get_partial:
 * @self: a verdict
 *
 * Gets whether output was seen before the attempt failed.
 *
 * Returns: %TRUE if the failure came after output
 */
gboolean
mend_verdict_get_partial (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), FALSE);

  return self->partial;
}

/**
 * mend_verdict_get_delay_ms:
 * @self: a verdict
 *
 * Gets how long the turn waits before its next attempt: see
 * [property@Mend.Verdict:delay-ms].
 *
 * Returns: the delay in milliseconds, or -1 when no attempt follows
 */
gint64
mend_verdict_get_delay_ms (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), -1);

  return self->delay_ms;
}

/**
 * mend_verdict_get_server_hint:
 * @self: a verdict
 *
 * Gets whether the server's hint set the delay: see
 * [property@Mend.Verdict:server-hint].
 *
 * Returns: %TRUE if the server's hint decided
 */
gboolean
mend_verdict_get_server_hint (MendVerdict *self)
{
  g_return_val_if_fail (MEND_IS_VERDICT (self), FALSE);

  return self->server_hint;
}
