/* mend-acp-agent.c — MendAcpAgent: a sender that drives an Agent Client Protocol agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-agent-private.h"
#include "mend-acp-connection-private.h"
#include "mend-acp-requests-private.h"
#include "mend-agent-common-private.h"
#include "mend-agent-process.h"
#include "mend-chat.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-sender.h"
#include "mend-turn.h"

/**
 * MendAcpAgent:
 *
 * Runs an agent that speaks the Agent Client Protocol (ACP) — JSON-RPC 2.0,
 * one message per line, on the agent's standard input and output — as a
 * [iface@Mend.Sender] for a [class@Mend.Chat]: Claude Code through Zed's
 * `claude-code-acp` adapter (see [ctor@Mend.AcpAgent.new_claude_code]),
 * Gemini CLI, Codex through `codex-acp`, or any other ACP agent.
 *
 * - The agent starts with the first attempt: `initialize` (protocol
 *   version %MEND_ACP_AGENT_PROTOCOL_VERSION, no file system or terminal
 *   capabilities), then `session/new`, or `session/load` when
 *   [property@Mend.AcpAgent:session-id] is known and the agent offers
 *   `loadSession`.
 * - Each attempt of a turn is one `session/prompt` with the turn's prompt
 *   as text. Its `stopReason` finishes the attempt: `end_turn`,
 *   `max_tokens` and `max_turn_requests` succeed; `cancelled` is a Stop;
 *   `refusal` fails the turn, never retried. A JSON-RPC error answer is
 *   read by [class@Mend.Failure]'s classifier, from its message and data:
 *   Claude Code's "API Error: 529 …" is a transient capacity failure, its
 *   "API Error: 401 …" a permanent one.
 * - `session/update` notifications are the attempt's output: the first
 *   message chunk, thought, tool call or plan marks the turn's output as
 *   seen ([method@Mend.Turn.note_output]), and every update is emitted as
 *   [signal@Mend.AcpAgent::update] for the app to render. Background
 *   subagents reported in the updates feed the chat's
 *   [class@Mend.SubagentRetry]; docs/overview.md lists the shapes read.
 * - A Stop (the attempt's cancellable) sends `session/cancel`: the attempt
 *   ends at once as stopped, the session stays, and the next prompt waits
 *   for the cancelled one's answer — for [property@Mend.AcpAgent:cancel-grace-ms]
 *   at most: an agent that has not answered by then is ended and started
 *   again, and the next prompt goes to the session it loads.
 * - An agent that exits during an attempt fails it as a dropped
 *   connection, a transient failure, with the end of its standard error in
 *   the failure's text; the next attempt starts it again and loads the
 *   session.
 * - Requests the agent makes of the client (`session/request_permission`,
 *   `fs/read_text_file`, `fs/write_text_file`, anything else) are emitted
 *   as [signal@Mend.AcpAgent::request]. Unhandled, they are denied: a
 *   permission request is answered with its reject option (or as
 *   cancelled), any other request with a JSON-RPC error.
 *
 * ```c
 * g_autoptr(MendAcpAgent) agent = mend_acp_agent_new_claude_code (NULL);
 * g_autoptr(MendChat) chat = g_object_new (MEND_TYPE_CHAT, "sender", agent, NULL);
 *
 * mend_acp_agent_set_chat (agent, chat);
 * mend_chat_submit (chat, "Review the diff", NULL, &error);
 * ```
 */

struct _MendAcpAgent
{
  GObject            parent_instance;

  GStrv              argv;
  GStrv              environ_;
  char              *cwd;
  char              *session_id;
  char              *stop_reason;
  MendChat          *chat;       /* weak */
  MendAcpSubagents  *subagents;
  MendAcpRequests   *requests;

  MendAcpConnection *conn;       /* the run, while the agent runs */
  GByteArray        *stderr_tail;
  guint              n_starts;
  guint              n_loads;
  guint              n_cancels;

  GTask             *task;       /* the attempt in flight */
  MendTurn          *task_turn;
  gulong             cancelled_id;
  guint              prompt;     /* the attempt's prompt, once sent */

  guint              cancel_grace_ms;
  guint              cancelled;  /* a prompt cancelled, not answered yet */
  GSource           *grace;      /* its grace period, in real time */
};

enum {
  PROP_0,
  PROP_ARGV,
  PROP_ENVIRON,
  PROP_CWD,
  PROP_CHAT,
  PROP_SESSION_ID,
  PROP_STOP_REASON,
  PROP_RUNNING,
  PROP_N_STARTS,
  PROP_CANCEL_GRACE_MS,
  N_PROPS
};

enum {
  UPDATE,
  REQUEST,
  N_SIGNALS
};

static void mend_acp_agent_sender_init (MendSenderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendAcpAgent, mend_acp_agent, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (MEND_TYPE_SENDER, mend_acp_agent_sender_init))

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

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
finish_task (MendAcpAgent *self,
             MendFailure  *failure,
             GError       *error)
{
  g_autoptr(GTask) task = NULL;
  GCancellable *cancellable;

  if (self->task == NULL)
    {
      g_clear_error (&error);
      return;
    }

  cancellable = g_task_get_cancellable (self->task);
  if (cancellable != NULL && self->cancelled_id != 0)
    g_signal_handler_disconnect (cancellable, self->cancelled_id);
  self->cancelled_id = 0;
  task = g_steal_pointer (&self->task);
  g_clear_object (&self->task_turn);
  self->prompt = 0;

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, failure ? g_object_ref (failure) : NULL, g_object_unref);
}

static void
finish_with_stop_reason (MendAcpAgent *self,
                         const char   *stop_reason)
{
  g_autoptr(MendFailure) failure = NULL;

  if (g_strcmp0 (stop_reason, "end_turn") == 0 ||
      g_strcmp0 (stop_reason, "max_tokens") == 0 ||
      g_strcmp0 (stop_reason, "max_turn_requests") == 0)
    {
      finish_task (self, NULL, NULL);
      return;
    }

  if (g_strcmp0 (stop_reason, "cancelled") == 0)
    {
      finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                    _("The agent cancelled the turn")));
      return;
    }

  if (g_strcmp0 (stop_reason, "refusal") == 0)
    failure = mend_failure_new_from_text (_("The agent refused to continue the turn"));
  else
    {
      g_autofree char *text = g_strdup_printf (_("The agent ended the turn with an unknown stop reason: %s"),
                                               stop_reason ? stop_reason : "null");

      failure = mend_failure_new_from_text (text);
    }
  finish_task (self, failure, NULL);
}

/* Sends the attempt's prompt once the session is open and no earlier
 * prompt (a cancelled one) waits for its answer. */
static void
maybe_prompt (MendAcpAgent *self)
{
  if (self->task == NULL || self->prompt != 0 || self->conn == NULL ||
      !mend_acp_connection_can_prompt (self->conn))
    return;

  self->prompt = mend_acp_connection_prompt (self->conn, self->session_id,
                                             mend_turn_get_prompt (self->task_turn));
}

/* The grace period of a cancelled prompt */

static gboolean start_run (MendAcpAgent  *self,
                           GError       **error);

static void
clear_grace (MendAcpAgent *self)
{
  if (self->grace != NULL)
    g_source_destroy (self->grace);
  g_clear_pointer (&self->grace, g_source_unref);
  self->cancelled = 0;
}

/* The cancelled prompt was never answered: the agent is ended, and the
 * attempt held behind it goes to the agent started again. */
static gboolean
on_grace_over (gpointer user_data)
{
  MendAcpAgent *self = user_data;
  g_autoptr(GError) error = NULL;

  clear_grace (self);
  if (self->conn == NULL)
    return G_SOURCE_REMOVE;

  g_debug ("The agent did not answer a cancelled prompt within %u ms: starting it again",
           self->cancel_grace_ms);
  g_object_ref (self);
  mend_acp_connection_close (g_steal_pointer (&self->conn));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  if (self->task != NULL && self->conn == NULL && !start_run (self, &error))
    finish_task (self, NULL, g_steal_pointer (&error));
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

/* Real time, as the agent runs: not the chat's clock, whose waits a test
 * may run ahead of the agent. */
static void
arm_grace (MendAcpAgent *self,
           guint         prompt)
{
  clear_grace (self);
  if (self->cancel_grace_ms == 0)
    return;
  self->cancelled = prompt;
  self->grace = g_timeout_source_new (self->cancel_grace_ms);
  g_source_set_callback (self->grace, on_grace_over, self, NULL);
  g_source_set_static_name (self->grace, "[mend] ACP cancel grace");
  g_source_attach (self->grace, g_main_context_get_thread_default ());
}

static void
on_task_cancelled (GCancellable *cancellable,
                   MendAcpAgent *self)
{
  g_object_ref (self);

  if (self->prompt != 0 && self->conn != NULL && self->session_id != NULL)
    {
      self->n_cancels++;
      mend_acp_connection_cancel (self->conn, self->session_id);
      arm_grace (self, self->prompt);
    }
  /* A session that has not opened yet has as long to open as a
   * cancelled prompt has to be answered: an agent that hangs before it
   * would hold every attempt after the Stop. */
  else if (self->conn != NULL && self->grace == NULL &&
           !mend_acp_connection_can_prompt (self->conn))
    arm_grace (self, 0);

  finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                _("The turn was stopped")));
  g_object_unref (self);
}

/* The run */

/* Ends the run: the attempt in flight fails with @failure, or as a
 * dropped connection with the end of the agent's standard error. */
static void
end_run (MendAcpAgent *self,
         MendFailure  *failure)
{
  g_autoptr(MendFailure) lost = NULL;

  if (self->conn == NULL)
    return;

  g_object_ref (self);
  clear_grace (self);

  if (failure == NULL)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *text = mend_stderr_tail_text (self->stderr_tail);

      if (text != NULL)
        error = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                             _("The agent exited before the turn's result: %s"), text);
      else
        error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                     _("The agent exited before the turn's result"));
      failure = lost = mend_failure_new_from_error (error);
    }

  mend_acp_connection_close (g_steal_pointer (&self->conn));
  if (self->task != NULL)
    finish_task (self, failure, NULL);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  g_object_unref (self);
}

static void
on_session (gpointer    user_data,
            const char *session_id)
{
  mend_acp_agent_set_session_id (user_data, session_id);
}

static void
on_ready (gpointer user_data,
          gboolean loaded)
{
  MendAcpAgent *self = user_data;

  if (loaded)
    self->n_loads++;
  /* The session opened within the grace period a Stop gave it. */
  if (self->grace != NULL && self->cancelled == 0)
    clear_grace (self);
  maybe_prompt (self);
}

static void
on_update (gpointer    user_data,
           JsonObject *params)
{
  MendAcpAgent *self = user_data;
  JsonObject *update = mend_json_get_object (params, "update");
  const char *kind = update ? mend_json_get_string (update, "sessionUpdate") : NULL;
  g_autofree char *json = NULL;

  if (kind == NULL || self->session_id == NULL ||
      g_strcmp0 (mend_json_get_string (params, "sessionId"), self->session_id) != 0)
    return;

  g_object_ref (self);

  if (self->task_turn != NULL && self->prompt != 0 && mend_acp_update_is_output (update))
    mend_turn_note_output (self->task_turn);

  if (self->chat != NULL)
    mend_acp_subagents_feed (self->subagents, self->chat, params, update);

  json = mend_json_to_string (json_object_get_member (params, "update"));
  g_signal_emit (self, signals[UPDATE], 0, kind, json);

  g_object_unref (self);
}

static void
on_request (gpointer    user_data,
            const char *method,
            const char *params,
            guint       serial)
{
  MendAcpAgent *self = user_data;
  gboolean handled = FALSE;

  g_object_ref (self);
  g_signal_emit (self, signals[REQUEST], 0, method, params, serial, &handled);
  if (!handled)
    mend_acp_requests_deny (self->requests, serial);
  g_object_unref (self);
}

static void
on_answered (gpointer     user_data,
             guint        prompt,
             const char  *stop_reason,
             MendFailure *failure)
{
  MendAcpAgent *self = user_data;

  g_object_ref (self);

  if (prompt == self->cancelled)
    clear_grace (self);

  if (failure != NULL)
    {
      if (self->task != NULL && self->prompt == prompt)
        finish_task (self, failure, NULL);
    }
  else
    {
      if (set_str (&self->stop_reason, stop_reason))
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOP_REASON]);
      if (self->task != NULL && self->prompt == prompt)
        finish_with_stop_reason (self, stop_reason);
    }
  /* A prompt held behind a cancelled one goes now. */
  maybe_prompt (self);

  g_object_unref (self);
}

static void
on_ended (gpointer     user_data,
          MendFailure *failure)
{
  MendAcpAgent *self = user_data;

  /* An agent that exits in the grace period has not answered in time:
   * the attempt held behind it goes to the agent started again. */
  if (failure == NULL && self->grace != NULL && self->task != NULL && self->prompt == 0)
    {
      on_grace_over (self);
      return;
    }

  end_run (self, failure);
}

static const MendAcpConnectionEvents connection_events = {
  .session = on_session,
  .ready = on_ready,
  .update = on_update,
  .request = on_request,
  .answered = on_answered,
  .ended = on_ended,
};

static gboolean
start_run (MendAcpAgent  *self,
           GError       **error)
{
  self->conn = mend_acp_connection_start ((const char * const *) self->argv,
                                          (const char * const *) self->environ_,
                                          self->cwd, self->session_id,
                                          self->requests, self->stderr_tail,
                                          &connection_events, self, error);
  if (self->conn == NULL)
    return FALSE;

  self->n_starts++;
  g_byte_array_set_size (self->stderr_tail, 0);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_STARTS]);
  return TRUE;
}

/* MendSender */

static void
mend_acp_agent_send_async (MendSender          *sender,
                           MendTurn            *turn,
                           guint                attempt,
                           int                  io_priority,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  MendAcpAgent *self = MEND_ACP_AGENT (sender);
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_acp_agent_send_async);
  g_task_set_priority (task, io_priority);

  if (g_task_return_error_if_cancelled (task))
    return;

  /* JSON carries text: a prompt that is not UTF-8 cannot be sent. */
  if (!g_utf8_validate (mend_turn_get_prompt (turn), -1, NULL))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               _("The prompt is not valid UTF-8"));
      return;
    }

  if (self->task != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               _("The agent is already running an attempt"));
      return;
    }

  self->task = g_object_ref (task);
  self->task_turn = g_object_ref (turn);
  self->prompt = 0;
  if (cancellable != NULL)
    self->cancelled_id = g_signal_connect (cancellable, "cancelled",
                                           G_CALLBACK (on_task_cancelled), self);

  /* The attempt is kept first: a handler of the start's notifications
   * may stop it, or end the agent again. */
  if (self->conn == NULL && !start_run (self, &error))
    {
      finish_task (self, NULL, error);
      return;
    }

  maybe_prompt (self);
}

static MendFailure *
mend_acp_agent_send_finish (MendSender    *sender,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, sender), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
mend_acp_agent_sender_init (MendSenderInterface *iface)
{
  iface->send_async = mend_acp_agent_send_async;
  iface->send_finish = mend_acp_agent_send_finish;
}

/* GObject */

static void
on_chat_gone (gpointer  data,
              GObject  *where_the_object_was)
{
  MendAcpAgent *self = data;

  self->chat = NULL;
}

static void
mend_acp_agent_dispose (GObject *object)
{
  MendAcpAgent *self = (MendAcpAgent *) object;

  if (self->task != NULL)
    finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CLOSED,
                                                  _("The agent was closed")));
  clear_grace (self);
  mend_acp_requests_clear (self->requests);
  if (self->conn != NULL)
    mend_acp_connection_close (g_steal_pointer (&self->conn));
  if (self->chat != NULL)
    {
      g_object_weak_unref (G_OBJECT (self->chat), on_chat_gone, self);
      self->chat = NULL;
    }

  G_OBJECT_CLASS (mend_acp_agent_parent_class)->dispose (object);
}

static void
mend_acp_agent_finalize (GObject *object)
{
  MendAcpAgent *self = (MendAcpAgent *) object;

  g_strfreev (self->argv);
  g_strfreev (self->environ_);
  g_free (self->cwd);
  g_free (self->session_id);
  g_free (self->stop_reason);
  g_byte_array_unref (self->stderr_tail);
  mend_acp_requests_free (self->requests);
  mend_acp_subagents_free (self->subagents);

  G_OBJECT_CLASS (mend_acp_agent_parent_class)->finalize (object);
}

static void
mend_acp_agent_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  MendAcpAgent *self = MEND_ACP_AGENT (object);

  switch (prop_id)
    {
    case PROP_ARGV:
      g_value_set_boxed (value, self->argv);
      break;
    case PROP_ENVIRON:
      g_value_set_boxed (value, self->environ_);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_CHAT:
      g_value_set_object (value, self->chat);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    case PROP_STOP_REASON:
      g_value_set_string (value, self->stop_reason);
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, mend_acp_agent_get_running (self));
      break;
    case PROP_N_STARTS:
      g_value_set_uint (value, self->n_starts);
      break;
    case PROP_CANCEL_GRACE_MS:
      g_value_set_uint (value, self->cancel_grace_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_acp_agent_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  MendAcpAgent *self = MEND_ACP_AGENT (object);

  switch (prop_id)
    {
    case PROP_ARGV:
      self->argv = g_value_dup_boxed (value);
      break;
    case PROP_ENVIRON:
      mend_acp_agent_set_environ (self, g_value_get_boxed (value));
      break;
    case PROP_CWD:
      mend_acp_agent_set_cwd (self, g_value_get_string (value));
      break;
    case PROP_CHAT:
      mend_acp_agent_set_chat (self, g_value_get_object (value));
      break;
    case PROP_SESSION_ID:
      mend_acp_agent_set_session_id (self, g_value_get_string (value));
      break;
    case PROP_CANCEL_GRACE_MS:
      mend_acp_agent_set_cancel_grace_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_acp_agent_class_init (MendAcpAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = mend_acp_agent_dispose;
  object_class->finalize = mend_acp_agent_finalize;
  object_class->get_property = mend_acp_agent_get_property;
  object_class->set_property = mend_acp_agent_set_property;

  /**
   * MendAcpAgent:argv:
   *
   * The agent's command line, program first (looked up in `PATH` when it
   * has no slash).
   */
  properties[PROP_ARGV] =
    g_param_spec_boxed ("argv", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:environ:
   *
   * The agent's environment, as `NAME=VALUE` strings, or %NULL to inherit
   * this process's. Used from the next start of the agent.
   */
  properties[PROP_ENVIRON] =
    g_param_spec_boxed ("environ", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:cwd:
   *
   * The agent's working directory, and the session's `cwd`, or %NULL for
   * this process's.
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:chat:
   *
   * The chat whose [property@Mend.Chat:sender] this agent is, whose
   * subagents the agent's updates feed. Not a reference: the chat holds
   * the agent.
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:session-id:
   *
   * The ACP session, as `session/new` answered it, or as set to load a
   * session from before. A restarted agent loads it with `session/load`
   * when it offers `loadSession`.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:stop-reason:
   *
   * The `stopReason` of the last prompt the agent answered (`end_turn`,
   * `cancelled`, `refusal`, …), or %NULL.
   */
  properties[PROP_STOP_REASON] =
    g_param_spec_string ("stop-reason", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:running:
   *
   * Whether the agent runs now.
   */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:n-starts:
   *
   * How many times the agent was started.
   */
  properties[PROP_N_STARTS] =
    g_param_spec_uint ("n-starts", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpAgent:cancel-grace-ms:
   *
   * How long, in milliseconds of real time, the agent has to answer a
   * prompt that a Stop cancelled with `session/cancel`. The attempt ends
   * at the Stop; the next prompt waits for the cancelled one's answer, and
   * when the agent has not given it within this time, the agent is ended
   * and started again (its session loaded) and the next prompt goes
   * there; an agent that exits in this time is started again the same
   * way. A Stop before the session opened gives the agent as long to
   * open it. 0 waits for the answer for ever.
   */
  properties[PROP_CANCEL_GRACE_MS] =
    g_param_spec_uint ("cancel-grace-ms", NULL, NULL,
                       0, G_MAXUINT, MEND_ACP_AGENT_CANCEL_GRACE_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendAcpAgent::update:
   * @self: the agent
   * @kind: the update's `sessionUpdate`, such as `agent_message_chunk`,
   *   `tool_call`, `tool_call_update` or `plan`
   * @json: the update object, as JSON text
   *
   * Emitted for each `session/update` notification of the agent's
   * session, for the app to render. Updates that `session/load` replays
   * are not emitted.
   */
  signals[UPDATE] =
    g_signal_new ("update",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);

  /**
   * MendAcpAgent::request:
   * @self: the agent
   * @method: the request's method, such as `session/request_permission`
   *   or `fs/read_text_file`
   * @params: the request's parameters, as JSON text
   * @request: the request's number, for [method@Mend.AcpAgent.respond]
   *
   * Emitted when the agent asks something of the client. A handler that
   * returns %TRUE answers it, now or later, with
   * [method@Mend.AcpAgent.respond]. When no handler does, the request is
   * denied: a permission request is answered with its `reject_once` (or
   * `reject_always`) option, or as cancelled; any other request with a
   * JSON-RPC error.
   *
   * Returns: %TRUE when the handler answers the request
   */
  signals[REQUEST] =
    g_signal_new ("request",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, g_signal_accumulator_true_handled, NULL, NULL,
                  G_TYPE_BOOLEAN, 3, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_UINT);
}

static void
mend_acp_agent_init (MendAcpAgent *self)
{
  self->stderr_tail = g_byte_array_new ();
  self->requests = mend_acp_requests_new ();
  self->subagents = mend_acp_subagents_new ();
  self->cancel_grace_ms = MEND_ACP_AGENT_CANCEL_GRACE_MS;
}

/**
 * mend_acp_agent_new:
 * @argv: (array zero-terminated=1): the agent's command line, program first
 *
 * Creates a sender that runs @argv, an agent that speaks the Agent Client
 * Protocol on its standard input and output. It starts with the first
 * attempt.
 *
 * Returns: (transfer full): a new ACP agent
 */
MendAcpAgent *
mend_acp_agent_new (const char * const *argv)
{
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  return g_object_new (MEND_TYPE_ACP_AGENT, "argv", argv, NULL);
}

/**
 * mend_acp_agent_new_claude_code:
 * @path: (nullable) (type filename): the `claude-code-acp` program, or
 *   %NULL to look it up in `PATH`
 *
 * Creates a sender that runs Claude Code through Zed's Agent Client
 * Protocol adapter, `claude-code-acp` (npm `@zed-industries/claude-code-acp`).
 * As root, the adapter needs `IS_SANDBOX=1` in its environment.
 *
 * Returns: (transfer full): a new ACP agent
 */
MendAcpAgent *
mend_acp_agent_new_claude_code (const char *path)
{
  const char *argv[] = { path ? path : "claude-code-acp", NULL };

  return mend_acp_agent_new (argv);
}

/**
 * mend_acp_agent_get_argv:
 * @self: an ACP agent
 *
 * Gets the agent's command line.
 *
 * Returns: (transfer none) (array zero-terminated=1): the command line
 */
const char * const *
mend_acp_agent_get_argv (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return (const char * const *) self->argv;
}

/**
 * mend_acp_agent_get_environ:
 * @self: an ACP agent
 *
 * Gets the agent's environment.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   environment, or %NULL when the agent inherits this process's
 */
const char * const *
mend_acp_agent_get_environ (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return (const char * const *) self->environ_;
}

/**
 * mend_acp_agent_set_environ:
 * @self: an ACP agent
 * @environ_: (nullable) (array zero-terminated=1): `NAME=VALUE` strings,
 *   or %NULL to inherit this process's environment
 *
 * Sets the agent's environment, from its next start.
 */
void
mend_acp_agent_set_environ (MendAcpAgent       *self,
                            const char * const *environ_)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));

  if (mend_environ_replace (&self->environ_, environ_))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENVIRON]);
}

/**
 * mend_acp_agent_setenv:
 * @self: an ACP agent
 * @name: a variable's name
 * @value: (nullable): its value, or %NULL to remove it
 *
 * Sets one variable of the agent's environment, from its next start. The
 * first change starts from this process's environment.
 */
void
mend_acp_agent_setenv (MendAcpAgent *self,
                       const char   *name,
                       const char   *value)
{
  char **env;

  g_return_if_fail (MEND_IS_ACP_AGENT (self));
  g_return_if_fail (name != NULL && name[0] != '\0' && strchr (name, '=') == NULL);

  env = mend_environ_with (self->environ_, name, value);
  mend_acp_agent_set_environ (self, (const char * const *) env);
  g_strfreev (env);
}

/**
 * mend_acp_agent_get_cwd:
 * @self: an ACP agent
 *
 * Gets the agent's working directory.
 *
 * Returns: (nullable) (type filename): the directory, or %NULL
 */
const char *
mend_acp_agent_get_cwd (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return self->cwd;
}

/**
 * mend_acp_agent_set_cwd:
 * @self: an ACP agent
 * @cwd: (nullable) (type filename): a directory, or %NULL for this
 *   process's
 *
 * Sets the agent's working directory and its sessions' `cwd`, from its
 * next start.
 */
void
mend_acp_agent_set_cwd (MendAcpAgent *self,
                        const char   *cwd)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));

  if (set_str (&self->cwd, cwd))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * mend_acp_agent_get_chat:
 * @self: an ACP agent
 *
 * Gets the chat the agent's updates feed.
 *
 * Returns: (transfer none) (nullable): the chat, or %NULL
 */
MendChat *
mend_acp_agent_get_chat (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return self->chat;
}

/**
 * mend_acp_agent_set_chat:
 * @self: an ACP agent
 * @chat: (nullable): the chat whose sender @self is
 *
 * Sets the chat whose subagents the agent's updates feed. The agent does
 * not hold a reference on it.
 */
void
mend_acp_agent_set_chat (MendAcpAgent *self,
                         MendChat     *chat)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));
  g_return_if_fail (chat == NULL || MEND_IS_CHAT (chat));

  if (self->chat == chat)
    return;

  if (self->chat != NULL)
    g_object_weak_unref (G_OBJECT (self->chat), on_chat_gone, self);
  self->chat = chat;
  if (chat != NULL)
    g_object_weak_ref (G_OBJECT (chat), on_chat_gone, self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CHAT]);
}

/**
 * mend_acp_agent_get_session_id:
 * @self: an ACP agent
 *
 * Gets the agent's ACP session id.
 *
 * Returns: (nullable): the session id, or %NULL before a session opened
 */
const char *
mend_acp_agent_get_session_id (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return self->session_id;
}

/**
 * mend_acp_agent_set_session_id:
 * @self: an ACP agent
 * @session_id: (nullable): a session id, or %NULL
 *
 * Sets the session that the agent loads at its next start, such as a
 * session of an earlier run of the app.
 */
void
mend_acp_agent_set_session_id (MendAcpAgent *self,
                               const char   *session_id)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));

  if (set_str (&self->session_id, session_id))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION_ID]);
}

/**
 * mend_acp_agent_get_stop_reason:
 * @self: an ACP agent
 *
 * Gets the `stopReason` of the last prompt the agent answered.
 *
 * Returns: (nullable): the stop reason, or %NULL
 */
const char *
mend_acp_agent_get_stop_reason (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return self->stop_reason;
}

/**
 * mend_acp_agent_get_running:
 * @self: an ACP agent
 *
 * Gets whether the agent runs now.
 *
 * Returns: %TRUE while it runs
 */
gboolean
mend_acp_agent_get_running (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), FALSE);

  return self->conn != NULL;
}

/**
 * mend_acp_agent_get_identifier:
 * @self: an ACP agent
 *
 * Gets the running agent's process id, as
 * [method@Gio.Subprocess.get_identifier] gives it.
 *
 * Returns: (nullable): the identifier, or %NULL when the agent does not run
 */
const char *
mend_acp_agent_get_identifier (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return self->conn ? mend_acp_connection_get_identifier (self->conn) : NULL;
}

/**
 * mend_acp_agent_get_n_starts:
 * @self: an ACP agent
 *
 * Gets how many times the agent was started.
 *
 * Returns: the number of starts
 */
guint
mend_acp_agent_get_n_starts (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);

  return self->n_starts;
}

/**
 * mend_acp_agent_get_n_loads:
 * @self: an ACP agent
 *
 * Gets how many times a started agent took its session up again with
 * `session/load`.
 *
 * Returns: the number of sessions loaded
 */
guint
mend_acp_agent_get_n_loads (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);

  return self->n_loads;
}

/**
 * mend_acp_agent_get_n_cancels:
 * @self: an ACP agent
 *
 * Gets how many times a Stop sent `session/cancel`.
 *
 * Returns: the number of cancels sent
 */
guint
mend_acp_agent_get_n_cancels (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);

  return self->n_cancels;
}

/**
 * mend_acp_agent_get_cancel_grace_ms:
 * @self: an ACP agent
 *
 * Gets how long the agent has to answer a cancelled prompt.
 *
 * Returns: the grace period in milliseconds, or 0 for ever
 */
guint
mend_acp_agent_get_cancel_grace_ms (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);

  return self->cancel_grace_ms;
}

/**
 * mend_acp_agent_set_cancel_grace_ms:
 * @self: an ACP agent
 * @cancel_grace_ms: milliseconds, or 0 to wait for ever
 *
 * Sets how long the agent has to answer a prompt cancelled on a Stop
 * before it is ended and started again, from the next Stop on. See
 * [property@Mend.AcpAgent:cancel-grace-ms].
 */
void
mend_acp_agent_set_cancel_grace_ms (MendAcpAgent *self,
                                    guint         cancel_grace_ms)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));

  if (self->cancel_grace_ms == cancel_grace_ms)
    return;
  self->cancel_grace_ms = cancel_grace_ms;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CANCEL_GRACE_MS]);
}

/**
 * mend_acp_agent_dup_stderr:
 * @self: an ACP agent
 *
 * Gets the end of what the agent wrote on its standard error since it
 * last started, at most %MEND_AGENT_PROCESS_STDERR_MAX_BYTES, with
 * credentials redacted.
 *
 * Returns: (transfer full) (nullable): the text, or %NULL when there is
 *   none
 */
char *
mend_acp_agent_dup_stderr (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);

  return mend_stderr_tail_text (self->stderr_tail);
}

/**
 * mend_acp_agent_respond:
 * @self: an ACP agent
 * @request: a request's number, from [signal@Mend.AcpAgent::request]
 * @result_json: (nullable): the answer's `result`, as JSON text, or %NULL
 *   to deny the request as an unhandled one is
 *
 * Answers a request of the agent's that a handler of
 * [signal@Mend.AcpAgent::request] took.
 *
 * Returns: %TRUE when the answer was sent; %FALSE when the request is
 *   unknown, was answered already, its agent is gone, or @result_json is
 *   not JSON (the request is then still to be answered)
 */
gboolean
mend_acp_agent_respond (MendAcpAgent *self,
                        guint         request,
                        const char   *result_json)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), FALSE);

  if (result_json == NULL)
    return mend_acp_requests_deny (self->requests, request);

  return mend_acp_requests_reply (self->requests, request, result_json);
}

/**
 * mend_acp_agent_terminate:
 * @self: an ACP agent
 *
 * Ends the agent: it is killed, and an attempt in flight fails as if it
 * had died. The next attempt starts it again and loads the session.
 */
void
mend_acp_agent_terminate (MendAcpAgent *self)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));

  end_run (self, NULL);
}
