/* mend-retry-wait.c — MendRetryWait: one wait before a retry, as the UI draws it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-failure.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-countdown-private.h"
#include "mend-retry-wait-private.h"

/**
 * MendRetryWait:
 *
 * One scheduled retry, as the UI draws it: "Retrying in 4 s (retry 2 of 4)".
 *
 * A wait starts counting when it is made, on its [class@Mend.Clock], and
 * ends once: it fires when its delay has passed or on
 * [method@Mend.RetryWait.fire_now] ("Retry now"), or it is cancelled.
 * Firing, cancelling and `fire_now()` are idempotent: a wait fires at most
 * once, and a cancelled wait never fires.
 *
 * [property@Mend.RetryWait:attempt] is the number of the retry that runs
 * when the wait fires, from 1, and [property@Mend.RetryWait:max-retries]
 * the policy's [property@Mend.ErrorPolicy:max-retries]: the same meaning
 * for turns and subagents. Times are wall-clock microseconds since the
 * Unix epoch.
 *
 * Pending waits cost one timer each in their clock's ordered set, and no
 * wakeup until the earliest deadline.
 *
 * Example:
 *
 * ```c
 * static void
 * on_remaining (MendRetryWait *wait, GParamSpec *pspec, GtkLabel *banner)
 * {
 *   g_autofree char *text = mend_retry_wait_describe (wait);  // "Retrying in 4 s (retry 2 of 4)"
 *
 *   gtk_label_set_text (banner, text);
 * }
 *
 * static void
 * on_waiting (MendTurn *turn, MendRetryWait *wait, GtkLabel *banner)
 * {
 *   g_signal_connect_object (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining), banner, 0);
 *   on_remaining (wait, NULL, banner);
 *   // A "Retry now" button calls mend_retry_wait_fire_now (wait).
 * }
 * ```
 */

struct _MendRetryWait
{
  GObject             parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  MendClock          *clock;
  MendFailure        *failure;
  guint64             delay_ms;
  guint               attempt;
  guint               max_retries;
  MendReason          reason;
  gboolean            server_hint;

  gint64              started_at;
  gint64              next_at;
  gint64              deadline_us;  /* on the clock's monotonic time */
  MendRetryWaitState  state;
  gboolean            held;
  gboolean            at_reset;     /* on the wall clock, until a limit's reset */
  MendGateState       gate_state;
  MendCountdownEntry *countdown;    /* its deadline and countdown, while pending */
  guint               shown_seconds;
};

enum {
  PROP_0,
  PROP_CLOCK,
  PROP_ATTEMPT,
  PROP_MAX_RETRIES,
  PROP_REASON,
  PROP_FAILURE,
  PROP_DELAY_MS,
  PROP_STARTED_AT,
  PROP_NEXT_AT,
  PROP_SERVER_HINT,
  PROP_STATE,
  PROP_REMAINING_SECONDS,
  PROP_HELD,
  PROP_AT_RESET,
  PROP_GATE_STATE,
  PROP_DESCRIPTION,
  N_PROPS
};

enum {
  FIRED,
  CANCELLED,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendRetryWait, mend_retry_wait, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* Whole seconds as a countdown shows them: to the nearest second, so
 * that a server's "Retry-After: 7" with a little jitter reads 7, and at
 * least 1 while anything is left. */
static guint
whole_seconds (gint64 ms)
{
  if (ms <= 0)
    return 0;

  return (guint) MIN (G_MAXUINT, MAX (1, (ms + 500) / 1000));
}

static void stop_counting (MendRetryWait *self);

static gint64
remaining_ms (MendRetryWait *self)
{
  gint64 left;

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return 0;

  if (self->at_reset)
    left = self->next_at - mend_clock_get_real_time (self->clock);
  else
    left = self->deadline_us - mend_clock_get_monotonic_time (self->clock);
  return left <= 0 ? 0 : (left + 999) / 1000;
}

static void
finish (MendRetryWait      *self,
        MendRetryWaitState  state)
{
  g_assert (state != MEND_RETRY_WAIT_PENDING);

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return;

  g_object_ref (self);

  self->state = state;
  stop_counting (self);

  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DESCRIPTION]);
  if (self->shown_seconds != 0)
    {
      self->shown_seconds = 0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REMAINING_SECONDS]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  g_signal_emit (self, signals[state == MEND_RETRY_WAIT_FIRED ? FIRED : CANCELLED], 0);

  g_object_unref (self);
}

/* A whole second of the clock: the countdown drops. */
static void
on_tick (GObject *object)
{
  MendRetryWait *self = MEND_RETRY_WAIT (object);
  guint seconds;

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return;

  seconds = whole_seconds (mend_retry_wait_get_remaining_ms (self));
  if (seconds != self->shown_seconds)
    {
      self->shown_seconds = seconds;
      g_object_freeze_notify (object);
      g_object_notify_by_pspec (object, properties[PROP_REMAINING_SECONDS]);
      g_object_notify_by_pspec (object, properties[PROP_DESCRIPTION]);
      g_object_thaw_notify (object);
    }
}

static MendCountdownFuncs countdown_funcs;

/* A wait on the wall clock sleeps in steps of at most this much of the
 * monotonic clock, which stops while the machine sleeps: after a suspend
 * past its time, it fires within a step of the wake. */
#define WALL_STEP_MS 30000

static guint64
wall_step_ms (MendRetryWait *self,
              guint64        left_ms)
{
  return self->at_reset ? MIN (left_ms, WALL_STEP_MS) : left_ms;
}

/* The deadline: the clock took the wait off already. A wait on the wall
 * clock fires once the wall clock says so, and sleeps on otherwise. */
static void
on_fire (GObject *object)
{
  MendRetryWait *self = MEND_RETRY_WAIT (object);

  self->countdown = NULL;
  if (self->at_reset && mend_retry_wait_get_remaining_ms (self) > 0)
    {
      self->countdown = mend_countdown_add (self->clock, object, &countdown_funcs,
                                            wall_step_ms (self, mend_retry_wait_get_remaining_ms (self)));
      if (self->countdown != NULL)
        return;
    }
  finish (self, MEND_RETRY_WAIT_FIRED);
}

/* Its properties to show are set in class_init. */
static MendCountdownFuncs countdown_funcs = {
  .tick = on_tick,
  .fire = on_fire,
};

static void
stop_counting (MendRetryWait *self)
{
  if (self->countdown != NULL)
    mend_countdown_remove (g_steal_pointer (&self->countdown));
}

/* Set on a thread while make () makes a wait: its constructed () leaves
 * the counting to make (), which sets the fields first. */
static GPrivate making;

static void
start_counting (MendRetryWait *self)
{
  GObject *object = G_OBJECT (self);
  gint64 delay_us;

  if (self->clock == NULL)
    self->clock = g_object_ref (mend_clock_get_default ());

  delay_us = self->delay_ms > (guint64) (G_MAXINT64 / 4000) ? G_MAXINT64 / 4 : (gint64) self->delay_ms * 1000;

  /* On the clock first, then its time read: nothing runs in between, and
   * the deadline is never before the timer's. Not referenced: dispose
   * takes the wait off its clock. */
  self->countdown = mend_countdown_add (self->clock, object, &countdown_funcs, wall_step_ms (self, self->delay_ms));
  self->started_at = mend_clock_get_real_time (self->clock);
  self->next_at = self->started_at + delay_us;
  self->deadline_us = mend_clock_get_monotonic_time (self->clock) + delay_us;
  self->shown_seconds = whole_seconds (remaining_ms (self));
}

static void
mend_retry_wait_constructed (GObject *object)
{
  G_OBJECT_CLASS (mend_retry_wait_parent_class)->constructed (object);

  if (g_private_get (&making) == NULL)
    start_counting (MEND_RETRY_WAIT (object));
}

/* A wait made the quick way: waits are made by the thousand, and the
 * property machinery (names looked up, values boxed, each set by a call)
 * would cost more than the rest of the wait. Nothing can watch it yet;
 * its fields are set, then it counts. */
static MendRetryWait *
make (MendClock   *clock,
      guint64      delay_ms,
      guint        attempt,
      guint        max_retries,
      MendReason   reason,
      MendFailure *failure)
{
  MendRetryWait *self;

  g_private_set (&making, GINT_TO_POINTER (1));
  self = g_object_new (MEND_TYPE_RETRY_WAIT, NULL);
  g_private_set (&making, NULL);

  self->clock = clock != NULL ? g_object_ref (clock) : NULL;
  self->delay_ms = delay_ms;
  self->attempt = attempt;
  self->max_retries = max_retries;
  self->reason = reason;
  self->failure = failure != NULL ? g_object_ref (failure) : NULL;
  return self;
}

static void
mend_retry_wait_dispose (GObject *object)
{
  MendRetryWait *self = (MendRetryWait *) object;

  /* Disposed while others still hold it (g_object_run_dispose()): it is
   * cancelled, so that its owner is not left waiting for ever. */
  if (G_OBJECT (self)->ref_count > 1 && self->state == MEND_RETRY_WAIT_PENDING)
    finish (self, MEND_RETRY_WAIT_CANCELLED);

  stop_counting (self);

  G_OBJECT_CLASS (mend_retry_wait_parent_class)->dispose (object);
}

static void
mend_retry_wait_finalize (GObject *object)
{
  MendRetryWait *self = (MendRetryWait *) object;

  g_clear_object (&self->clock);
  g_clear_object (&self->failure);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_retry_wait_parent_class)->finalize (object);
}

static void
mend_retry_wait_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  MendRetryWait *self = MEND_RETRY_WAIT (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      g_value_set_object (value, self->clock);
      break;
    case PROP_ATTEMPT:
      g_value_set_uint (value, self->attempt);
      break;
    case PROP_MAX_RETRIES:
      g_value_set_uint (value, self->max_retries);
      break;
    case PROP_REASON:
      g_value_set_enum (value, self->reason);
      break;
    case PROP_FAILURE:
      g_value_set_object (value, self->failure);
      break;
    case PROP_DELAY_MS:
      g_value_set_uint64 (value, self->delay_ms);
      break;
    case PROP_STARTED_AT:
      g_value_set_int64 (value, self->started_at);
      break;
    case PROP_NEXT_AT:
      g_value_set_int64 (value, self->next_at);
      break;
    case PROP_SERVER_HINT:
      g_value_set_boolean (value, self->server_hint);
      break;
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;
    case PROP_REMAINING_SECONDS:
      g_value_set_uint (value, mend_retry_wait_get_remaining_seconds (self));
      break;
    case PROP_HELD:
      g_value_set_boolean (value, self->held);
      break;
    case PROP_AT_RESET:
      g_value_set_boolean (value, self->at_reset);
      break;
    case PROP_GATE_STATE:
      g_value_set_enum (value, self->gate_state);
      break;
    case PROP_DESCRIPTION:
      g_value_take_string (value, mend_retry_wait_describe (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_retry_wait_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  MendRetryWait *self = MEND_RETRY_WAIT (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      self->clock = g_value_dup_object (value);
      break;
    case PROP_ATTEMPT:
      self->attempt = g_value_get_uint (value);
      break;
    case PROP_MAX_RETRIES:
      self->max_retries = g_value_get_uint (value);
      break;
    case PROP_REASON:
      self->reason = g_value_get_enum (value);
      break;
    case PROP_FAILURE:
      self->failure = g_value_dup_object (value);
      break;
    case PROP_DELAY_MS:
      self->delay_ms = g_value_get_uint64 (value);
      break;
    case PROP_SERVER_HINT:
      self->server_hint = g_value_get_boolean (value);
      break;
    case PROP_HELD:
      self->held = g_value_get_boolean (value);
      break;
    case PROP_AT_RESET:
      self->at_reset = g_value_get_boolean (value);
      break;
    case PROP_GATE_STATE:
      self->gate_state = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_retry_wait_class_init (MendRetryWaitClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_retry_wait_constructed;
  object_class->dispose = mend_retry_wait_dispose;
  object_class->finalize = mend_retry_wait_finalize;
  object_class->get_property = mend_retry_wait_get_property;
  object_class->set_property = mend_retry_wait_set_property;

  mend_i18n_init ();

  /**
   * MendRetryWait:clock:
   *
   * The clock the wait counts on; %NULL at construction means the default
   * clock.
   */
  properties[PROP_CLOCK] =
    g_param_spec_object ("clock", NULL, NULL,
                         MEND_TYPE_CLOCK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:attempt:
   *
   * The number of the retry that runs when the wait fires, from 1.
   */
  properties[PROP_ATTEMPT] =
    g_param_spec_uint ("attempt", NULL, NULL,
                       0, G_MAXUINT, 1,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:max-retries:
   *
   * How many retries there are in all: the policy's
   * [property@Mend.ErrorPolicy:max-retries]. The wait's
   * [property@Mend.RetryWait:attempt] is one of them.
   */
  properties[PROP_MAX_RETRIES] =
    g_param_spec_uint ("max-retries", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:reason:
   *
   * Why the retry is needed.
   */
  properties[PROP_REASON] =
    g_param_spec_enum ("reason", NULL, NULL,
                       MEND_TYPE_REASON, MEND_REASON_UNKNOWN,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:failure:
   *
   * The failure the retry follows, or %NULL.
   */
  properties[PROP_FAILURE] =
    g_param_spec_object ("failure", NULL, NULL,
                         MEND_TYPE_FAILURE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:delay-ms:
   *
   * How long the wait lasts, in milliseconds.
   */
  properties[PROP_DELAY_MS] =
    g_param_spec_uint64 ("delay-ms", NULL, NULL,
                         0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:started-at:
   *
   * When the wait began: wall-clock microseconds since the Unix epoch.
   */
  properties[PROP_STARTED_AT] =
    g_param_spec_int64 ("started-at", NULL, NULL,
                        G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:next-at:
   *
   * When the wait is due: wall-clock microseconds since the Unix epoch.
   */
  properties[PROP_NEXT_AT] =
    g_param_spec_int64 ("next-at", NULL, NULL,
                        G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:server-hint:
   *
   * Whether the delay came from the server (`Retry-After` or a hint in its
   * error text).
   */
  properties[PROP_SERVER_HINT] =
    g_param_spec_boolean ("server-hint", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:state:
   *
   * Whether the wait is pending, fired or cancelled.
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL,
                       MEND_TYPE_RETRY_WAIT_STATE, MEND_RETRY_WAIT_PENDING,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:remaining-seconds:
   *
   * The whole seconds left before the wait fires, as
   * [method@Mend.RetryWait.describe] shows them (to the nearest second, at
   * least 1 while pending), and 0 once it ended: bind a countdown label to
   * it. It is notified at every whole second of the clock while the wait
   * is pending and a handler of its notification (or of
   * [property@Mend.RetryWait:description]'s) is connected, whenever that
   * handler was connected. All the waits of a clock tick on the same
   * second boundaries, so that any number of countdowns on screen cost
   * one wakeup a second; a wait nobody watches wakes nothing but its
   * deadline.
   */
  properties[PROP_REMAINING_SECONDS] =
    g_param_spec_uint ("remaining-seconds", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:held:
   *
   * Whether the wait is a [class@Mend.Gate]'s hold rather than a retry's
   * backoff: the upstream's other users failed, or the network is gone,
   * and the attempt waits without being spent.
   */
  properties[PROP_HELD] =
    g_param_spec_boolean ("held", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:at-reset:
   *
   * Whether the wait is for a usage limit's reset
   * ([property@Mend.ErrorPolicy:continue-at-reset]) rather than a retry's
   * backoff: its [property@Mend.RetryWait:next-at] is that reset, and it
   * follows the wall clock, so that a machine that slept past it fires
   * when it wakes (within half a minute) and a chat restored later waits
   * for the same time.
   */
  properties[PROP_AT_RESET] =
    g_param_spec_boolean ("at-reset", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:gate-state:
   *
   * For a held wait, the state of the gate that holds it, which
   * [method@Mend.RetryWait.describe] tells.
   */
  properties[PROP_GATE_STATE] =
    g_param_spec_enum ("gate-state", NULL, NULL,
                       MEND_TYPE_GATE_STATE, MEND_GATE_CLOSED,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendRetryWait:description:
   *
   * What [method@Mend.RetryWait.describe] returns, such as "Retrying in
   * 4 s (retry 2 of 4)": notified each time it changes, so that a label
   * or a banner can be bound to it with [method@GObject.Object.bind_property].
   */
  properties[PROP_DESCRIPTION] =
    g_param_spec_string ("description", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
  /* A handler of either notification shows the countdown. */
  countdown_funcs.shown[0] = properties[PROP_REMAINING_SECONDS];
  countdown_funcs.shown[1] = properties[PROP_DESCRIPTION];

  /**
   * MendRetryWait::fired:
   * @self: the wait
   *
   * Emitted once when the wait ends and its retry should run, on time or
   * through [method@Mend.RetryWait.fire_now].
   */
  signals[FIRED] =
    g_signal_new ("fired",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);

  /**
   * MendRetryWait::cancelled:
   * @self: the wait
   *
   * Emitted once when the wait is cancelled; its retry never runs.
   */
  signals[CANCELLED] =
    g_signal_new ("cancelled",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
mend_retry_wait_init (MendRetryWait *self)
{
  mend_owner_init (&self->owner);
  self->attempt = 1;
  self->reason = MEND_REASON_UNKNOWN;
  self->state = MEND_RETRY_WAIT_PENDING;
}

/**
 * mend_retry_wait_new:
 * @clock: (nullable): the clock to count on, or %NULL for the default clock
 * @delay_ms: how long to wait, in milliseconds
 * @attempt: the number of the retry that runs when the wait fires, from 1
 * @max_retries: how many retries there are in all
 * @reason: why the retry is needed
 *
 * Creates a wait, which starts counting at once. Use
 * [method@Mend.RetryWait.run_async] or the [signal@Mend.RetryWait::fired]
 * signal to run the retry.
 *
 * Returns: (transfer full): a new pending wait
 */
MendRetryWait *
mend_retry_wait_new (MendClock  *clock,
                     guint64     delay_ms,
                     guint       attempt,
                     guint       max_retries,
                     MendReason  reason)
{
  MendRetryWait *self;

  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  self = make (clock, delay_ms, attempt, max_retries, reason, NULL);
  start_counting (self);

  return self;
}

/**
 * mend_retry_wait_get_clock:
 * @self: a wait
 *
 * Gets the clock the wait counts on.
 *
 * Returns: (transfer none): the clock
 */
MendClock *
mend_retry_wait_get_clock (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->clock;
}

/**
 * mend_retry_wait_get_attempt:
 * @self: a wait
 *
 * Gets the number of the retry that runs when the wait fires.
 *
 * Returns: the retry number, from 1
 */
guint
mend_retry_wait_get_attempt (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->attempt;
}

/**
 * mend_retry_wait_get_max_retries:
 * @self: a wait
 *
 * Gets how many retries there are in all: the policy's
 * [property@Mend.ErrorPolicy:max-retries].
 *
 * Returns: the number of retries
 */
guint
mend_retry_wait_get_max_retries (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_retries;
}

/**
 * mend_retry_wait_get_reason:
 * @self: a wait
 *
 * Gets why the retry is needed.
 *
 * Returns: the reason
 */
MendReason
mend_retry_wait_get_reason (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), MEND_REASON_UNKNOWN);
  mend_return_val_if_not_owner (&self->owner, self, MEND_REASON_UNKNOWN);

  return self->reason;
}

/**
 * mend_retry_wait_get_failure:
 * @self: a wait
 *
 * Gets the failure the retry follows.
 *
 * Returns: (transfer none) (nullable): the failure, or %NULL
 */
MendFailure *
mend_retry_wait_get_failure (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->failure;
}

/**
 * mend_retry_wait_get_delay_ms:
 * @self: a wait
 *
 * Gets how long the wait lasts.
 *
 * Returns: the delay in milliseconds
 */
guint64
mend_retry_wait_get_delay_ms (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->delay_ms;
}

/**
 * mend_retry_wait_get_started_at:
 * @self: a wait
 *
 * Gets when the wait began.
 *
 * Returns: wall-clock microseconds since the Unix epoch
 */
gint64
mend_retry_wait_get_started_at (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->started_at;
}

/**
 * mend_retry_wait_get_next_at:
 * @self: a wait
 *
 * Gets when the wait is due.
 *
 * Returns: wall-clock microseconds since the Unix epoch
 */
gint64
mend_retry_wait_get_next_at (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->next_at;
}

/**
 * mend_retry_wait_get_server_hint:
 * @self: a wait
 *
 * Gets whether the delay came from the server.
 *
 * Returns: %TRUE if the server's hint set the delay
 */
gboolean
mend_retry_wait_get_server_hint (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->server_hint;
}

/**
 * mend_retry_wait_get_state:
 * @self: a wait
 *
 * Gets whether the wait is pending, fired or cancelled.
 *
 * Returns: the state
 */
MendRetryWaitState
mend_retry_wait_get_state (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), MEND_RETRY_WAIT_CANCELLED);
  mend_return_val_if_not_owner (&self->owner, self, MEND_RETRY_WAIT_CANCELLED);

  return self->state;
}

/**
 * mend_retry_wait_get_remaining_ms:
 * @self: a wait
 *
 * Gets how long is left before the wait fires, rounded up to the
 * millisecond.
 *
 * Returns: the remaining time in milliseconds; 0 once the wait has ended
 */
gint64
mend_retry_wait_get_remaining_ms (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return remaining_ms (self);
}

/**
 * mend_retry_wait_get_held:
 * @self: a wait
 *
 * Gets [property@Mend.RetryWait:held].
 *
 * Returns: %TRUE if a gate holds the attempt, rather than a retry's
 *   backoff
 */
gboolean
mend_retry_wait_get_held (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->held;
}

/**
 * mend_retry_wait_get_at_reset:
 * @self: a wait
 *
 * Gets [property@Mend.RetryWait:at-reset].
 *
 * Returns: whether the wait is for a usage limit's reset
 */
gboolean
mend_retry_wait_get_at_reset (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->at_reset;
}

/**
 * mend_retry_wait_get_remaining_seconds:
 * @self: a wait
 *
 * Gets [property@Mend.RetryWait:remaining-seconds], the countdown a UI
 * shows.
 *
 * Returns: the whole seconds left, as [method@Mend.RetryWait.describe]
 *   shows them; 0 once the wait has ended
 */
guint
mend_retry_wait_get_remaining_seconds (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return 0;

  /* Read to be shown: a watcher is seen at the loop's next run. */
  if (self->countdown != NULL)
    mend_countdown_read (self->countdown);
  return whole_seconds (mend_retry_wait_get_remaining_ms (self));
}

/**
 * mend_retry_wait_fire_now:
 * @self: a wait
 *
 * Ends the wait now and runs its retry: the "Retry now" button. Does
 * nothing if the wait already fired or was cancelled.
 *
 * Returns: %TRUE if the wait fired now
 */
gboolean
mend_retry_wait_fire_now (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return FALSE;

  finish (self, MEND_RETRY_WAIT_FIRED);
  return TRUE;
}

/**
 * mend_retry_wait_cancel:
 * @self: a wait
 *
 * Cancels the wait; its retry never runs. Does nothing if the wait already
 * fired or was cancelled.
 *
 * Returns: %TRUE if the wait was cancelled now
 */
gboolean
mend_retry_wait_cancel (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  if (self->state != MEND_RETRY_WAIT_PENDING)
    return FALSE;

  finish (self, MEND_RETRY_WAIT_CANCELLED);
  return TRUE;
}

/* A wall-clock time as a person reads it, in the machine's zone: "21:23"
 * within a day, "Tue 09:00" within a week, else with its date. */
char *
mend_retry_wait_describe_time (gint64 at_us,
                               gint64 now_us)
{
  g_autoptr(GDateTime) utc = g_date_time_new_from_unix_utc (at_us / G_USEC_PER_SEC);
  g_autoptr(GDateTime) local = utc != NULL ? g_date_time_to_local (utc) : NULL;
  gint64 ahead_us = at_us - now_us;

  if (local == NULL)
    return g_strdup ("?");
  if (ahead_us < G_TIME_SPAN_DAY)
    return g_date_time_format (local, "%H:%M");
  if (ahead_us < 7 * G_TIME_SPAN_DAY)
    /* Translators: a weekday and a time, for g_date_time_format () */
    return g_date_time_format (local, _("%a %H:%M"));
  /* Translators: a date and a time, for g_date_time_format () */
  return g_date_time_format (local, _("%b %-d, %H:%M"));
}

char *
mend_retry_wait_describe_duration (gint64 ms)
{
  guint64 seconds = whole_seconds (ms);

  if (seconds < 60)
    /* Translators: a short duration in seconds */
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u s", "%u s", (gulong) seconds),
                            (guint) seconds);

  if (seconds < 3600)
    {
      guint minutes = (guint) (seconds / 60);
      guint rest = (guint) (seconds % 60);

      if (rest == 0)
        /* Translators: a short duration in minutes */
        return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u min", "%u min", minutes), minutes);
      /* Translators: a short duration in minutes and seconds */
      return g_strdup_printf (_("%u min %u s"), minutes, rest);
    }

  {
    guint64 hours = seconds / 3600;
    guint minutes = (guint) ((seconds % 3600 + 59) / 60);

    if (minutes == 60)
      {
        hours++;
        minutes = 0;
      }
    if (minutes == 0)
      /* Translators: a short duration in hours */
      return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u h", "%u h", (gulong) hours), (guint) hours);
    /* Translators: a short duration in hours and minutes */
    return g_strdup_printf (_("%u h %u min"), (guint) hours, minutes);
  }
}

/**
 * mend_retry_wait_describe:
 * @self: a wait
 *
 * Describes the wait for people, in their language: "Retrying in 4 s
 * (retry 2 of 4)", "Retrying now (retry 2 of 4)" once fired, "Retry
 * cancelled" once cancelled. Call it again as time passes for a countdown.
 *
 * Returns: (transfer full): the description
 */
char *
mend_retry_wait_describe (MendRetryWait *self)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  switch (self->state)
    {
    case MEND_RETRY_WAIT_PENDING:
      {
        g_autofree char *duration = mend_retry_wait_describe_duration (mend_retry_wait_get_remaining_ms (self));

        if (self->countdown != NULL)
          mend_countdown_read (self->countdown);
        if (self->at_reset)
          {
            g_autofree char *when = mend_retry_wait_describe_time (self->next_at,
                                                                   mend_clock_get_real_time (self->clock));

            /* Translators: %s is a time such as “21:23” or “Tue 09:00” */
            return g_strdup_printf (_("Usage limit reached — continues at %s"), when);
          }
        if (self->held && self->gate_state == MEND_GATE_OFFLINE)
          return g_strdup (_("Waiting for the network to come back"));
        if (self->held)
          /* Translators: %s is a duration such as “20 s” */
          return g_strdup_printf (_("Waiting for the service to recover — next check in %s"), duration);

        /* Translators: the first %s is a duration such as “4 s”; then the
         * number of the retry and how many there are in all */
        return g_strdup_printf (_("Retrying in %s (retry %u of %u)"), duration, self->attempt, self->max_retries);
      }
    case MEND_RETRY_WAIT_FIRED:
      /* Translators: the number of the retry and how many there are in all */
      return g_strdup_printf (_("Retrying now (retry %u of %u)"), self->attempt, self->max_retries);
    case MEND_RETRY_WAIT_CANCELLED:
    default:
      return g_strdup (_("Retry cancelled"));
    }
}

/**
 * mend_retry_wait_to_json:
 * @self: a wait
 *
 * Writes the wait as JSON, as records and saved state carry it:
 * `{"attempt":2,"of":4,"reason":"capacity","nextAt":1764500000000}`, with
 * `nextAt` in wall-clock milliseconds since the Unix epoch.
 *
 * Returns: (transfer full): the JSON text
 */
char *
mend_retry_wait_to_json (MendRetryWait *self)
{
  g_autoptr(JsonBuilder) builder = NULL;

  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  builder = json_builder_new_immutable ();
  mend_retry_wait_build_json (self, builder);

  return mend_json_builder_finish (builder);
}

void
mend_retry_wait_build_json (MendRetryWait *self,
                            JsonBuilder   *builder)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, self->attempt);
  json_builder_set_member_name (builder, "of");
  json_builder_add_int_value (builder, self->max_retries);
  mend_json_add_nick (builder, "reason", MEND_TYPE_REASON, self->reason);
  json_builder_set_member_name (builder, "nextAt");
  json_builder_add_int_value (builder, self->next_at / 1000);
  json_builder_end_object (builder);
}

typedef struct
{
  MendRetryWait *wait;
  GCancellable  *cancellable;
  GMainContext  *context;
  gulong         fired_id;
  gulong         cancelled_id;
  gulong         cancellable_id;
} RunData;

static void
run_data_free (RunData *data)
{
  g_clear_signal_handler (&data->fired_id, data->wait);
  g_clear_signal_handler (&data->cancelled_id, data->wait);
  if (data->cancellable_id != 0)
    g_cancellable_disconnect (data->cancellable, data->cancellable_id);
  g_clear_object (&data->cancellable);
  g_clear_object (&data->wait);
  g_clear_pointer (&data->context, g_main_context_unref);
  g_free (data);
}

static void
run_complete (GTask *task)
{
  RunData *data = g_task_get_task_data (task);

  /* Disconnect before returning so that no second ending reaches the task. */
  g_clear_signal_handler (&data->fired_id, data->wait);
  g_clear_signal_handler (&data->cancelled_id, data->wait);

  if (data->wait->state == MEND_RETRY_WAIT_FIRED)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                             _("The retry was cancelled"));
}

static void
on_run_ended (MendRetryWait *wait,
              GTask         *task)
{
  run_complete (task);
  /* The reference the signal handlers held. */
  g_object_unref (task);
}

static gboolean
cancel_in_context (gpointer user_data)
{
  mend_retry_wait_cancel (user_data);
  return G_SOURCE_REMOVE;
}

static void
on_run_cancellable (GCancellable *cancellable,
                    gpointer      user_data)
{
  RunData *data = user_data;

  /* The cancelling thread may not be the wait's: hop to the wait's context
   * (at once when it is this thread's). */
  g_main_context_invoke_full (data->context, G_PRIORITY_DEFAULT,
                              cancel_in_context,
                              g_object_ref (data->wait), g_object_unref);
}

/**
 * mend_retry_wait_run_async:
 * @self: a wait
 * @cancellable: (nullable): cancels the wait
 * @callback: (scope async) (closure user_data): called when the wait ends
 * @user_data: data for @callback
 *
 * Waits for the wait to end. The call completes with %TRUE when it fires,
 * and with %G_IO_ERROR_CANCELLED when it is cancelled, through
 * [method@Mend.RetryWait.cancel] or @cancellable (which also cancels the
 * wait).
 */
void
mend_retry_wait_run_async (MendRetryWait       *self,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  RunData *data;

  g_return_if_fail (MEND_IS_RETRY_WAIT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_retry_wait_run_async);

  data = g_new0 (RunData, 1);
  data->wait = g_object_ref (self);
  data->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  data->context = g_main_context_ref_thread_default ();
  g_task_set_task_data (task, data, (GDestroyNotify) run_data_free);

  if (self->state != MEND_RETRY_WAIT_PENDING)
    {
      run_complete (task);
      return;
    }

  data->fired_id = g_signal_connect (self, "fired", G_CALLBACK (on_run_ended), task);
  data->cancelled_id = g_signal_connect (self, "cancelled", G_CALLBACK (on_run_ended), task);

  if (cancellable != NULL)
    {
      data->cancellable_id = g_cancellable_connect (cancellable,
                                                    G_CALLBACK (on_run_cancellable),
                                                    data, NULL);
      /* Already cancelled: the handler ran synchronously and the task has
       * its result, returned from an idle by GTask. */
    }

  /* The signal handlers keep the task alive until the wait ends. */
  g_steal_pointer (&task);
}

/**
 * mend_retry_wait_run_finish:
 * @self: a wait
 * @result: the result passed to the callback
 * @error: return location for a %G_IO_ERROR_CANCELLED error
 *
 * Finishes [method@Mend.RetryWait.run_async].
 *
 * Returns: %TRUE if the wait fired, %FALSE if it was cancelled
 */
gboolean
mend_retry_wait_run_finish (MendRetryWait  *self,
                            GAsyncResult   *result,
                            GError        **error)
{
  g_return_val_if_fail (MEND_IS_RETRY_WAIT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == mend_retry_wait_run_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

MendRetryWait *
mend_retry_wait_new_for_verdict (MendVerdict *verdict,
                                 MendClock   *clock,
                                 guint        attempt,
                                 guint        max_retries,
                                 gboolean     at_reset)
{
  MendFailure *failure = mend_verdict_get_failure (verdict);
  MendRetryWait *self;

  g_assert (mend_verdict_get_delay_ms (verdict) >= 0);

  self = make (clock, (guint64) mend_verdict_get_delay_ms (verdict), attempt, max_retries,
               failure ? mend_failure_get_reason (failure) : MEND_REASON_UNKNOWN, failure);
  self->server_hint = mend_verdict_get_server_hint (verdict);
  self->at_reset = at_reset;
  start_counting (self);
  return self;
}
