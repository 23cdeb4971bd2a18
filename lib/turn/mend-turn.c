/* mend-turn.c — MendTurn: one prompt, retried with backoff until it ends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-gate-private.h"
#include "mend-verdict-private.h"
#include "mend-redact-private.h"
#include "mend-retry-wait-private.h"
#include "mend-sender.h"
#include "mend-turn-private.h"

/**
 * MendTurn:
 *
 * One turn of a conversation and its retries.
 *
 * A turn sends the same prompt, with the same provenance, on every attempt.
 * Each attempt runs through the turn's [iface@Mend.Sender] when one is set,
 * or through the [signal@Mend.Turn::attempt] signal, after which the app
 * calls [method@Mend.Turn.succeed] or [method@Mend.Turn.fail]. A turn with
 * neither fails at once (%MEND_RETRY_ERROR_NO_SENDER) rather than wait for
 * ever.
 *
 * A failure is judged by the turn's [class@Mend.ErrorPolicy], in the
 * turn's context (the attempt, whether output was seen); the judgement is
 * [property@Mend.Turn:last-verdict], and the failure itself is never
 * changed. A transient one is retried after a [class@Mend.RetryWait]
 * ([signal@Mend.Turn::waiting], then [signal@Mend.Turn::resumed] when the
 * next attempt starts) until the policy's retries are used up
 * ([signal@Mend.Turn::exhausted]). A permanent failure or a limit gives up
 * after that one attempt. A failure after [method@Mend.Turn.note_output] is
 * not retried, unless the policy's [property@Mend.ErrorPolicy:retry-partial]
 * says so: a retry would run tools twice and duplicate text.
 *
 * [method@Mend.Turn.stop], or cancelling the cancellable given to
 * [method@Mend.Turn.start], ends the turn at once, during an attempt (whose
 * cancellable is cancelled) or during a wait, and no attempt follows. A late
 * `succeed ()` or `fail ()` for an attempt that was stopped is ignored.
 *
 * [signal@Mend.Turn::finished] is emitted exactly once, at the end.
 *
 * Example:
 *
 * ```c
 * static void
 * on_attempt (MendTurn *turn, guint n, GCancellable *cancellable, gpointer data)
 * {
 *   // Send mend_turn_get_prompt (turn) the app's own way, then report
 *   // mend_turn_succeed (turn), or mend_turn_fail (turn, failure) with a
 *   // MendFailure made from what went wrong.
 * }
 *
 * g_autoptr(MendTurn) turn = mend_turn_new ("Fix the failing build", NULL);
 *
 * g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), NULL);
 * g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), banner);
 * mend_turn_start (turn, NULL);
 * ```
 */

struct _MendTurn
{
  GObject           parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  char             *id;
  char             *prompt;
  char             *provenance;
  char             *retry_of;
  MendErrorPolicy  *policy;
  MendClock        *clock;
  MendSender       *sender;
  guint             delay_offset_ms;

  MendTurnState     state;
  guint             attempt;
  guint             max_retries;  /* fixed at start */
  guint             reset_waits;  /* waits for a limit's reset, not retries */
  MendRetryWait    *wait;
  MendFailure      *last_failure;
  MendVerdict      *last_verdict;
  gboolean          output_seen;
  gboolean          read;          /* a stream observer ends the attempts */
  char             *agent_status;

  GCancellable     *attempt_cancellable;
  GCancellable     *start_cancellable;
  gulong            start_cancelled_id;
  GMainContext     *context;

  MendGateLink      gate;
  gboolean          held;         /* the wait is the gate's, not a retry's */
};

enum {
  PROP_0,
  PROP_ID,
  PROP_PROMPT,
  PROP_PROVENANCE,
  PROP_RETRY_OF,
  PROP_POLICY,
  PROP_CLOCK,
  PROP_SENDER,
  PROP_DELAY_OFFSET_MS,
  PROP_STATE,
  PROP_ATTEMPT,
  PROP_MAX_ATTEMPTS,
  PROP_WAIT,
  PROP_LAST_FAILURE,
  PROP_LAST_VERDICT,
  PROP_OUTPUT_SEEN,
  PROP_AGENT_STATUS,
  N_PROPS
};

enum {
  ATTEMPT,
  WAITING,
  RESUMED,
  EXHAUSTED,
  FINISHED,
  TEXT_DELTA,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendTurn, mend_turn, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* Sending an attempt and watching the app's cancellable */

/* Called once an attempt sent through a sender ended: @failure is %NULL
 * for a success, and a cancelled or failed send is a failure. */
typedef void (*MendAttemptSent) (MendTurn    *turn,
                                 guint        attempt,
                                 MendFailure *failure);

typedef struct
{
  MendTurn        *turn;
  guint            attempt;
  MendAttemptSent  sent;
} SendData;

static void
on_send_done (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  SendData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendFailure) failure = mend_sender_send_finish (MEND_SENDER (object), result, &error);

  /* An attempt that could not be made, or was cancelled, failed: a
   * cancellation reads as a Stop, never as a success. */
  if (error != NULL)
    failure = mend_failure_new_from_error (error);

  data->sent (data->turn, data->attempt, failure);

  g_object_unref (data->turn);
  g_free (data);
}

static void
send_attempt (MendSender      *sender,
              MendTurn        *turn,
              guint            attempt,
              GCancellable    *cancellable,
              MendAttemptSent  sent)
{
  SendData *data = g_new0 (SendData, 1);

  g_assert (MEND_IS_SENDER (sender));
  g_assert (MEND_IS_TURN (turn));
  g_assert (sent != NULL);

  data->turn = g_object_ref (turn);
  data->attempt = attempt;
  data->sent = sent;
  mend_sender_send_async (sender, turn, attempt, G_PRIORITY_DEFAULT, cancellable, on_send_done, data);
}

typedef struct
{
  GWeakRef       turn;
  GMainContext  *context;
  void         (*stop) (MendTurn *turn);
} Watch;

typedef struct
{
  MendTurn  *turn;
  void     (*stop) (MendTurn *turn);
} Stop;

static gboolean
stop_in_context (gpointer data)
{
  Stop *stop = data;

  stop->stop (stop->turn);
  return G_SOURCE_REMOVE;
}

static void
stop_free (gpointer data)
{
  Stop *stop = data;

  g_object_unref (stop->turn);
  g_free (stop);
}

static void
on_cancelled (GCancellable *cancellable,
              Watch        *watch)
{
  MendTurn *turn = g_weak_ref_get (&watch->turn);
  Stop *stop;

  if (turn == NULL)
    return;

  stop = g_new0 (Stop, 1);
  stop->turn = turn;
  stop->stop = watch->stop;
  g_main_context_invoke_full (watch->context, G_PRIORITY_DEFAULT,
                              stop_in_context, stop, stop_free);
}

static void
watch_free (gpointer data)
{
  Watch *watch = data;

  g_weak_ref_clear (&watch->turn);
  g_main_context_unref (watch->context);
  g_free (watch);
}

static gulong
watch_cancellable (GCancellable  *cancellable,
                   MendTurn      *turn,
                   GMainContext  *context,
                   void         (*stop) (MendTurn *turn))
{
  Watch *watch = g_new0 (Watch, 1);

  g_assert (G_IS_CANCELLABLE (cancellable));
  g_assert (context != NULL);

  g_weak_ref_init (&watch->turn, turn);
  watch->context = g_main_context_ref (context);
  watch->stop = stop;

  return g_cancellable_connect (cancellable, G_CALLBACK (on_cancelled), watch, watch_free);
}

/* GCancellable waits, in g_cancellable_disconnect(), for a running
 * emission to end: from inside one (our handler, or another handler of
 * the same cancellable) it would wait for ever. A cancelled cancellable
 * has run its handlers, or is running them; ours holds only a weak
 * reference, so it may stay, and goes with the cancellable. */
static void
unwatch_cancellable (GCancellable *cancellable,
                     gulong       *handler_id)
{
  if (*handler_id != 0 && !g_cancellable_is_cancelled (cancellable))
    g_cancellable_disconnect (cancellable, *handler_id);
  *handler_id = 0;
}

static void run_attempt (MendTurn *self);
static void begin_attempt (MendTurn *self);

static void
clear_wait (MendTurn *self)
{
  if (self->wait == NULL)
    return;

  g_signal_handlers_disconnect_by_data (self->wait, self);
  mend_retry_wait_cancel (self->wait);
  g_clear_object (&self->wait);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WAIT]);
}

static void
set_state (MendTurn      *self,
           MendTurnState  state)
{
  if (self->state != state)
    {
      self->state = state;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
    }

  /* The agent's word on its own retries holds for one attempt. */
  if (state != MEND_TURN_RUNNING)
    mend_turn_set_agent_status (self, NULL);
}

static void
finish (MendTurn      *self,
        MendTurnState  state)
{
  if (mend_turn_is_finished (self))
    return;

  if (state == MEND_TURN_STOPPED && self->state == MEND_TURN_RUNNING)
    {
      g_autoptr(MendFailure) stopped = mend_failure_new_stopped ();

      mend_gate_link_report (&self->gate, stopped, MEND_FAILURE_STOPPED);
    }
  /* Done: the turn's place in its gate is free. */
  mend_gate_link_leave (&self->gate);

  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));

  /* Finished from here on: cancelling the wait and the attempt runs
   * handlers, which may try to end the turn again. */
  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  mend_turn_set_agent_status (self, NULL);

  clear_wait (self);
  if (state == MEND_TURN_STOPPED && self->attempt_cancellable != NULL)
    g_cancellable_cancel (self->attempt_cancellable);

  unwatch_cancellable (self->start_cancellable, &self->start_cancelled_id);
  g_clear_object (&self->start_cancellable);

  g_object_thaw_notify (G_OBJECT (self));

  g_signal_emit (self, signals[FINISHED], 0, state);
  g_object_unref (self);
}

/* The turn cancels its own waits only after disconnecting: a wait
 * cancelled while connected was cancelled from outside, which is a Stop
 * (the retry never runs, and the turn must not be left waiting). */
static void
on_wait_cancelled (MendRetryWait *wait,
                   MendTurn      *self)
{
  if (self->state != MEND_TURN_WAITING || wait != self->wait)
    return;

  finish (self, MEND_TURN_STOPPED);
}

static void
on_wait_fired (MendRetryWait *wait,
               MendTurn      *self)
{
  gboolean held = self->held;

  if (self->state != MEND_TURN_WAITING || wait != self->wait)
    return;

  g_object_ref (self);

  g_signal_handlers_disconnect_by_data (self->wait, self);
  g_clear_object (&self->wait);
  self->held = FALSE;
  /* A gate's hold spent no attempt: the one it held runs now. */
  if (!held)
    self->attempt++;

  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WAIT]);
  if (!held)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTEMPT]);
  set_state (self, MEND_TURN_RUNNING);
  g_object_thaw_notify (G_OBJECT (self));

  if (!held)
    g_signal_emit (self, signals[RESUMED], 0, self->attempt);
  if (self->state == MEND_TURN_RUNNING)
    begin_attempt (self);

  g_object_unref (self);
}

/* The gate let its members go: a held attempt asks again. */
static void
on_gate_released (MendGate *gate,
                  MendTurn *self)
{
  if (self->state == MEND_TURN_WAITING && self->held && self->wait != NULL)
    mend_retry_wait_fire_now (self->wait);
}

/* How an attempt the sender ran ended. */
static void
on_sent (MendTurn    *self,
         guint        attempt,
         MendFailure *failure)
{
  /* A late answer for an attempt that was stopped, or superseded. */
  if (self->state != MEND_TURN_RUNNING || self->attempt != attempt)
    return;

  if (failure == NULL)
    mend_turn_succeed (self);
  else
    mend_turn_fail (self, failure);
}

static void hold_for_gate (MendTurn *self,
                           gint64    hold_ms);
static void hold_for_limit (MendTurn    *self,
                            MendFailure *limit);

/* Starts the attempt, unless the turn's gate holds it. */
static void
begin_attempt (MendTurn *self)
{
  gint64 hold;

  g_assert (self->state == MEND_TURN_RUNNING);
  g_assert (self->wait == NULL);

  /* Another chat on the gate met the account's usage limit: with
   * continue-at-reset, this attempt waits for its reset unsent. */
  if (mend_error_policy_get_continue_at_reset (self->policy))
    {
      MendFailure *limit = mend_gate_link_get_limit (&self->gate, mend_clock_get_real_time (self->clock));

      if (limit != NULL)
        {
          hold_for_limit (self, limit);
          return;
        }
    }

  hold = mend_gate_link_admit (&self->gate, self->attempt > 1);
  if (hold != MEND_GATE_GO)
    hold_for_gate (self, hold);
  else
    run_attempt (self);
}

/* Nothing would ever end the attempt: the turn gives up at once, so that
 * its chat keeps the queue and says why, instead of staying busy. */
static void
fail_with_nothing_to_run (MendTurn *self)
{
  static gsize warned = 0;
  g_autoptr(MendFailure) failure = mend_failure_new_no_sender ();

  if (g_once_init_enter (&warned))
    {
      mend_warning ("MendTurn: %s. Give the chat (or the turn) a MendSender, or connect "
                    "to MendTurn::attempt (in MendChat::turn-started) and end each "
                    "attempt with mend_turn_succeed() or mend_turn_fail(). "
                    "This is said once.",
                    mend_failure_get_message (failure));
      g_once_init_leave (&warned, 1);
    }
  mend_turn_fail (self, failure);
}

static void
run_attempt (MendTurn *self)
{
  g_assert (self->state == MEND_TURN_RUNNING);
  g_assert (self->attempt >= 1);

  g_clear_object (&self->attempt_cancellable);
  self->attempt_cancellable = g_cancellable_new ();

  if (self->output_seen)
    {
      self->output_seen = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_OUTPUT_SEEN]);
    }

  if (self->sender != NULL)
    send_attempt (self->sender, self, self->attempt, self->attempt_cancellable, on_sent);
  else if (self->read || g_signal_has_handler_pending (self, signals[ATTEMPT], 0, FALSE))
    g_signal_emit (self, signals[ATTEMPT], 0, self->attempt, self->attempt_cancellable);
  else
    fail_with_nothing_to_run (self);
}

static void
mend_turn_dispose (GObject *object)
{
  MendTurn *self = (MendTurn *) object;

  /* Disposed while others still hold it (g_object_run_dispose()): it ends,
   * so that no chat waits on it for ever. Dropped by its last holder,
   * nobody is there to tell. */
  if (G_OBJECT (self)->ref_count > 1 &&
      (self->state == MEND_TURN_RUNNING || self->state == MEND_TURN_WAITING))
    finish (self, MEND_TURN_STOPPED);

  /* No notifications from a half-disposed object: the wait goes quietly. */
  if (self->wait != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->wait, self);
      mend_retry_wait_cancel (self->wait);
      g_clear_object (&self->wait);
    }
  if (self->attempt_cancellable != NULL)
    g_cancellable_cancel (self->attempt_cancellable);
  mend_gate_link_leave (&self->gate);
  unwatch_cancellable (self->start_cancellable, &self->start_cancelled_id);

  G_OBJECT_CLASS (mend_turn_parent_class)->dispose (object);
}

static void
mend_turn_finalize (GObject *object)
{
  MendTurn *self = (MendTurn *) object;

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->prompt, g_free);
  g_clear_pointer (&self->provenance, g_free);
  g_clear_pointer (&self->retry_of, g_free);
  g_clear_pointer (&self->agent_status, g_free);
  g_clear_object (&self->policy);
  g_clear_object (&self->clock);
  g_clear_object (&self->sender);
  g_clear_object (&self->last_failure);
  g_clear_object (&self->last_verdict);
  g_clear_object (&self->attempt_cancellable);
  mend_gate_link_clear (&self->gate);
  g_clear_object (&self->start_cancellable);
  g_clear_pointer (&self->context, g_main_context_unref);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_turn_parent_class)->finalize (object);
}

static void
mend_turn_constructed (GObject *object)
{
  MendTurn *self = (MendTurn *) object;

  G_OBJECT_CLASS (mend_turn_parent_class)->constructed (object);

  if (self->id == NULL)
    self->id = g_uuid_string_random ();
  if (self->prompt == NULL)
    self->prompt = g_strdup ("");
  if (self->policy == NULL)
    self->policy = mend_error_policy_new ();
  if (self->clock == NULL)
    self->clock = g_object_ref (mend_clock_get_default ());
}

static void
mend_turn_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  MendTurn *self = MEND_TURN (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;
    case PROP_PROMPT:
      g_value_set_string (value, self->prompt);
      break;
    case PROP_PROVENANCE:
      g_value_set_string (value, self->provenance);
      break;
    case PROP_RETRY_OF:
      g_value_set_string (value, self->retry_of);
      break;
    case PROP_POLICY:
      g_value_set_object (value, self->policy);
      break;
    case PROP_CLOCK:
      g_value_set_object (value, self->clock);
      break;
    case PROP_SENDER:
      g_value_set_object (value, self->sender);
      break;
    case PROP_DELAY_OFFSET_MS:
      g_value_set_uint (value, self->delay_offset_ms);
      break;
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;
    case PROP_ATTEMPT:
      g_value_set_uint (value, self->attempt);
      break;
    case PROP_MAX_ATTEMPTS:
      g_value_set_uint (value, mend_turn_get_max_attempts (self));
      break;
    case PROP_WAIT:
      g_value_set_object (value, self->wait);
      break;
    case PROP_LAST_FAILURE:
      g_value_set_object (value, self->last_failure);
      break;
    case PROP_LAST_VERDICT:
      g_value_set_object (value, self->last_verdict);
      break;
    case PROP_OUTPUT_SEEN:
      g_value_set_boolean (value, self->output_seen);
      break;
    case PROP_AGENT_STATUS:
      g_value_set_string (value, self->agent_status);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_turn_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  MendTurn *self = MEND_TURN (object);

  switch (prop_id)
    {
    case PROP_ID:
      self->id = g_value_dup_string (value);
      break;
    case PROP_PROMPT:
      self->prompt = g_value_dup_string (value);
      break;
    case PROP_PROVENANCE:
      self->provenance = g_value_dup_string (value);
      break;
    case PROP_RETRY_OF:
      self->retry_of = g_value_dup_string (value);
      break;
    case PROP_POLICY:
      self->policy = g_value_dup_object (value);
      break;
    case PROP_CLOCK:
      self->clock = g_value_dup_object (value);
      break;
    case PROP_SENDER:
      mend_turn_set_sender (self, g_value_get_object (value));
      break;
    case PROP_DELAY_OFFSET_MS:
      self->delay_offset_ms = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_turn_class_init (MendTurnClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_turn_constructed;
  object_class->dispose = mend_turn_dispose;
  object_class->finalize = mend_turn_finalize;
  object_class->get_property = mend_turn_get_property;
  object_class->set_property = mend_turn_set_property;

  /**
   * MendTurn:id:
   *
   * A unique id, made when not given.
   */
  properties[PROP_ID] =
    g_param_spec_string ("id", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:prompt:
   *
   * The user's text, sent unchanged on every attempt.
   */
  properties[PROP_PROMPT] =
    g_param_spec_string ("prompt", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:retry-of:
   *
   * The id of the turn that this one runs again, or %NULL: a turn that
   * [method@Mend.Chat.retry] started after one gave up or was stopped. Its
   * prompt is that turn's, which reached the sender before: a sender
   * sends it so that the model sees the user's words once (over HTTP the
   * conversation holds it already; an agent that kept it is asked to
   * continue).
   */
  properties[PROP_RETRY_OF] =
    g_param_spec_string ("retry-of", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:provenance:
   *
   * Where the prompt came from, as JSON text, or %NULL; the same on every
   * attempt.
   */
  properties[PROP_PROVENANCE] =
    g_param_spec_string ("provenance", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:policy:
   *
   * What is retried and how long to wait; the turn defaults when not given.
   */
  properties[PROP_POLICY] =
    g_param_spec_object ("policy", NULL, NULL,
                         MEND_TYPE_ERROR_POLICY,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:clock:
   *
   * The clock the waits count on; the default clock when not given.
   */
  properties[PROP_CLOCK] =
    g_param_spec_object ("clock", NULL, NULL,
                         MEND_TYPE_CLOCK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:sender:
   *
   * What runs each attempt, or %NULL to run them through
   * [signal@Mend.Turn::attempt].
   */
  properties[PROP_SENDER] =
    g_param_spec_object ("sender", NULL, NULL,
                         MEND_TYPE_SENDER,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:delay-offset-ms:
   *
   * Added to every wait: a chat's stagger, so that chats failing together do
   * not retry together.
   */
  properties[PROP_DELAY_OFFSET_MS] =
    g_param_spec_uint ("delay-offset-ms", NULL, NULL,
                       0, 86400000, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:state:
   *
   * Where the turn is: idle, running, waiting, or one of the final states.
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL,
                       MEND_TYPE_TURN_STATE, MEND_TURN_IDLE,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:attempt:
   *
   * The number of the current or last attempt: 1 is the first send, 0
   * before the start.
   */
  properties[PROP_ATTEMPT] =
    g_param_spec_uint ("attempt", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:max-attempts:
   *
   * How many attempts the turn makes at most: the policy's
   * [property@Mend.ErrorPolicy:max-retries] plus one.
   */
  properties[PROP_MAX_ATTEMPTS] =
    g_param_spec_uint ("max-attempts", NULL, NULL,
                       1, G_MAXUINT, 5,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:wait:
   *
   * The wait before the next attempt, or %NULL when not waiting.
   */
  properties[PROP_WAIT] =
    g_param_spec_object ("wait", NULL, NULL,
                         MEND_TYPE_RETRY_WAIT,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:last-failure:
   *
   * The failure of the last attempt that failed, or %NULL: the failure
   * given to [method@Mend.Turn.fail], or, when output was seen before it,
   * a copy of it marked [property@Mend.Failure:partial].
   */
  properties[PROP_LAST_FAILURE] =
    g_param_spec_object ("last-failure", NULL, NULL,
                         MEND_TYPE_FAILURE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:last-verdict:
   *
   * What the turn's policy decided about the last attempt that failed —
   * the kind it gave [property@Mend.Turn:last-failure] in the turn's
   * context and the delay before the next attempt — or %NULL. Notified
   * together with [property@Mend.Turn:last-failure].
   */
  properties[PROP_LAST_VERDICT] =
    g_param_spec_object ("last-verdict", NULL, NULL,
                         MEND_TYPE_VERDICT,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:output-seen:
   *
   * Whether the current attempt produced output.
   */
  properties[PROP_OUTPUT_SEEN] =
    g_param_spec_boolean ("output-seen", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTurn:agent-status:
   *
   * What the agent says about the current attempt while it retries on its
   * own, as the Claude Code CLI does before it gives up: a translated
   * line such as "Claude Code is retrying (529, 2 of 10)", for the app to
   * show. %NULL when the agent says nothing; cleared when the attempt
   * ends. Set by [class@Mend.StreamObserver] from `system`/`api_retry`
   * lines; see also [signal@Mend.StreamObserver::agent-retry].
   */
  properties[PROP_AGENT_STATUS] =
    g_param_spec_string ("agent-status", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendTurn::attempt:
   * @self: the turn
   * @n: the number of the attempt, from 1
   * @cancellable: cancelled if the user stops the turn
   *
   * Run attempt @n now, then call [method@Mend.Turn.succeed] or
   * [method@Mend.Turn.fail]. Not emitted when [property@Mend.Turn:sender]
   * is set: the sender runs the attempt.
   *
   * A turn with no sender and no handler of this signal (and no
   * [class@Mend.StreamObserver] reading for its chat) has nothing that
   * would ever end its attempts: it fails at once, permanently, with a
   * %MEND_RETRY_ERROR_NO_SENDER error in its
   * [property@Mend.Turn:last-failure], and libmend warns once per process.
   */
  signals[ATTEMPT] =
    g_signal_new ("attempt",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_CANCELLABLE);

  /**
   * MendTurn::waiting:
   * @self: the turn
   * @wait: the wait before the next attempt
   *
   * A transient failure: the next attempt runs when @wait fires.
   */
  signals[WAITING] =
    g_signal_new ("waiting",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_RETRY_WAIT);

  /**
   * MendTurn::resumed:
   * @self: the turn
   * @n: the number of the attempt that starts
   *
   * A retry attempt starts.
   */
  signals[RESUMED] =
    g_signal_new ("resumed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_UINT);

  /**
   * MendTurn::exhausted:
   * @self: the turn
   * @failure: the failure of the last attempt
   *
   * The last retry failed too: the turn gives up. Emitted before
   * [signal@Mend.Turn::finished].
   */
  signals[EXHAUSTED] =
    g_signal_new ("exhausted",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_FAILURE);

  /**
   * MendTurn::finished:
   * @self: the turn
   * @state: %MEND_TURN_SUCCEEDED, %MEND_TURN_FAILED or %MEND_TURN_STOPPED
   *
   * The turn ended. Emitted exactly once.
   */
  signals[FINISHED] =
    g_signal_new ("finished",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_TURN_STATE);

  /**
   * MendTurn::text-delta:
   * @self: the turn
   * @text: the text that arrived
   *
   * Text of the model's answer arrived from the running attempt, whatever
   * the sender: an HTTP stream's deltas, an agent's message chunks. An
   * attempt that fails and is retried may have sent some before; the
   * answer of the turn is the text of its last attempt.
   * [signal@Mend.Chat::text-delta] carries the same for every turn of a
   * chat.
   */
  signals[TEXT_DELTA] =
    g_signal_new ("text-delta",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
mend_turn_init (MendTurn *self)
{
  mend_owner_init (&self->owner);
  self->state = MEND_TURN_IDLE;
}

/**
 * mend_turn_new:
 * @prompt: the user's text
 * @policy: (nullable): the policy, or %NULL for the turn defaults
 *
 * Creates a turn on the default clock. Use [ctor@GObject.Object.new] with
 * the construct properties for a clock, provenance or id of your own.
 *
 * Returns: (transfer full): a new idle turn
 */
MendTurn *
mend_turn_new (const char      *prompt,
               MendErrorPolicy *policy)
{
  g_return_val_if_fail (prompt != NULL, NULL);
  g_return_val_if_fail (policy == NULL || MEND_IS_ERROR_POLICY (policy), NULL);

  return g_object_new (MEND_TYPE_TURN,
                       "prompt", prompt,
                       "policy", policy,
                       NULL);
}

/**
 * mend_turn_get_id:
 * @self: a turn
 *
 * Gets the turn's id.
 *
 * Returns: the id
 */
const char *
mend_turn_get_id (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->id;
}

/**
 * mend_turn_get_prompt:
 * @self: a turn
 *
 * Gets the prompt sent on every attempt.
 *
 * Returns: the prompt
 */
const char *
mend_turn_get_prompt (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->prompt;
}

/**
 * mend_turn_get_retry_of:
 * @self: a turn
 *
 * Gets [property@Mend.Turn:retry-of].
 *
 * Returns: (nullable): the id of the turn this one runs again, or %NULL
 */
const char *
mend_turn_get_retry_of (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->retry_of;
}

/**
 * mend_turn_add_text:
 * @self: a turn
 * @text: text of the model's answer
 *
 * Tells of text of the model's answer that the running attempt received:
 * emits [signal@Mend.Turn::text-delta]. libmend's senders call it; a
 * sender of the app's calls it for the text it streams, so that
 * [signal@Mend.Chat::text-delta] renders every sender alike. It does not
 * count as output by itself: see [method@Mend.Turn.note_output]. Ignored
 * unless an attempt runs, and for empty text.
 */
void
mend_turn_add_text (MendTurn   *self,
                    const char *text)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (text != NULL);

  mend_turn_emit_text (self, text);
}

void
mend_turn_emit_text (MendTurn   *self,
                     const char *text)
{
  if (self->state == MEND_TURN_RUNNING && text[0] != '\0')
    g_signal_emit (self, signals[TEXT_DELTA], 0, text);
}

gboolean
mend_turn_wants_text (MendTurn *self)
{
  return g_signal_has_handler_pending (self, signals[TEXT_DELTA], 0, TRUE);
}

/**
 * mend_turn_get_provenance:
 * @self: a turn
 *
 * Gets where the prompt came from.
 *
 * Returns: (nullable): JSON text, or %NULL
 */
const char *
mend_turn_get_provenance (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->provenance;
}

/**
 * mend_turn_get_policy:
 * @self: a turn
 *
 * Gets the turn's policy.
 *
 * Returns: (transfer none): the policy
 */
MendErrorPolicy *
mend_turn_get_policy (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->policy;
}

/**
 * mend_turn_get_clock:
 * @self: a turn
 *
 * Gets the clock the turn's waits count on.
 *
 * Returns: (transfer none): the clock
 */
MendClock *
mend_turn_get_clock (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->clock;
}

/**
 * mend_turn_get_state:
 * @self: a turn
 *
 * Gets the turn's state.
 *
 * Returns: the state
 */
MendTurnState
mend_turn_get_state (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), MEND_TURN_IDLE);
  mend_return_val_if_not_owner (&self->owner, self, MEND_TURN_IDLE);

  return self->state;
}

gboolean
mend_turn_is_finished (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), TRUE);
  mend_return_val_if_not_owner (&self->owner, self, TRUE);

  return self->state == MEND_TURN_SUCCEEDED ||
         self->state == MEND_TURN_FAILED ||
         self->state == MEND_TURN_STOPPED;
}

/**
 * mend_turn_get_attempt:
 * @self: a turn
 *
 * Gets the number of the current or last attempt.
 *
 * Returns: the attempt, from 1; 0 before the start
 */
guint
mend_turn_get_attempt (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->attempt;
}

/**
 * mend_turn_get_max_attempts:
 * @self: a turn
 *
 * Gets how many attempts the turn makes at most.
 *
 * Returns: the policy's max-retries plus one
 */
guint
mend_turn_get_max_attempts (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), 1);
  mend_return_val_if_not_owner (&self->owner, self, 1);

  if (self->state == MEND_TURN_IDLE)
    return mend_error_policy_get_max_retries (self->policy) + 1;

  return self->max_retries + 1;
}

/**
 * mend_turn_get_wait:
 * @self: a turn
 *
 * Gets the wait before the next attempt.
 *
 * Returns: (transfer none) (nullable): the wait, or %NULL when not waiting
 */
MendRetryWait *
mend_turn_get_wait (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->wait;
}

/**
 * mend_turn_get_last_failure:
 * @self: a turn
 *
 * Gets the failure of the last attempt that failed.
 *
 * Returns: (transfer none) (nullable): the failure, or %NULL
 */
MendFailure *
mend_turn_get_last_failure (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->last_failure;
}

/**
 * mend_turn_get_last_verdict:
 * @self: a turn
 *
 * Gets what the turn's policy decided about the last attempt that failed:
 * see [property@Mend.Turn:last-verdict].
 *
 * Returns: (transfer none) (nullable): the verdict, or %NULL
 */
MendVerdict *
mend_turn_get_last_verdict (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->last_verdict;
}

/**
 * mend_turn_get_output_seen:
 * @self: a turn
 *
 * Gets whether the current attempt produced output.
 *
 * Returns: %TRUE after [method@Mend.Turn.note_output]
 */
gboolean
mend_turn_get_output_seen (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->output_seen;
}

/**
 * mend_turn_get_agent_status:
 * @self: a turn
 *
 * Gets what the agent says about the current attempt's own retries.
 *
 * Returns: (nullable): the status line, or %NULL
 */
const char *
mend_turn_get_agent_status (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->agent_status;
}

void
mend_turn_set_read (MendTurn *self,
                    gboolean  read)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);

  self->read = !!read;
}

void
mend_turn_set_agent_status (MendTurn   *self,
                            const char *status)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);

  if (g_strcmp0 (self->agent_status, status) == 0)
    return;

  g_free (self->agent_status);
  self->agent_status = g_strdup (status);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AGENT_STATUS]);
}

/**
 * mend_turn_get_sender:
 * @self: a turn
 *
 * Gets what runs the turn's attempts.
 *
 * Returns: (transfer none) (nullable): the sender, or %NULL
 */
MendSender *
mend_turn_get_sender (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->sender;
}

/**
 * mend_turn_set_sender:
 * @self: a turn
 * @sender: (nullable): what runs the attempts, or %NULL for the
 *   [signal@Mend.Turn::attempt] signal
 *
 * Sets what runs the turn's attempts, from the next attempt on.
 */
void
mend_turn_set_sender (MendTurn   *self,
                      MendSender *sender)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (sender == NULL || MEND_IS_SENDER (sender));

  if (g_set_object (&self->sender, sender))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SENDER]);
}

/**
 * mend_turn_start:
 * @self: an idle turn
 * @cancellable: (nullable): stops the turn when cancelled
 *
 * Starts the first attempt. Cancelling @cancellable is the user's Stop, as
 * [method@Mend.Turn.stop]; a turn started with a cancelled cancellable ends
 * stopped without an attempt.
 */
void
mend_turn_start (MendTurn     *self,
                 GCancellable *cancellable)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));
  g_return_if_fail (self->state == MEND_TURN_IDLE);

  self->context = g_main_context_ref_thread_default ();
  self->max_retries = mend_error_policy_get_max_retries (self->policy);

  if (cancellable != NULL)
    {
      if (g_cancellable_is_cancelled (cancellable))
        {
          finish (self, MEND_TURN_STOPPED);
          return;
        }

      self->start_cancellable = g_object_ref (cancellable);
      self->start_cancelled_id = watch_cancellable (cancellable, self, self->context,
                                                          mend_turn_stop);
    }

  g_object_ref (self);
  self->attempt = 1;
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTEMPT]);
  set_state (self, MEND_TURN_RUNNING);
  g_object_thaw_notify (G_OBJECT (self));
  /* A handler of those notifications may have stopped it already. */
  if (self->state == MEND_TURN_RUNNING)
    begin_attempt (self);
  g_object_unref (self);
}

/**
 * mend_turn_succeed:
 * @self: a turn
 *
 * Ends the running attempt, and the turn, with success. Ignored unless an
 * attempt runs: a late answer for a stopped attempt changes nothing.
 */
void
mend_turn_succeed (MendTurn *self)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->state != MEND_TURN_RUNNING)
    return;

  mend_gate_link_report (&self->gate, NULL, MEND_FAILURE_TRANSIENT);
  finish (self, MEND_TURN_SUCCEEDED);
}

static void
give_up (MendTurn    *self,
         MendFailure *failure,
         gboolean     exhausted)
{
  g_assert (self->state == MEND_TURN_RUNNING);

  g_object_ref (self);
  if (exhausted)
    g_signal_emit (self, signals[EXHAUSTED], 0, failure);
  finish (self, MEND_TURN_FAILED);
  g_object_unref (self);
}

/* Waits on @wait (taken) before the next attempt. */
static void
enter_wait (MendTurn      *self,
            MendRetryWait *wait)
{
  g_assert (self->wait == NULL);

  self->wait = wait;
  g_signal_connect (self->wait, "fired", G_CALLBACK (on_wait_fired), self);
  g_signal_connect (self->wait, "cancelled", G_CALLBACK (on_wait_cancelled), self);

  /* Announced before the notifications go out, so that no handler of
   * theirs can end the wait before it was announced. */
  g_object_ref (wait);
  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WAIT]);
  set_state (self, MEND_TURN_WAITING);
  g_signal_emit (self, signals[WAITING], 0, wait);
  g_object_thaw_notify (G_OBJECT (self));
  g_object_unref (self);
  g_object_unref (wait);
}

static void
wait_before_retry (MendTurn    *self,
                   MendVerdict *verdict)
{
  g_assert (MEND_IS_VERDICT (verdict));
  g_assert (!mend_turn_is_finished (self));

  enter_wait (self, mend_retry_wait_new_for_verdict (verdict, self->clock, self->attempt, self->max_retries, FALSE));
}

/* A usage limit whose reset is known, with continue-at-reset on: the
 * wait follows the wall clock until then, and the attempt after it is
 * not one of the retries. */
static void
wait_for_reset (MendTurn    *self,
                MendVerdict *verdict)
{
  g_assert (MEND_IS_VERDICT (verdict));
  g_assert (!mend_turn_is_finished (self));

  self->reset_waits++;
  enter_wait (self, mend_retry_wait_new_for_verdict (verdict, self->clock, self->attempt, self->max_retries, TRUE));
}

/* The gate holds the attempt about to run: wait without spending it,
 * until the hold ends or the gate lets its members go. */
static void
hold_for_gate (MendTurn *self,
               gint64    hold_ms)
{
  g_assert (!self->held);
  g_assert (self->attempt >= 1);

  self->held = TRUE;
  enter_wait (self, mend_gate_link_new_hold (&self->gate, self->clock, hold_ms, self->attempt - 1,
                                             self->max_retries, self->last_failure));
}

/* The account's usage limit, met by another member of the gate: the
 * attempt about to run waits for its reset on the wall clock, with the
 * turn's own jitter, and spends nothing. */
static void
hold_for_limit (MendTurn    *self,
                MendFailure *limit)
{
  g_autoptr(MendVerdict) verdict = NULL;
  gint64 until_ms;

  g_assert (!self->held);
  g_assert (self->attempt >= 1);

  until_ms = MAX (0, mend_failure_get_resets_at (limit) - mend_clock_get_real_time (self->clock)) / 1000;
  verdict = mend_verdict_new (limit, MEND_FAILURE_LIMIT, self->attempt, until_ms + mend_error_policy_reset_jitter (self->policy),
                              FALSE);
  self->held = TRUE;
  enter_wait (self, mend_retry_wait_new_for_verdict (verdict, self->clock, self->attempt - 1, self->max_retries, TRUE));
}

/* A saved wait that was for a usage limit's reset. */
static gboolean
resets_at_restored (MendTurn    *self,
                    MendFailure *failure)
{
  return failure != NULL && mend_failure_get_kind (failure) == MEND_FAILURE_LIMIT &&
         mend_failure_get_resets_at (failure) > 0 && mend_error_policy_get_continue_at_reset (self->policy);
}

void
mend_turn_start_restored (MendTurn    *self,
                          guint        attempt,
                          gint64       delay_ms,
                          MendFailure *failure)
{
  gboolean at_reset = FALSE;

  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (self->state == MEND_TURN_IDLE);
  g_return_if_fail (attempt >= 1);

  self->context = g_main_context_ref_thread_default ();
  self->max_retries = MAX (mend_error_policy_get_max_retries (self->policy), attempt - 1);
  self->attempt = attempt;
  g_set_object (&self->last_failure, failure);
  /* The saved wait was the verdict on the attempt that failed; a wait for
   * a usage limit's reset waits for the same wall-clock time, however long
   * the chat was away (at once when it passed). */
  if (delay_ms >= 0 && resets_at_restored (self, failure))
    {
      gint64 until_ms = MAX (0, mend_failure_get_resets_at (failure) - mend_clock_get_real_time (self->clock)) / 1000;

      self->last_verdict = mend_verdict_new (failure, MEND_FAILURE_LIMIT, attempt, until_ms, FALSE);
      at_reset = TRUE;
    }
  else if (delay_ms >= 0)
    self->last_verdict = mend_verdict_new (failure, MEND_FAILURE_TRANSIENT, attempt, delay_ms, FALSE);

  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTEMPT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_FAILURE]);
  if (self->last_verdict != NULL)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_VERDICT]);
  g_object_thaw_notify (G_OBJECT (self));

  if (delay_ms < 0)
    {
      /* The attempt was under way when the state was saved: it runs again,
       * as the same attempt. */
      set_state (self, MEND_TURN_RUNNING);
      /* A handler of the notification may have stopped it already. */
      if (self->state == MEND_TURN_RUNNING)
        begin_attempt (self);
    }
  else if (!mend_turn_is_finished (self) && at_reset)
    wait_for_reset (self, self->last_verdict);
  else if (!mend_turn_is_finished (self))
    wait_before_retry (self, self->last_verdict);

  g_object_unref (self);
}

/**
 * mend_turn_fail:
 * @self: a turn
 * @failure: what went wrong with the running attempt
 *
 * Ends the running attempt with a failure. The turn's policy judges it in
 * the turn's context, and the turn keeps that as
 * [property@Mend.Turn:last-verdict]: a transient failure waits and
 * retries while retries remain; anything else ends the turn. A failure
 * after output was seen is judged, and kept as
 * [property@Mend.Turn:last-failure], as a copy marked
 * [property@Mend.Failure:partial]. @failure itself is not changed. Ignored
 * unless an attempt runs.
 */
void
mend_turn_fail (MendTurn    *self,
                MendFailure *failure)
{
  g_autoptr(MendFailure) judged = NULL;
  g_autoptr(MendVerdict) verdict = NULL;
  MendAttemptContext context = { 0 };
  MendVerdictStep step;
  MendFailureKind kind;

  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (MEND_IS_FAILURE (failure));

  if (self->state != MEND_TURN_RUNNING)
    return;

  g_object_ref (self);

  kind = mend_verdict_classify (self->policy, failure, self->output_seen, &judged);
  /* The policy (a do_classify of the app's) may have ended the attempt. */
  if (self->state != MEND_TURN_RUNNING)
    goto out;

  /* A reason with a schedule of its own has its own number of retries. */
  if (kind == MEND_FAILURE_TRANSIENT)
    {
      guint max_retries = mend_error_policy_get_max_retries_for (self->policy, judged);

      if (max_retries != self->max_retries)
        {
          self->max_retries = max_retries;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_ATTEMPTS]);
        }
    }

  /* A limit's reset in words ("resets 9:23pm") is read at the turn's
   * time. The attempts after a reset are not retries. */
  context.now_us = mend_clock_get_real_time (self->clock);
  mend_failure_resolve_reset (judged, context.now_us);
  context.reset_waits = self->reset_waits;
  context.attempt = self->attempt - self->reset_waits;
  context.max_retries = self->max_retries;
  context.output_seen = self->output_seen;
  context.delay_offset_ms = self->delay_offset_ms;
  /* The turn tells its gate how the attempt ended; a failed probe is
   * held. */
  context.hold_ms = mend_gate_link_settle (&self->gate, judged, kind);
  verdict = mend_verdict_decide (self->policy, judged, kind, &context, &step);

  g_object_freeze_notify (G_OBJECT (self));
  if (g_set_object (&self->last_failure, judged))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_FAILURE]);
  g_set_object (&self->last_verdict, verdict);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_VERDICT]);
  g_object_thaw_notify (G_OBJECT (self));

  /* A handler of those notifications may have ended this attempt
   * already: it ends once. */
  if (self->state != MEND_TURN_RUNNING)
    goto out;

  switch (step)
    {
    case MEND_VERDICT_RETRY:
      wait_before_retry (self, verdict);
      break;
    case MEND_VERDICT_HOLD:
      hold_for_gate (self, mend_verdict_get_delay_ms (verdict));
      break;
    case MEND_VERDICT_AT_RESET:
      wait_for_reset (self, verdict);
      break;
    case MEND_VERDICT_EXHAUSTED:
      give_up (self, judged, TRUE);
      break;
    case MEND_VERDICT_STOP:
      finish (self, MEND_TURN_STOPPED);
      break;
    case MEND_VERDICT_GIVE_UP:
    default:
      give_up (self, judged, FALSE);
      break;
    }

out:
  g_object_unref (self);
}

/**
 * mend_turn_note_output:
 * @self: a turn
 *
 * Notes that the running attempt produced output (text or a tool call). A
 * failure after it is not retried unless the policy's
 * [property@Mend.ErrorPolicy:retry-partial] says so.
 */
void
mend_turn_note_output (MendTurn *self)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->state != MEND_TURN_RUNNING || self->output_seen)
    return;

  self->output_seen = TRUE;
  /* The gate's probe has its answer: the upstream is back. Before the
   * notification, whose handlers may drop the turn. */
  mend_gate_link_note_output (&self->gate);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_OUTPUT_SEEN]);
}

/**
 * mend_turn_stop:
 * @self: a turn
 *
 * The user's Stop: ends the turn at once, whether an attempt runs (its
 * cancellable is cancelled) or it waits, and no attempt follows. Does
 * nothing once the turn has finished.
 */
void
mend_turn_stop (MendTurn *self)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);

  finish (self, MEND_TURN_STOPPED);
}

/**
 * mend_turn_retry_now:
 * @self: a turn
 *
 * Skips the wait and starts the next attempt now: "Retry now".
 *
 * Returns: %TRUE if the turn was waiting and the attempt started
 */
gboolean
mend_turn_retry_now (MendTurn *self)
{
  g_return_val_if_fail (MEND_IS_TURN (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  if (self->state != MEND_TURN_WAITING || self->wait == NULL)
    return FALSE;

  return mend_retry_wait_fire_now (self->wait);
}

void
mend_turn_set_gate (MendTurn   *self,
                    MendGate   *gate,
                    const char *key)
{
  g_return_if_fail (MEND_IS_TURN (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (gate == NULL || MEND_IS_GATE (gate));
  g_return_if_fail (self->state == MEND_TURN_IDLE);
  g_return_if_fail (self->gate.gate == NULL);

  if (gate != NULL)
    mend_gate_link_join (&self->gate, gate, key, G_CALLBACK (on_gate_released), self);
}
