/* mend-agent-process.c — MendAgentProcess: a sender that drives the Claude Code CLI's stream-json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* memmem () */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-agent-common-private.h"
#include "mend-agent-process.h"
#include "mend-agent-process-private.h"
#include "mend-chat.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-sender.h"
#include "mend-stream-observer-private.h"
#include "mend-turn.h"

/**
 * MendAgentProcess:
 *
 * Runs an agent command-line program, such as the Claude Code CLI, as a
 * [iface@Mend.Sender] for a [class@Mend.Chat].
 *
 * The agent runs as one long-lived [class@Gio.Subprocess] that speaks
 * stream-json on its standard input and output (for Claude Code, `claude
 * -p --input-format stream-json --output-format stream-json --verbose`;
 * see [ctor@Mend.AgentProcess.new_claude_code]):
 *
 * - Each attempt of a turn writes the turn's prompt as one user message,
 *   `{"type":"user","message":{"role":"user","content":…}}`.
 * - The agent's output feeds the chat through the process's own
 *   [class@Mend.StreamObserver]: subagents, the agent's own turns and its
 *   own retries reach the chat as they happen, and the `result` of the
 *   turn finishes the attempt, as a success or with the failure read from
 *   it.
 * - A Stop (the attempt's cancellable) interrupts the agent's current turn
 *   with a stream-json control request; the session and the process stay,
 *   and the interrupted turn's result is not taken for the next one's.
 * - An agent that exits or crashes during an attempt fails it as a
 *   dropped connection, a transient failure, with the end of its standard
 *   error in the failure's text. The next attempt starts it again on the
 *   same session, with [property@Mend.AgentProcess:resume-option] and the
 *   session id the agent reported in its `system`/`init` line.
 * - The agent's standard input is a socket, not a pipe: writing to an
 *   agent that stopped reading or exited fails the write, seen where its
 *   output ends, and never raises `SIGPIPE` in the app, whether or not
 *   the app ignores that signal.
 *
 * Set the process as the chat's [property@Mend.Chat:sender], and the chat
 * as the process's [property@Mend.AgentProcess:chat]:
 *
 * ```c
 * g_autoptr(MendAgentProcess) agent = mend_agent_process_new_claude_code (NULL);
 * g_autoptr(MendChat) chat = g_object_new (MEND_TYPE_CHAT, "sender", agent, NULL);
 *
 * mend_agent_process_set_chat (agent, chat);
 * mend_chat_submit (chat, "Review the diff", NULL, &error);
 * ```
 *
 * The process starts with the first attempt and runs until
 * [method@Mend.AgentProcess.terminate] or the object's end.
 */

struct _MendAgentProcess
{
  GObject             parent_instance;

  GStrv               argv;
  GStrv               environ_;
  char               *cwd;
  char               *resume_option;
  char               *session_id;
  MendChat           *chat;      /* weak */
  MendStreamObserver *observer;
  guint               n_starts;
  guint               request_counter;

  MendAgentChild     *child;
  gboolean            child_resumed;  /* started on a session of before */
  GByteArray         *stderr_tail;

  GTask              *task;      /* the attempt in flight */
  MendTurn           *task_turn;
  gulong              cancelled_id;
  GBytes             *held;      /* a prompt held until an interrupted turn's result */
  guint               skip_results;
};

enum {
  PROP_0,
  PROP_ARGV,
  PROP_ENVIRON,
  PROP_CWD,
  PROP_RESUME_OPTION,
  PROP_CHAT,
  PROP_OBSERVER,
  PROP_SESSION_ID,
  PROP_RUNNING,
  PROP_N_STARTS,
  N_PROPS
};

static void mend_agent_process_sender_init (MendSenderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendAgentProcess, mend_agent_process, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (MEND_TYPE_SENDER, mend_agent_process_sender_init))

static GParamSpec *properties[N_PROPS];

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
on_task_cancelled (GCancellable     *cancellable,
                   MendAgentProcess *self);

static void
clear_task_handler (MendAgentProcess *self)
{
  GCancellable *cancellable = self->task ? g_task_get_cancellable (self->task) : NULL;

  if (cancellable != NULL && self->cancelled_id != 0)
    g_signal_handler_disconnect (cancellable, self->cancelled_id);
  self->cancelled_id = 0;
}

/* Finishes the attempt in flight: with @failure (NULL for a success), or
 * with @error when it could not be made. */
static void
finish_task (MendAgentProcess *self,
             MendFailure      *failure,
             GError           *error)
{
  g_autoptr(GTask) task = NULL;

  if (self->task == NULL)
    return;

  clear_task_handler (self);
  task = g_steal_pointer (&self->task);
  g_clear_object (&self->task_turn);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, failure ? g_object_ref (failure) : NULL, g_object_unref);
}

/* Writing to the agent */

static GBytes *
json_line (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *text = NULL;
  GString *s;

  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, NULL);
  s = g_string_new (text);
  g_string_append_c (s, '\n');

  return g_string_free_to_bytes (s);
}

static GBytes *
user_message (const char *prompt)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "message");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, prompt);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  return json_line (root);
}

static GBytes *
interrupt_request (MendAgentProcess *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *id = g_strdup_printf ("mend-interrupt-%u", ++self->request_counter);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "control_request");
  json_builder_set_member_name (builder, "request_id");
  json_builder_add_string_value (builder, id);
  json_builder_set_member_name (builder, "request");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "subtype");
  json_builder_add_string_value (builder, "interrupt");
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  return json_line (root);
}

/* Reading from the agent */

/* The end of standard error, redacted, for a failure's text. */
static char *
stderr_text (MendAgentProcess *self)
{
  return mend_stderr_tail_text (self->stderr_tail);
}

/* The agent is gone, or is made to go: the attempt in flight fails as a
 * dropped connection. */
static void
child_ended (MendAgentProcess *self)
{
  MendAgentChild *child = g_steal_pointer (&self->child);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (child == NULL)
    return;

  g_object_ref (self);

  /* A resumed agent that ended before it wrote anything could not take
   * up its session (Claude Code writes its transcript a moment after a
   * turn starts, so a crash right at the start leaves none): the next
   * start begins a new one rather than fail the same way again. */
  if (self->child_resumed && mend_agent_child_get_n_lines (child) == 0)
    mend_agent_process_set_session_id (self, NULL);

  text = stderr_text (self);
  if (text != NULL)
    error = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                         _("The agent exited before the turn's result: %s"), text);
  else
    error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                 _("The agent exited before the turn's result"));

  mend_agent_child_close (child);
  g_clear_pointer (&self->held, g_bytes_unref);
  self->skip_results = 0;

  if (self->task != NULL)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_error (error);

      finish_task (self, failure, NULL);
    }

  /* The agent's own turn, if one ran, is over too. */
  if (self->observer != NULL)
    mend_stream_observer_end_of_output (self->observer);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  g_object_unref (self);
}

static void
note_session (MendAgentProcess *self,
              JsonObject       *object)
{
  JsonNode *node = json_object_get_member (object, "session_id");

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_STRING)
    mend_agent_process_set_session_id (self, json_node_get_string (node));
}

static void
handle_line (MendAgentProcess *self,
             const char       *line,
             gsize             length)
{
  gboolean is_result = memmem (line, length, "\"type\":\"result\"", 15) != NULL;
  gboolean is_init = !is_result && memmem (line, length, "\"subtype\":\"init\"", 16) != NULL;

  if (is_result || is_init)
    {
      g_autoptr(JsonNode) root = mend_json_parse (line, length, NULL);
      JsonObject *object = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;

      if (object != NULL)
        note_session (self, object);

      /* The result of a turn that Stop interrupted is not the next one's. */
      if (is_result && object != NULL && self->skip_results > 0 &&
          !mend_stream_observer_is_own_turn_result (object))
        {
          self->skip_results--;
          if (self->skip_results == 0 && self->held != NULL && self->child != NULL)
            {
              g_autoptr(GBytes) held = g_steal_pointer (&self->held);

              mend_agent_child_write (self->child, held);
            }
          return;
        }
    }

  if (self->observer != NULL)
    mend_stream_observer_feed_line (self->observer, line, length);
}

static void
on_child_line (MendAgentChild *child,
               const char     *line,
               gsize           length,
               gpointer        user_data)
{
  MendAgentProcess *self = user_data;

  g_object_ref (self);
  handle_line (self, line, length);
  g_object_unref (self);
}

static void
on_child_error (MendAgentChild *child,
                const guint8   *data,
                gsize           size,
                gpointer        user_data)
{
  MendAgentProcess *self = user_data;

  mend_stderr_tail_append (self->stderr_tail, data, size);
}

static void
on_child_ended (MendAgentChild *child,
                gpointer        user_data)
{
  child_ended (user_data);
}

static const MendAgentChildCallbacks child_callbacks = {
  on_child_line,
  on_child_error,
  on_child_ended,
};

static gboolean
start_child (MendAgentProcess  *self,
             GError           **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  for (guint i = 0; self->argv[i] != NULL; i++)
    g_ptr_array_add (argv, self->argv[i]);
  self->child_resumed = self->session_id != NULL && self->resume_option != NULL;
  if (self->child_resumed)
    {
      g_ptr_array_add (argv, self->resume_option);
      g_ptr_array_add (argv, self->session_id);
    }
  g_ptr_array_add (argv, NULL);

  self->child = mend_agent_child_spawn ((const char * const *) argv->pdata,
                                        (const char * const *) self->environ_,
                                        self->cwd, &child_callbacks, self, error);
  if (self->child == NULL)
    return FALSE;

  self->n_starts++;
  g_byte_array_set_size (self->stderr_tail, 0);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_STARTS]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  return TRUE;
}

/* The observer ends the attempt */

static void
on_attempt_ended (MendStreamObserver *observer,
                  MendTurn           *turn,
                  MendFailure        *failure,
                  gpointer            user_data)
{
  MendAgentProcess *self = user_data;

  if (self->task == NULL || turn != self->task_turn)
    {
      /* Not an attempt of ours (the app drove the turn itself). */
      if (failure != NULL)
        mend_turn_fail (turn, failure);
      else
        mend_turn_succeed (turn);
      return;
    }

  finish_task (self, failure, NULL);
}

/* Stop: interrupt the agent's turn, keep the session. The next prompt
 * waits for the interrupted turn's result, which is not its own. */
static void
interrupt_task (MendAgentProcess *self)
{
  if (self->task == NULL)
    return;

  if (self->held != NULL)
    /* The prompt never reached the agent. */
    g_clear_pointer (&self->held, g_bytes_unref);
  else if (self->child != NULL)
    {
      g_autoptr(GBytes) request = interrupt_request (self);

      self->skip_results++;
      mend_agent_child_write (self->child, request);
    }

  finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                _("The turn was stopped")));
}

static void
on_task_cancelled (GCancellable     *cancellable,
                   MendAgentProcess *self)
{
  g_object_ref (self);
  interrupt_task (self);
  g_object_unref (self);
}

/* MendSender */

static void
mend_agent_process_send_async (MendSender          *sender,
                               MendTurn            *turn,
                               guint                attempt,
                               int                  io_priority,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (sender);
  g_autoptr(GTask) task = NULL;
  g_autoptr(GBytes) line = NULL;
  GError *error = NULL;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_agent_process_send_async);
  g_task_set_priority (task, io_priority);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (self->chat == NULL || self->observer == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                               _("The agent process has no chat to feed"));
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
  if (cancellable != NULL)
    self->cancelled_id = g_signal_connect (cancellable, "cancelled",
                                           G_CALLBACK (on_task_cancelled), self);

  /* The attempt is kept first: a handler of the start's notifications
   * may stop it, or end the agent again, and it is over then. */
  if (self->child == NULL && !start_child (self, &error))
    {
      finish_task (self, NULL, error);
      return;
    }
  if (self->task != task)
    return;

  line = user_message (mend_turn_get_prompt (turn));
  if (self->skip_results > 0)
    {
      g_debug ("The prompt waits for the result of the turn that was interrupted");
      g_clear_pointer (&self->held, g_bytes_unref);
      self->held = g_steal_pointer (&line);
    }
  else
    mend_agent_child_write (self->child, line);
}

static MendFailure *
mend_agent_process_send_finish (MendSender    *sender,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, sender), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
mend_agent_process_sender_init (MendSenderInterface *iface)
{
  iface->send_async = mend_agent_process_send_async;
  iface->send_finish = mend_agent_process_send_finish;
}

/* GObject */

static void
on_chat_gone (gpointer  data,
              GObject  *where_the_object_was)
{
  MendAgentProcess *self = data;

  self->chat = NULL;
  if (self->observer != NULL)
    {
      mend_stream_observer_set_attempt_func (self->observer, NULL, NULL);
      g_clear_object (&self->observer);
    }
}

static void
mend_agent_process_dispose (GObject *object)
{
  MendAgentProcess *self = (MendAgentProcess *) object;

  if (self->task != NULL)
    finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CLOSED,
                                                  _("The agent process was closed")));
  if (self->child != NULL)
    mend_agent_child_close (g_steal_pointer (&self->child));
  g_clear_pointer (&self->held, g_bytes_unref);

  if (self->chat != NULL)
    {
      g_object_weak_unref (G_OBJECT (self->chat), on_chat_gone, self);
      on_chat_gone (self, NULL);
    }

  G_OBJECT_CLASS (mend_agent_process_parent_class)->dispose (object);
}

static void
mend_agent_process_finalize (GObject *object)
{
  MendAgentProcess *self = (MendAgentProcess *) object;

  g_clear_pointer (&self->argv, g_strfreev);
  g_clear_pointer (&self->environ_, g_strfreev);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->resume_option, g_free);
  g_clear_pointer (&self->session_id, g_free);
  g_clear_pointer (&self->stderr_tail, g_byte_array_unref);

  G_OBJECT_CLASS (mend_agent_process_parent_class)->finalize (object);
}

static void
mend_agent_process_constructed (GObject *object)
{
  MendAgentProcess *self = (MendAgentProcess *) object;

  G_OBJECT_CLASS (mend_agent_process_parent_class)->constructed (object);

  if (self->argv == NULL || self->argv[0] == NULL)
    g_critical ("A MendAgentProcess needs a command line");
}

static void
mend_agent_process_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (object);

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
    case PROP_RESUME_OPTION:
      g_value_set_string (value, self->resume_option);
      break;
    case PROP_CHAT:
      g_value_set_object (value, self->chat);
      break;
    case PROP_OBSERVER:
      g_value_set_object (value, self->observer);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, self->child != NULL);
      break;
    case PROP_N_STARTS:
      g_value_set_uint (value, self->n_starts);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_agent_process_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (object);

  switch (prop_id)
    {
    case PROP_ARGV:
      self->argv = g_value_dup_boxed (value);
      break;
    case PROP_ENVIRON:
      mend_agent_process_set_environ (self, g_value_get_boxed (value));
      break;
    case PROP_CWD:
      mend_agent_process_set_cwd (self, g_value_get_string (value));
      break;
    case PROP_RESUME_OPTION:
      mend_agent_process_set_resume_option (self, g_value_get_string (value));
      break;
    case PROP_CHAT:
      mend_agent_process_set_chat (self, g_value_get_object (value));
      break;
    case PROP_SESSION_ID:
      mend_agent_process_set_session_id (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_agent_process_class_init (MendAgentProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_agent_process_constructed;
  object_class->dispose = mend_agent_process_dispose;
  object_class->finalize = mend_agent_process_finalize;
  object_class->get_property = mend_agent_process_get_property;
  object_class->set_property = mend_agent_process_set_property;

  /**
   * MendAgentProcess:argv:
   *
   * The agent's command line, program first (looked up in `PATH` when it
   * has no slash).
   */
  properties[PROP_ARGV] =
    g_param_spec_boxed ("argv", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:environ:
   *
   * The agent's environment, as `NAME=VALUE` strings, or %NULL to inherit
   * this process's. Used from the next start of the agent.
   */
  properties[PROP_ENVIRON] =
    g_param_spec_boxed ("environ", NULL, NULL,
                        G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:cwd:
   *
   * The agent's working directory, or %NULL for this process's.
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:resume-option:
   *
   * The option that, followed by a session id, restarts the agent on that
   * session (`--resume` for Claude Code), or %NULL when the agent cannot
   * resume: then a restarted agent starts a new session.
   */
  properties[PROP_RESUME_OPTION] =
    g_param_spec_string ("resume-option", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:chat:
   *
   * The chat that the agent's output feeds: the chat whose
   * [property@Mend.Chat:sender] this process is. Not a reference: the
   * chat holds the process.
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:observer:
   *
   * The observer that reads the agent's output into the chat, for
   * [signal@Mend.StreamObserver::agent-retry] and its counters; %NULL
   * while there is no chat.
   */
  properties[PROP_OBSERVER] =
    g_param_spec_object ("observer", NULL, NULL,
                         MEND_TYPE_STREAM_OBSERVER,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:session-id:
   *
   * The agent's session, as its `system`/`init` line reported it, or as
   * set to resume a session from before. A restarted agent resumes it.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:running:
   *
   * Whether the agent runs now.
   */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAgentProcess:n-starts:
   *
   * How many times the agent was started: more than one after it died
   * and was started again.
   */
  properties[PROP_N_STARTS] =
    g_param_spec_uint ("n-starts", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_agent_process_init (MendAgentProcess *self)
{
  self->stderr_tail = g_byte_array_new ();
}

/**
 * mend_agent_process_new:
 * @argv: (array zero-terminated=1): the agent's command line, program first
 *
 * Creates a sender that runs @argv, an agent that reads stream-json user
 * messages on its standard input and writes Claude Code's stream-json on
 * its standard output. It starts with the first attempt.
 *
 * Returns: (transfer full): a new agent process
 */
MendAgentProcess *
mend_agent_process_new (const char * const *argv)
{
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  return g_object_new (MEND_TYPE_AGENT_PROCESS, "argv", argv, NULL);
}

/**
 * mend_agent_process_new_claude_code:
 * @path: (nullable) (type filename): the `claude` program, or %NULL to
 *   look `claude` up in `PATH`
 *
 * Creates a sender that runs the Claude Code CLI in stream-json mode:
 * `claude -p --input-format stream-json --output-format stream-json
 * --verbose`, restarted with `--resume SESSION` after it died.
 *
 * Returns: (transfer full): a new agent process
 */
MendAgentProcess *
mend_agent_process_new_claude_code (const char *path)
{
  const char *argv[] = {
    path ? path : "claude", "-p",
    "--input-format", "stream-json",
    "--output-format", "stream-json",
    "--verbose",
    NULL
  };

  return g_object_new (MEND_TYPE_AGENT_PROCESS,
                       "argv", argv,
                       "resume-option", "--resume",
                       NULL);
}

/**
 * mend_agent_process_get_argv:
 * @self: an agent process
 *
 * Gets the agent's command line.
 *
 * Returns: (transfer none) (array zero-terminated=1): the command line
 */
const char * const *
mend_agent_process_get_argv (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return (const char * const *) self->argv;
}

/**
 * mend_agent_process_get_environ:
 * @self: an agent process
 *
 * Gets the agent's environment.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   environment, or %NULL when the agent inherits this process's
 */
const char * const *
mend_agent_process_get_environ (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return (const char * const *) self->environ_;
}

/**
 * mend_agent_process_set_environ:
 * @self: an agent process
 * @environ_: (nullable) (array zero-terminated=1): `NAME=VALUE` strings,
 *   or %NULL to inherit this process's environment
 *
 * Sets the agent's environment, from its next start.
 */
void
mend_agent_process_set_environ (MendAgentProcess   *self,
                                const char * const *environ_)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));

  if (mend_environ_replace (&self->environ_, environ_))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENVIRON]);
}

/**
 * mend_agent_process_setenv:
 * @self: an agent process
 * @name: a variable's name
 * @value: (nullable): its value, or %NULL to remove it
 *
 * Sets one variable of the agent's environment, from its next start. The
 * first change starts from this process's environment.
 */
void
mend_agent_process_setenv (MendAgentProcess *self,
                           const char       *name,
                           const char       *value)
{
  char **env;

  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));
  g_return_if_fail (name != NULL && name[0] != '\0' && strchr (name, '=') == NULL);

  env = mend_environ_with (self->environ_, name, value);
  mend_agent_process_set_environ (self, (const char * const *) env);
  g_strfreev (env);
}

/**
 * mend_agent_process_get_cwd:
 * @self: an agent process
 *
 * Gets the agent's working directory.
 *
 * Returns: (nullable) (type filename): the directory, or %NULL
 */
const char *
mend_agent_process_get_cwd (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->cwd;
}

/**
 * mend_agent_process_set_cwd:
 * @self: an agent process
 * @cwd: (nullable) (type filename): a directory, or %NULL for this
 *   process's
 *
 * Sets the agent's working directory, from its next start.
 */
void
mend_agent_process_set_cwd (MendAgentProcess *self,
                            const char       *cwd)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));

  if (set_str (&self->cwd, cwd))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * mend_agent_process_get_resume_option:
 * @self: an agent process
 *
 * Gets the option that restarts the agent on its session.
 *
 * Returns: (nullable): the option, or %NULL
 */
const char *
mend_agent_process_get_resume_option (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->resume_option;
}

/**
 * mend_agent_process_set_resume_option:
 * @self: an agent process
 * @option: (nullable): an option such as `--resume`, or %NULL
 *
 * Sets the option that, followed by the session id, restarts the agent on
 * its session.
 */
void
mend_agent_process_set_resume_option (MendAgentProcess *self,
                                      const char       *option)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));

  if (set_str (&self->resume_option, option))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESUME_OPTION]);
}

/**
 * mend_agent_process_get_chat:
 * @self: an agent process
 *
 * Gets the chat the agent's output feeds.
 *
 * Returns: (transfer none) (nullable): the chat, or %NULL
 */
MendChat *
mend_agent_process_get_chat (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->chat;
}

/**
 * mend_agent_process_set_chat:
 * @self: an agent process
 * @chat: (nullable): the chat whose sender @self is
 *
 * Sets the chat that the agent's output feeds. It must be set before the
 * first attempt; the process does not hold a reference on it.
 */
void
mend_agent_process_set_chat (MendAgentProcess *self,
                             MendChat         *chat)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));
  g_return_if_fail (chat == NULL || MEND_IS_CHAT (chat));

  if (self->chat == chat)
    return;

  if (self->chat != NULL)
    {
      g_object_weak_unref (G_OBJECT (self->chat), on_chat_gone, self);
      on_chat_gone (self, NULL);
    }

  if (chat != NULL)
    {
      self->chat = chat;
      g_object_weak_ref (G_OBJECT (chat), on_chat_gone, self);
      self->observer = mend_stream_observer_new (chat);
      /* The chat holds this process as its sender: no reference back. */
      mend_stream_observer_hold_chat_weakly (self->observer);
      mend_stream_observer_set_attempt_func (self->observer, on_attempt_ended, self);
    }

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CHAT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_OBSERVER]);
}

/**
 * mend_agent_process_get_observer:
 * @self: an agent process
 *
 * Gets the observer that reads the agent's output into the chat.
 *
 * Returns: (transfer none) (nullable): the observer, or %NULL without a
 *   chat
 */
MendStreamObserver *
mend_agent_process_get_observer (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->observer;
}

/**
 * mend_agent_process_get_session_id:
 * @self: an agent process
 *
 * Gets the agent's session id.
 *
 * Returns: (nullable): the session id, or %NULL before the agent said it
 */
const char *
mend_agent_process_get_session_id (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->session_id;
}

/**
 * mend_agent_process_set_session_id:
 * @self: an agent process
 * @session_id: (nullable): a session id, or %NULL
 *
 * Sets the session that the agent resumes at its next start, such as a
 * session of an earlier run of the app.
 */
void
mend_agent_process_set_session_id (MendAgentProcess *self,
                                   const char       *session_id)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));

  if (set_str (&self->session_id, session_id))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION_ID]);
}

/**
 * mend_agent_process_get_running:
 * @self: an agent process
 *
 * Gets whether the agent runs now.
 *
 * Returns: %TRUE while it runs
 */
gboolean
mend_agent_process_get_running (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), FALSE);

  return self->child != NULL;
}

/**
 * mend_agent_process_get_identifier:
 * @self: an agent process
 *
 * Gets the running agent's process id, as
 * [method@Gio.Subprocess.get_identifier] gives it.
 *
 * Returns: (nullable): the identifier, or %NULL when the agent does not run
 */
const char *
mend_agent_process_get_identifier (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return self->child ? mend_agent_child_get_identifier (self->child) : NULL;
}

/**
 * mend_agent_process_get_n_starts:
 * @self: an agent process
 *
 * Gets how many times the agent was started.
 *
 * Returns: the number of starts
 */
guint
mend_agent_process_get_n_starts (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), 0);

  return self->n_starts;
}

/**
 * mend_agent_process_dup_stderr:
 * @self: an agent process
 *
 * Gets the end of what the agent wrote on its standard error since it
 * last started, at most %MEND_AGENT_PROCESS_STDERR_MAX_BYTES, with
 * credentials redacted.
 *
 * Returns: (transfer full) (nullable): the text, or %NULL when there is
 *   none
 */
char *
mend_agent_process_dup_stderr (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);

  return stderr_text (self);
}

/**
 * mend_agent_process_terminate:
 * @self: an agent process
 *
 * Ends the agent: it is killed, and an attempt in flight fails as if it
 * had died. The next attempt starts it again, on the same session.
 */
void
mend_agent_process_terminate (MendAgentProcess *self)
{
  g_return_if_fail (MEND_IS_AGENT_PROCESS (self));

  child_ended (self);
}
