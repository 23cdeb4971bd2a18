/* mend-agent.c — MendAgent: the agent child process that the agent senders share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-agent-common-private.h"
#include "mend-agent-private.h"
#include "mend-chat.h"
#include "mend-chat-private.h"
#include "mend-clock.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-secret-set-private.h"
#include "mend-sender-private.h"
#include "mend-turn-private.h"

/**
 * MendAgent:
 *
 * An agent that libmend runs as a child process and that runs a
 * [class@Mend.Chat]'s turns: the base of [class@Mend.AgentProcess] (Claude
 * Code's stream-json) and [class@Mend.AcpAgent] (the Agent Client
 * Protocol).
 *
 * It owns the process: its command line, environment and working
 * directory; its start with the first attempt and after it died; the end
 * of its standard error, redacted, for failure texts; its end.
 *
 * - The agent is a [iface@Mend.Sender]. Make it the chat's sender and
 *   nothing more: the chat attaches itself, so that what the agent reports
 *   of its own turns, its subagents and its own retries reaches that chat.
 *   An agent is the sender of one chat at a time (a second chat made with
 *   it is a programming error, refused with a critical warning); once its
 *   chat is gone, another may have it.
 * - The agent runs in a process group of its own. It has ended when its
 *   process exited, even while a process it started still holds its
 *   output open: the attempt in flight then fails as a dropped connection
 *   (transient), and the next attempt starts the agent again, on the same
 *   session.
 * - The session is what the agent keeps between turns
 *   ([method@Mend.Sender.save_state]): a chat saves it with its state, and
 *   a chat restored from that state starts its agent on it, unless the
 *   agent already runs a session of its own.
 * - [method@Mend.Agent.terminate] and the end of a run send `SIGTERM` to
 *   the whole group, so that the agent can end its own tools, and
 *   `SIGKILL` to what is left of it after
 *   [property@Mend.Agent:terminate-grace-ms]. The main loop must run for
 *   that long: the grace period is a timer on it. A tool that left the
 *   group (with `setsid`, say) is not the agent's to end.
 *
 * ```c
 * g_autoptr(MendAgentProcess) agent = mend_agent_process_new_claude_code (NULL);
 * g_autoptr(MendChat) chat = mend_chat_new_with_sender (MEND_SENDER (agent), NULL);
 *
 * mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_MAX_RETRIES", "0");
 * mend_chat_submit (chat, "Review the diff", NULL, NULL);
 * ```
 */

typedef struct
{
  MendOwner            owner;
  GStrv                argv;
  GStrv                environ_;
  char                *cwd;
  char                *session_id;
  guint                n_starts;
  guint                terminate_grace_ms;
  guint                idle_timeout_ms;
  GByteArray          *stderr_tail;
  MendSecretSet       *secrets;    /* the credentials of argv and environ */
  MendAgentChild      *child;
  guint64              last_n_lines;

  GTask               *task;       /* the attempt in flight */
  MendTurn            *task_turn;
  gulong               cancelled_id;
  MendClock           *idle_clock; /* the real clock, while an attempt runs */
  guint                idle_id;
  guint                idle_ms;    /* the attempt's idle timeout */
  gint64               heard_us;   /* when the attempt last heard the agent */
  MendAgentWaitsFunc   waits;
} MendAgentPrivate;

enum {
  PROP_0,
  PROP_ARGV,
  PROP_ENVIRON,
  PROP_CWD,
  PROP_SESSION_ID,
  PROP_CHAT,
  PROP_RUNNING,
  PROP_N_STARTS,
  PROP_TERMINATE_GRACE_MS,
  PROP_IDLE_TIMEOUT_MS,
  N_PROPS
};

static void mend_agent_sender_init (MendSenderInterface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (MendAgent, mend_agent, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (MendAgent)
                                  G_IMPLEMENT_INTERFACE (MEND_TYPE_SENDER, mend_agent_sender_init))

static GParamSpec *properties[N_PROPS];

#define PRIV(self) ((MendAgentPrivate *) mend_agent_get_instance_private (self))

static gboolean
set_str (char       **field,
         const char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;

  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
}

/* The attempt in flight */

static void
stop_idle (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);

  if (priv->idle_id != 0)
    mend_clock_remove_timeout (priv->idle_clock, priv->idle_id);
  priv->idle_id = 0;
  g_clear_object (&priv->idle_clock);
}

static void on_idle_timeout (gpointer data);

static void
arm_idle (MendAgent *self,
          gint64     delay_ms)
{
  MendAgentPrivate *priv = PRIV (self);

  priv->idle_id = mend_clock_add_timeout (priv->idle_clock, (guint) MAX (delay_ms, 1),
                                          on_idle_timeout, self, NULL);
}

/* Heard nothing for the idle timeout: the attempt is stopped as a Stop
 * stops it (the session stays) and fails as a timeout, which is
 * transient. Heard since the timer was set, it is set again for the
 * rest: a line costs a clock read, not a timer. */
static void
on_idle_timeout (gpointer data)
{
  MendAgent *self = data;
  MendAgentPrivate *priv = PRIV (self);
  MendAgentClass *klass = MEND_AGENT_GET_CLASS (self);
  gint64 idle_ms = (mend_clock_get_monotonic_time (priv->idle_clock) - priv->heard_us) / 1000;
  g_autofree char *seconds = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendFailure) failure = NULL;

  priv->idle_id = 0;
  if (priv->waits != NULL && priv->waits (self))
    {
      mend_agent_note_heard (self);
      arm_idle (self, priv->idle_ms);
      return;
    }
  if (idle_ms < priv->idle_ms)
    {
      arm_idle (self, priv->idle_ms - idle_ms);
      return;
    }

  g_object_ref (self);
  seconds = g_strdup_printf ("%" G_GUINT64_FORMAT, (priv->idle_ms + (guint64) 999) / 1000);
  error = g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                       _("The agent said nothing for %s s: timed out"), seconds);
  failure = mend_failure_new_from_error (error);
  if (klass->cancelled != NULL)
    klass->cancelled (self);
  mend_agent_finish_attempt (self, failure, NULL);
  g_object_unref (self);
}

static void
start_idle (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);

  if (priv->idle_timeout_ms == 0)
    return;
  /* In real time, as the agent runs: not on the turn's clock. The
   * attempt keeps the timeout it started with. */
  priv->idle_ms = priv->idle_timeout_ms;
  priv->idle_clock = g_object_ref (mend_clock_get_default ());
  priv->heard_us = mend_clock_get_monotonic_time (priv->idle_clock);
  arm_idle (self, priv->idle_ms);
}

void
mend_agent_note_heard (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);

  if (priv->idle_clock != NULL)
    priv->heard_us = mend_clock_get_monotonic_time (priv->idle_clock);
}

void
mend_agent_set_waits_func (MendAgent          *self,
                           MendAgentWaitsFunc  waits)
{
  PRIV (self)->waits = waits;
}

void
mend_agent_finish_attempt (MendAgent   *self,
                           MendFailure *failure,
                           GError      *error)
{
  MendAgentPrivate *priv = PRIV (self);
  g_autoptr(GTask) task = NULL;
  GCancellable *cancellable;

  if (priv->task == NULL)
    {
      g_clear_error (&error);
      return;
    }

  cancellable = g_task_get_cancellable (priv->task);
  if (cancellable != NULL && priv->cancelled_id != 0)
    g_signal_handler_disconnect (cancellable, priv->cancelled_id);
  priv->cancelled_id = 0;
  stop_idle (self);
  task = g_steal_pointer (&priv->task);
  g_clear_object (&priv->task_turn);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, failure ? g_object_ref (failure) : NULL, g_object_unref);
}

MendTurn *
mend_agent_get_turn (MendAgent *self)
{
  return PRIV (self)->task_turn;
}

static void
on_task_cancelled (GCancellable *cancellable,
                   MendAgent    *self)
{
  MendAgentClass *klass = MEND_AGENT_GET_CLASS (self);

  g_object_ref (self);
  if (klass->cancelled != NULL)
    klass->cancelled (self);
  mend_agent_finish_attempt (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                              _("The turn was stopped")));
  g_object_unref (self);
}

/* The run */

static void end_run (MendAgent *self);

static void
on_child_line (MendAgentChild *child,
               const char     *line,
               gsize           length,
               gpointer        user_data)
{
  MendAgent *self = user_data;

  mend_agent_note_heard (self);
  g_object_ref (self);
  MEND_AGENT_GET_CLASS (self)->line (self, line, length);
  g_object_unref (self);
}

static void
on_child_ended (MendAgentChild *child,
                gpointer        user_data)
{
  end_run (user_data);
}

static const MendAgentChildCallbacks line_callbacks = {
  .line = on_child_line,
  .ended = on_child_ended,
};

static const MendAgentChildCallbacks raw_callbacks = {
  .ended = on_child_ended,
};

/* The agent ended and is started again, for the attempt in flight: the
 * chat's record says so. */
static void
record_restart (MendAgent *self)
{
  MendChat *chat = mend_agent_get_chat (self);
  MendTurn *turn = mend_agent_get_turn (self);
  const char *session_id = mend_agent_get_session_id (self);
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *json = NULL;

  if (chat == NULL)
    return;

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  mend_json_add_string (builder, "kind", "agent_restart");
  if (turn != NULL)
    {
      mend_json_add_string (builder, "turnId", mend_turn_get_id (turn));
      json_builder_set_member_name (builder, "attempt");
      json_builder_add_int_value (builder, mend_turn_get_attempt (turn));
    }
  json_builder_set_member_name (builder, "starts");
  json_builder_add_int_value (builder, PRIV (self)->n_starts);
  if (session_id != NULL)
    mend_json_add_string (builder, "sessionId", session_id);
  json_builder_end_object (builder);
  json = mend_json_builder_finish (builder);
  mend_chat_emit_record (chat, json);
}

gboolean
mend_agent_spawn (MendAgent           *self,
                  const char * const  *extra_args,
                  GError             **error)
{
  MendAgentPrivate *priv = PRIV (self);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  g_assert (priv->child == NULL);

  for (guint i = 0; priv->argv[i] != NULL; i++)
    g_ptr_array_add (argv, priv->argv[i]);
  for (guint i = 0; extra_args != NULL && extra_args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) extra_args[i]);
  g_ptr_array_add (argv, NULL);

  /* What the agent inherits holds credentials too. */
  if (priv->environ_ == NULL)
    {
      g_auto(GStrv) inherited = g_get_environ ();

      mend_secret_set_pin_environ (priv->secrets, (const char * const *) inherited);
    }

  g_byte_array_set_size (priv->stderr_tail, 0);
  priv->child = mend_agent_child_spawn ((const char * const *) argv->pdata,
                                        (const char * const *) priv->environ_,
                                        priv->cwd, priv->stderr_tail,
                                        MEND_AGENT_GET_CLASS (self)->line ? &line_callbacks : &raw_callbacks,
                                        self, error);
  if (priv->child == NULL)
    return FALSE;

  priv->n_starts++;
  if (priv->n_starts > 1)
    record_restart (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_STARTS]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  return TRUE;
}

MendAgentChild *
mend_agent_get_child (MendAgent *self)
{
  return PRIV (self)->child;
}

guint64
mend_agent_get_last_n_lines (MendAgent *self)
{
  return PRIV (self)->last_n_lines;
}

GByteArray *
mend_agent_get_stderr_tail (MendAgent *self)
{
  return PRIV (self)->stderr_tail;
}

void
mend_agent_close_child (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);
  MendAgentChild *child = g_steal_pointer (&priv->child);

  if (child == NULL)
    return;

  priv->last_n_lines = mend_agent_child_get_n_lines (child);
  mend_agent_child_close (child, priv->terminate_grace_ms);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
}

/* The agent is gone, or made to go: the run is closed, then the class
 * fails what was in flight. */
static void
end_run (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);

  if (priv->child == NULL)
    return;

  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  mend_agent_close_child (self);
  MEND_AGENT_GET_CLASS (self)->ended (self);
  g_object_thaw_notify (G_OBJECT (self));
  g_object_unref (self);
}

MendFailure *
mend_agent_new_exit_failure (MendAgent *self)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = mend_stderr_tail_text (PRIV (self)->stderr_tail);

  if (text != NULL)
    error = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                         _("The agent exited before the turn's result: %s"), text);
  else
    error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                 _("The agent exited before the turn's result"));
  return mend_failure_new_from_error (error);
}

/* The chat */

const MendOwner *
mend_agent_get_owner (MendAgent *self)
{
  return &PRIV (self)->owner;
}

/* MendSender */

static void
mend_agent_send_async (MendSender          *sender,
                       MendTurn            *turn,
                       guint                attempt,
                       int                  io_priority,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  MendAgent *self = MEND_AGENT (sender);
  MendAgentPrivate *priv = PRIV (self);
  MendAgentClass *klass = MEND_AGENT_GET_CLASS (self);
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_agent_send_async);
  g_task_set_priority (task, io_priority);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (priv->task != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               _("The agent is already running an attempt"));
      return;
    }

  priv->task = g_object_ref (task);
  priv->task_turn = g_object_ref (turn);
  if (cancellable != NULL)
    priv->cancelled_id = g_signal_connect (cancellable, "cancelled",
                                           G_CALLBACK (on_task_cancelled), self);
  start_idle (self);

  /* The attempt is kept first: a handler of the start's notifications
   * may stop it, or end the agent again, and it is over then. */
  if (priv->child == NULL && !klass->start (self, &error))
    {
      mend_agent_finish_attempt (self, NULL, error);
      return;
    }
  if (priv->task != task)
    return;

  klass->attempt (self);
}

static MendFailure *
mend_agent_send_finish (MendSender    *sender,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, sender), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* What a chat saves of its agent: the session, which the agent goes on
 * with at its next start (loaded or resumed). */
static char *
mend_agent_save_state (MendSender *sender)
{
  MendAgent *self = MEND_AGENT (sender);
  g_autoptr(JsonBuilder) builder = NULL;

  if (PRIV (self)->session_id == NULL)
    return NULL;

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  mend_json_add_string (builder, "sessionId", PRIV (self)->session_id);
  json_builder_end_object (builder);
  return mend_json_builder_finish (builder);
}

/* A state without a session changes nothing; a running agent keeps the
 * session it runs. */
static gboolean
mend_agent_restore_state (MendSender  *sender,
                          const char  *state,
                          GError     **error)
{
  MendAgent *self = MEND_AGENT (sender);
  g_autoptr(JsonNode) root = NULL;
  JsonNode *session = NULL;

  root = mend_json_parse (state, -1, NULL);
  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    session = json_object_get_member (json_node_get_object (root), "sessionId");
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      (session != NULL && (!JSON_NODE_HOLDS_VALUE (session) || json_node_get_value_type (session) != G_TYPE_STRING ||
                           !g_utf8_validate (json_node_get_string (session), -1, NULL))))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("The agent's saved state is not a session"));
      return FALSE;
    }

  if (session != NULL && PRIV (self)->child == NULL)
    mend_agent_set_session_id (self, json_node_get_string (session));
  return TRUE;
}

static void
mend_agent_sender_init (MendSenderInterface *iface)
{
  iface->send_async = mend_agent_send_async;
  iface->send_finish = mend_agent_send_finish;
  iface->save_state = mend_agent_save_state;
  iface->restore_state = mend_agent_restore_state;
}

/* GObject */

static void
mend_agent_constructed (GObject *object)
{
  MendAgentPrivate *priv = PRIV (MEND_AGENT (object));

  G_OBJECT_CLASS (mend_agent_parent_class)->constructed (object);

  if (priv->argv == NULL || priv->argv[0] == NULL)
    mend_critical ("A %s needs a command line", G_OBJECT_TYPE_NAME (object));
}

static void
mend_agent_dispose (GObject *object)
{
  MendAgent *self = MEND_AGENT (object);

  mend_agent_finish_attempt (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CLOSED,
                                                              _("The agent was closed")));
  mend_agent_close_child (self);

  G_OBJECT_CLASS (mend_agent_parent_class)->dispose (object);
}

static void
mend_agent_finalize (GObject *object)
{
  MendAgentPrivate *priv = PRIV (MEND_AGENT (object));

  mend_owner_clear (&priv->owner);
  g_clear_pointer (&priv->argv, g_strfreev);
  g_clear_pointer (&priv->environ_, g_strfreev);
  g_clear_pointer (&priv->cwd, g_free);
  g_clear_pointer (&priv->session_id, g_free);
  g_clear_pointer (&priv->stderr_tail, g_byte_array_unref);
  g_clear_pointer (&priv->secrets, mend_secret_set_free);

  G_OBJECT_CLASS (mend_agent_parent_class)->finalize (object);
}

static void
mend_agent_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  MendAgent *self = MEND_AGENT (object);
  MendAgentPrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_ARGV:
      g_value_set_boxed (value, priv->argv);
      break;
    case PROP_ENVIRON:
      g_value_set_boxed (value, priv->environ_);
      break;
    case PROP_CWD:
      g_value_set_string (value, priv->cwd);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, priv->session_id);
      break;
    case PROP_CHAT:
      g_value_set_object (value, mend_sender_get_chat (MEND_SENDER (self)));
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, priv->child != NULL);
      break;
    case PROP_N_STARTS:
      g_value_set_uint (value, priv->n_starts);
      break;
    case PROP_TERMINATE_GRACE_MS:
      g_value_set_uint (value, priv->terminate_grace_ms);
      break;
    case PROP_IDLE_TIMEOUT_MS:
      g_value_set_uint (value, priv->idle_timeout_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_agent_set_property (GObject      *object,
                         guint         prop_id,
                         const GValue *value,
                         GParamSpec   *pspec)
{
  MendAgent *self = MEND_AGENT (object);
  MendAgentPrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_ARGV:
      priv->argv = g_value_dup_boxed (value);
      mend_secret_set_pin_argv (priv->secrets, (const char * const *) priv->argv);
      break;
    case PROP_ENVIRON:
      mend_agent_set_environ (self, g_value_get_boxed (value));
      break;
    case PROP_CWD:
      mend_agent_set_cwd (self, g_value_get_string (value));
      break;
    case PROP_SESSION_ID:
      mend_agent_set_session_id (self, g_value_get_string (value));
      break;
    case PROP_TERMINATE_GRACE_MS:
      mend_agent_set_terminate_grace_ms (self, g_value_get_uint (value));
      break;
    case PROP_IDLE_TIMEOUT_MS:
      mend_agent_set_idle_timeout_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_agent_class_init (MendAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_agent_constructed;
  object_class->dispose = mend_agent_dispose;
  object_class->finalize = mend_agent_finalize;
  object_class->get_property = mend_agent_get_property;
  object_class->set_property = mend_agent_set_property;

  /**
   * MendAgent:argv:
   *
   * The agent's command line, program first (looked up in `PATH` when it
   * has no slash). The value of a flag named like a credential
   * (`--api-key VALUE`, `--token=VALUE`), and of a variable named like
   * one given as `NAME=VALUE` (`env API_TOKEN=VALUE agent`), is redacted
   * from every failure message, record and log line while the agent
   * lives.
   */
  properties[PROP_ARGV] =
    g_param_spec_boxed ("argv", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:environ:
   *
   * The agent's environment, as `NAME=VALUE` strings, or %NULL to inherit
   * this process's. Used from the next start of the agent.
   */
  properties[PROP_ENVIRON] =
    g_param_spec_boxed ("environ", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:cwd:
   *
   * The agent's working directory, or %NULL for this process's.
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:session-id:
   *
   * The agent's session, as the agent reported it, or as set to take up a
   * session from before. A restarted agent goes on with it.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:chat:
   *
   * The chat whose sender the agent is, which attached itself, or %NULL.
   * An agent feeds one chat at a time.
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:running:
   *
   * Whether the agent runs now.
   */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:n-starts:
   *
   * How many times the agent was started: more than one after it died
   * and was started again.
   */
  properties[PROP_N_STARTS] =
    g_param_spec_uint ("n-starts", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:terminate-grace-ms:
   *
   * How long the agent's process group has after `SIGTERM` before
   * `SIGKILL`, when it is terminated or its run ends: %MEND_AGENT_TERMINATE_GRACE_MS
   * by default; 0 kills it at once.
   */
  properties[PROP_TERMINATE_GRACE_MS] =
    g_param_spec_uint ("terminate-grace-ms", NULL, NULL,
                       0, G_MAXUINT, MEND_AGENT_TERMINATE_GRACE_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgent:idle-timeout-ms:
   *
   * How long an attempt may hear nothing from the agent — no message on
   * its output — in real time (the agent's, not the turn's clock):
   * %MEND_AGENT_IDLE_TIMEOUT_MS by
   * default; 0 for no limit. An attempt past it is stopped as a Stop
   * stops it (the session stays) and fails with %MEND_REASON_TIMEOUT, a
   * transient failure, so the turn tries again. Set it above the longest
   * silence the agent's own work may have: a tool that runs for minutes
   * without output, or the agent's own backoff between its retries.
   */
  properties[PROP_IDLE_TIMEOUT_MS] =
    g_param_spec_uint ("idle-timeout-ms", NULL, NULL,
                       0, G_MAXUINT, MEND_AGENT_IDLE_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_agent_init (MendAgent *self)
{
  MendAgentPrivate *priv = PRIV (self);

  mend_owner_init (&priv->owner);
  priv->stderr_tail = g_byte_array_new ();
  priv->secrets = mend_secret_set_new ();
  priv->terminate_grace_ms = MEND_AGENT_TERMINATE_GRACE_MS;
  priv->idle_timeout_ms = MEND_AGENT_IDLE_TIMEOUT_MS;
}

/**
 * mend_agent_get_argv:
 * @self: an agent
 *
 * Gets the agent's command line.
 *
 * Returns: (transfer none) (array zero-terminated=1): the command line
 */
const char * const *
mend_agent_get_argv (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return (const char * const *) PRIV (self)->argv;
}

/**
 * mend_agent_get_environ:
 * @self: an agent
 *
 * Gets the agent's environment.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   environment, or %NULL when the agent inherits this process's
 */
const char * const *
mend_agent_get_environ (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return (const char * const *) PRIV (self)->environ_;
}

/**
 * mend_agent_set_environ:
 * @self: an agent
 * @environ_: (nullable) (array zero-terminated=1): `NAME=VALUE` strings,
 *   or %NULL to inherit this process's environment
 *
 * Sets the agent's environment, from its next start.
 *
 * The value of every variable named like a credential (`*KEY*`,
 * `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*AUTH*`…) is redacted from every
 * failure message, record and log line while the agent lives, whatever
 * its shape.
 */
void
mend_agent_set_environ (MendAgent          *self,
                        const char * const *environ_)
{
  MendAgentPrivate *priv;
  g_auto(GStrv) old = NULL;

  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  priv = PRIV (self);
  old = g_strdupv (priv->environ_);
  if (!mend_environ_replace (&priv->environ_, environ_))
    return;

  /* A credential the agent is given is redacted for the agent's life; one
   * taken back still for a while. Pinned after the old ones go, so that a
   * value both hold stays. */
  mend_secret_set_unpin_environ (priv->secrets, (const char * const *) old);
  mend_secret_set_pin_environ (priv->secrets, (const char * const *) priv->environ_);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENVIRON]);
}

/**
 * mend_agent_setenv:
 * @self: an agent
 * @name: a variable's name
 * @value: (nullable): its value, or %NULL to remove it
 *
 * Sets one variable of the agent's environment, from its next start. The
 * first change starts from this process's environment. A variable named
 * like a credential is redacted as [method@Mend.Agent.set_environ] says.
 */
void
mend_agent_setenv (MendAgent  *self,
                   const char *name,
                   const char *value)
{
  char **env;

  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);
  g_return_if_fail (name != NULL && name[0] != '\0' && strchr (name, '=') == NULL);

  env = mend_environ_with (PRIV (self)->environ_, name, value);
  mend_agent_set_environ (self, (const char * const *) env);
  g_strfreev (env);
}

/**
 * mend_agent_unsetenv:
 * @self: an agent
 * @name: a variable's name
 *
 * Removes one variable from the agent's environment, from its next start.
 */
void
mend_agent_unsetenv (MendAgent  *self,
                     const char *name)
{
  mend_agent_setenv (self, name, NULL);
}

/**
 * mend_agent_get_cwd:
 * @self: an agent
 *
 * Gets the agent's working directory.
 *
 * Returns: (nullable) (type filename): the directory, or %NULL
 */
const char *
mend_agent_get_cwd (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return PRIV (self)->cwd;
}

/**
 * mend_agent_set_cwd:
 * @self: an agent
 * @cwd: (nullable) (type filename): a directory, or %NULL for this
 *   process's
 *
 * Sets the agent's working directory, from its next start.
 */
void
mend_agent_set_cwd (MendAgent  *self,
                    const char *cwd)
{
  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  if (set_str (&PRIV (self)->cwd, cwd))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * mend_agent_get_session_id:
 * @self: an agent
 *
 * Gets the agent's session id.
 *
 * Returns: (nullable): the session id, or %NULL before the agent said it
 */
const char *
mend_agent_get_session_id (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return PRIV (self)->session_id;
}

/**
 * mend_agent_set_session_id:
 * @self: an agent
 * @session_id: (nullable): a session id, or %NULL
 *
 * Sets the session that the agent goes on with at its next start, such
 * as a session of an earlier run of the app.
 */
void
mend_agent_set_session_id (MendAgent  *self,
                           const char *session_id)
{
  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  if (set_str (&PRIV (self)->session_id, session_id))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION_ID]);
}

/**
 * mend_agent_get_chat:
 * @self: an agent
 *
 * Gets the chat whose sender the agent is.
 *
 * Returns: (transfer none) (nullable): the chat, or %NULL
 */
MendChat *
mend_agent_get_chat (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return (MendChat *) mend_sender_get_chat (MEND_SENDER (self));
}

/**
 * mend_agent_get_running:
 * @self: an agent
 *
 * Gets whether the agent runs now.
 *
 * Returns: %TRUE while it runs
 */
gboolean
mend_agent_get_running (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), FALSE);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, FALSE);

  return PRIV (self)->child != NULL;
}

/**
 * mend_agent_get_identifier:
 * @self: an agent
 *
 * Gets the running agent's process id, as
 * [method@Gio.Subprocess.get_identifier] gives it; it is also the id of
 * the agent's process group.
 *
 * Returns: (nullable): the identifier, or %NULL when the agent does not run
 */
const char *
mend_agent_get_identifier (MendAgent *self)
{
  MendAgentChild *child;

  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  child = PRIV (self)->child;
  return child ? mend_agent_child_get_identifier (child) : NULL;
}

/**
 * mend_agent_get_n_starts:
 * @self: an agent
 *
 * Gets how many times the agent was started.
 *
 * Returns: the number of starts
 */
guint
mend_agent_get_n_starts (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), 0);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, 0);

  return PRIV (self)->n_starts;
}

/**
 * mend_agent_dup_stderr:
 * @self: an agent
 *
 * Gets the end of what the agent wrote on its standard error since it
 * last started, at most %MEND_AGENT_STDERR_MAX_BYTES, with credentials
 * redacted.
 *
 * Returns: (transfer full) (nullable): the text, or %NULL when there is
 *   none
 */
char *
mend_agent_dup_stderr (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), NULL);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, NULL);

  return mend_stderr_tail_text (PRIV (self)->stderr_tail);
}

/**
 * mend_agent_get_terminate_grace_ms:
 * @self: an agent
 *
 * Gets how long the agent's process group has between `SIGTERM` and
 * `SIGKILL`.
 *
 * Returns: the grace period in milliseconds
 */
guint
mend_agent_get_terminate_grace_ms (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), 0);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, 0);

  return PRIV (self)->terminate_grace_ms;
}

/**
 * mend_agent_set_terminate_grace_ms:
 * @self: an agent
 * @grace_ms: the grace period in milliseconds; 0 kills at once
 *
 * Sets how long the agent's process group has between `SIGTERM` and
 * `SIGKILL`, from the next end of a run.
 */
void
mend_agent_set_terminate_grace_ms (MendAgent *self,
                                   guint      grace_ms)
{
  MendAgentPrivate *priv;

  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  priv = PRIV (self);
  if (priv->terminate_grace_ms != grace_ms)
    {
      priv->terminate_grace_ms = grace_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TERMINATE_GRACE_MS]);
    }
}

/**
 * mend_agent_terminate:
 * @self: an agent
 *
 * Ends the agent: `SIGTERM` to its process group, `SIGKILL` to what is
 * left of it after [property@Mend.Agent:terminate-grace-ms]. An attempt in
 * flight fails at once, as if the agent had died; the next attempt starts
 * it again, on the same session.
 */
void
mend_agent_terminate (MendAgent *self)
{
  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  end_run (self);
}

/**
 * mend_agent_get_idle_timeout_ms:
 * @self: an agent
 *
 * Gets [property@Mend.Agent:idle-timeout-ms].
 *
 * Returns: the idle timeout in milliseconds; 0 for none
 */
guint
mend_agent_get_idle_timeout_ms (MendAgent *self)
{
  g_return_val_if_fail (MEND_IS_AGENT (self), 0);
  mend_return_val_if_not_owner (&PRIV (self)->owner, self, 0);

  return PRIV (self)->idle_timeout_ms;
}

/**
 * mend_agent_set_idle_timeout_ms:
 * @self: an agent
 * @timeout_ms: the idle timeout in milliseconds; 0 for none
 *
 * Sets how long an attempt may hear nothing from the agent before it
 * fails as timed out, from the next attempt.
 */
void
mend_agent_set_idle_timeout_ms (MendAgent *self,
                                guint      timeout_ms)
{
  MendAgentPrivate *priv;

  g_return_if_fail (MEND_IS_AGENT (self));
  mend_return_if_not_owner (&PRIV (self)->owner, self);

  priv = PRIV (self);
  if (priv->idle_timeout_ms != timeout_ms)
    {
      priv->idle_timeout_ms = timeout_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_TIMEOUT_MS]);
    }
}
