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

#include "mend-agent-private.h"
#include "mend-chat.h"
#include "mend-agent-process.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-stream-observer-private.h"
#include "mend-turn-private.h"

/**
 * MendAgentProcess:
 *
 * Runs an agent command-line program, such as the Claude Code CLI, as a
 * [iface@Mend.Sender] for a [class@Mend.Chat].
 *
 * The agent runs as one long-lived child process (see [class@Mend.Agent])
 * that speaks stream-json on its standard input and output (for Claude
 * Code, `claude -p --input-format stream-json --output-format stream-json
 * --verbose`; see [ctor@Mend.AgentProcess.new_claude_code]):
 *
 * - Each attempt of a turn writes the turn's prompt as one user message,
 *   `{"type":"user","message":{"role":"user","content":…}}`.
 * - The agent's output feeds the chat whose sender the process is through
 *   the process's own [class@Mend.StreamObserver]: subagents, the agent's
 *   own turns and its own retries reach the chat as they happen, and the
 *   `result` of the turn finishes the attempt, as a success or with the
 *   failure read from it.
 * - A Stop (the attempt's cancellable) interrupts the agent's current turn
 *   with a stream-json control request; the session and the process stay,
 *   and the interrupted turn's result is not taken for the next one's.
 * - An agent that exits or crashes during an attempt fails it as a
 *   dropped connection, a transient failure, with the end of its standard
 *   error in the failure's text — at its exit, even while a process it
 *   started holds its output open. The next attempt starts it again on
 *   the same session, with [property@Mend.AgentProcess:resume-option] and
 *   the session id the agent reported in its `system`/`init` line.
 * - The agent's standard input is a socket, not a pipe: writing to an
 *   agent that stopped reading or exited fails the write, and never
 *   raises `SIGPIPE` in the app, whether or not the app ignores that
 *   signal.
 *
 * Make the process the chat's sender; that is all the wiring there is:
 *
 * ```c
 * g_autoptr(MendAgentProcess) agent = mend_agent_process_new_claude_code (NULL);
 * g_autoptr(MendChat) chat = mend_chat_new_with_sender (MEND_SENDER (agent), NULL);
 * g_autoptr(GError) error = NULL;
 *
 * mend_chat_submit (chat, "Review the diff", NULL, &error);
 * ```
 *
 * The process starts with the first attempt and runs until
 * [method@Mend.Agent.terminate] or the object's end.
 */

struct _MendAgentProcess
{
  MendAgent           parent_instance;

  char               *resume_option;
  MendStreamObserver *observer;
  guint               request_counter;
  gboolean            child_resumed;  /* started on a session of before */
  GBytes             *held;           /* a prompt held until an interrupted turn's result */
  guint               skip_results;
};

enum {
  PROP_0,
  PROP_RESUME_OPTION,
  PROP_OBSERVER,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendAgentProcess, mend_agent_process, MEND_TYPE_AGENT)

static GParamSpec *properties[N_PROPS];

#define AGENT(self) MEND_AGENT (self)

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

static void
note_session (MendAgentProcess *self,
              JsonObject       *object)
{
  JsonNode *node = json_object_get_member (object, "session_id");

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_STRING)
    mend_agent_set_session_id (AGENT (self), json_node_get_string (node));
}

static void
mend_agent_process_line (MendAgent  *agent,
                         const char *line,
                         gsize       length)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (agent);
  /* Read as the observer reads it: "r\u0065sult" is "result". */
  g_autofree char *plain = mend_json_plain_escapes (line, length);

  if (plain != NULL)
    {
      line = plain;
      length = strlen (plain);
    }

  /* Only a line that names "result" or "init" (in quotes, which no
   * escaped string makes once the escapes above are gone) can be one; it
   * is read as JSON, whatever its spacing and the order of its members. */
  if (memmem (line, length, "\"result\"", 8) != NULL || memmem (line, length, "\"init\"", 6) != NULL)
    {
      g_autoptr(JsonNode) root = mend_json_parse (line, length, NULL);
      JsonObject *object = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
      const char *type = object ? mend_json_get_string (object, "type") : NULL;
      gboolean is_result = g_strcmp0 (type, "result") == 0;

      if (is_result || (g_strcmp0 (type, "system") == 0 &&
                        g_strcmp0 (mend_json_get_string (object, "subtype"), "init") == 0))
        note_session (self, object);

      /* The result of a turn that Stop interrupted is not the next one's. */
      if (is_result && object != NULL && self->skip_results > 0 &&
          !mend_stream_observer_is_own_turn_result (object))
        {
          MendAgentChild *child = mend_agent_get_child (agent);

          self->skip_results--;
          if (self->skip_results == 0 && self->held != NULL && child != NULL)
            {
              g_autoptr(GBytes) held = g_steal_pointer (&self->held);

              mend_agent_child_write (child, held);
            }
          return;
        }
    }

  mend_stream_observer_feed_line (self->observer, line, length);
}

/* The agent is gone, or was made to go: the attempt in flight fails as a
 * dropped connection. */
static void
mend_agent_process_ended (MendAgent *agent)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (agent);

  /* A resumed agent that ended before it wrote anything could not take
   * up its session (Claude Code writes its transcript a moment after a
   * turn starts, so a crash right at the start leaves none): the next
   * start begins a new one rather than fail the same way again. */
  if (self->child_resumed && mend_agent_get_last_n_lines (agent) == 0)
    mend_agent_set_session_id (agent, NULL);

  g_clear_pointer (&self->held, g_bytes_unref);
  self->skip_results = 0;

  if (mend_agent_get_turn (agent) != NULL)
    {
      g_autoptr(MendFailure) failure = mend_agent_new_exit_failure (agent);

      mend_agent_finish_attempt (agent, failure, NULL);
    }

  /* The agent's own turn, if one ran, is over too. Not the app's: its
   * attempt was ours, ended above, and a turn its handlers started since
   * is another agent's to answer. */
  mend_stream_observer_end_own_turn (self->observer);
}

static gboolean
mend_agent_process_start (MendAgent  *agent,
                          GError    **error)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (agent);
  const char *session_id = mend_agent_get_session_id (agent);
  const char *resume[] = { self->resume_option, session_id, NULL };

  /* A session id that reads as an option (from saved state, or an app)
   * would be one of the CLI's options after the resume option: the agent
   * starts a session of its own instead. */
  self->child_resumed = session_id != NULL && self->resume_option != NULL && session_id[0] != '-';
  if (session_id != NULL && session_id[0] == '-')
    mend_debug ("Session %s is not resumed: it reads as an option", session_id);
  return mend_agent_spawn (agent, self->child_resumed ? resume : NULL, error);
}

/* The observer ends the attempt */

static void
on_attempt_ended (MendStreamObserver *observer,
                  MendTurn           *turn,
                  MendFailure        *failure,
                  gpointer            user_data)
{
  MendAgent *agent = user_data;

  if (turn != mend_agent_get_turn (agent))
    {
      /* Not an attempt of ours (the app drove the turn itself). */
      if (failure != NULL)
        mend_turn_fail (turn, failure);
      else
        mend_turn_succeed (turn);
      return;
    }

  mend_agent_finish_attempt (agent, failure, NULL);
}

/* Stop: interrupt the agent's turn, keep the session. The next prompt
 * waits for the interrupted turn's result, which is not its own. */
static void
mend_agent_process_cancelled (MendAgent *agent)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (agent);
  MendAgentChild *child = mend_agent_get_child (agent);

  if (self->held != NULL)
    /* The prompt never reached the agent. */
    g_clear_pointer (&self->held, g_bytes_unref);
  else if (child != NULL)
    {
      g_autoptr(GBytes) request = interrupt_request (self);

      self->skip_results++;
      mend_agent_child_write (child, request);
    }
}

static void
mend_agent_process_attempt (MendAgent *agent)
{
  MendAgentProcess *self = MEND_AGENT_PROCESS (agent);
  MendTurn *turn = mend_agent_get_turn (agent);
  MendChat *chat = mend_agent_get_chat (agent);
  /* The user's Retry: the CLI keeps a failed prompt in its session, so
   * it is asked to continue, and the model sees the user's words once. */
  gboolean resume = mend_turn_get_retry_of (turn) != NULL && chat != NULL;
  g_autoptr(GBytes) line = user_message (resume ? mend_chat_get_continue_prompt (chat)
                                                : mend_turn_get_prompt (turn));

  /* What the agent writes goes to this attempt when no chat is attached. */
  mend_stream_observer_set_sender_turn (self->observer, mend_agent_get_turn (agent));

  if (self->skip_results > 0)
    {
      mend_debug ("The prompt waits for the result of the turn that was interrupted");
      g_clear_pointer (&self->held, g_bytes_unref);
      self->held = g_steal_pointer (&line);
    }
  else
    mend_agent_child_write (mend_agent_get_child (agent), line);
}

/* GObject */

static void
mend_agent_process_dispose (GObject *object)
{
  MendAgentProcess *self = (MendAgentProcess *) object;

  g_clear_pointer (&self->held, g_bytes_unref);

  G_OBJECT_CLASS (mend_agent_process_parent_class)->dispose (object);
}

static void
mend_agent_process_finalize (GObject *object)
{
  MendAgentProcess *self = (MendAgentProcess *) object;

  g_clear_pointer (&self->resume_option, g_free);
  if (self->observer != NULL)
    mend_stream_observer_set_attempt_func (self->observer, NULL, NULL);
  g_clear_object (&self->observer);

  G_OBJECT_CLASS (mend_agent_process_parent_class)->finalize (object);
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
    case PROP_RESUME_OPTION:
      g_value_set_string (value, self->resume_option);
      break;
    case PROP_OBSERVER:
      g_value_set_object (value, self->observer);
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
    case PROP_RESUME_OPTION:
      mend_agent_process_set_resume_option (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_agent_process_class_init (MendAgentProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  MendAgentClass *agent_class = MEND_AGENT_CLASS (klass);

  object_class->dispose = mend_agent_process_dispose;
  object_class->finalize = mend_agent_process_finalize;
  object_class->get_property = mend_agent_process_get_property;
  object_class->set_property = mend_agent_process_set_property;

  agent_class->start = mend_agent_process_start;
  agent_class->attempt = mend_agent_process_attempt;
  agent_class->cancelled = mend_agent_process_cancelled;
  agent_class->line = mend_agent_process_line;
  agent_class->ended = mend_agent_process_ended;

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
   * MendAgentProcess:observer:
   *
   * The observer that reads the agent's output into the chat, for
   * [signal@Mend.StreamObserver::agent-retry] and its counters.
   */
  properties[PROP_OBSERVER] =
    g_param_spec_object ("observer", NULL, NULL,
                         MEND_TYPE_STREAM_OBSERVER,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_agent_process_init (MendAgentProcess *self)
{
  self->observer = mend_stream_observer_new_for_sender (MEND_SENDER (self));
  mend_stream_observer_set_attempt_func (self->observer, on_attempt_ended, self);
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
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, NULL);

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
  mend_return_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self);

  if (g_strcmp0 (self->resume_option, option) == 0)
    return;

  g_free (self->resume_option);
  self->resume_option = g_strdup (option);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESUME_OPTION]);
}

/**
 * mend_agent_process_get_observer:
 * @self: an agent process
 *
 * Gets the observer that reads the agent's output into the chat.
 *
 * Returns: (transfer none): the observer
 */
MendStreamObserver *
mend_agent_process_get_observer (MendAgentProcess *self)
{
  g_return_val_if_fail (MEND_IS_AGENT_PROCESS (self), NULL);
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, NULL);

  return self->observer;
}

