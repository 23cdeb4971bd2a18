/* mend-acp-agent.c — MendAcpAgent: a sender that drives an Agent Client Protocol agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-agent-private.h"
#include "mend-acp-attempt-private.h"
#include "mend-acp-profile-private.h"
#include "mend-acp-connection-private.h"
#include "mend-acp-failure-private.h"
#include "mend-acp-requests-private.h"
#include "mend-agent-private.h"
#include "mend-chat.h"
#include "mend-failure-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
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
 *   capabilities; subagents and typed failures asked for, see
 *   docs/agents.md), then `session/new`, or `session/load` when
 *   [property@Mend.Agent:session-id] is known and the agent offers
 *   `loadSession`.
 * - Each attempt of a turn is one `session/prompt` with the turn's prompt
 *   as text. Its `stopReason` finishes the attempt: `end_turn`,
 *   `max_tokens` and `max_turn_requests` succeed once the model's output
 *   was seen, and are an empty response (%MEND_REASON_EMPTY, retried)
 *   without it — right after a failed prompt, with the agent started
 *   again for the retry, as claude-agent-acp 0.23.1 then ends prompts
 *   falsely and answers each a prompt late; `cancelled` (or `-32800`)
 *   for a prompt libmend did not cancel is the agent's own cancellation,
 *   a transient failure; `refusal` fails the turn, never retried. A typed
 *   failure (`_meta.jetbrains.air.sessionFailure`) fails the attempt
 *   whatever the stop reason, its category deciding the class. A JSON-RPC error answer is
 *   read by [class@Mend.Failure]'s classifier, from its message and data:
 *   Claude Code's "API Error: 529 …" is a transient capacity failure, its
 *   "API Error: 401 …" a permanent one. An error code from 400 to 599 is
 *   the upstream's HTTP status, as the Gemini CLI sends it, and its message
 *   is read as that answer's body (so Gemini's per-minute 429 with
 *   "Suggested retry after 2s" is a rate limit with its wait, a daily
 *   quota a usage limit). JSON-RPC's catch-all message "Internal error"
 *   yields to what `data` says (its `message`, `details` and `error`, and
 *   codex-acp's `codex_error_info`), and an "Internal error: " before the
 *   real message is dropped.
 * - `session/update` notifications are the attempt's output: the first
 *   message chunk, thought, tool call or plan marks the turn's output as
 *   seen ([method@Mend.Turn.note_output]) — but not the agent's own error
 *   text in a chunk ([property@Mend.AcpProfile:error-prefixes]) or a
 *   subagent's — and every update is emitted as
 *   [signal@Mend.AcpAgent::update] for the app to render. Background
 *   subagents reported in the updates feed the subagents of the chat
 *   whose sender the agent is; docs/overview.md lists the shapes read.
 * - A Stop (the attempt's cancellable) sends `session/cancel`: the attempt
 *   ends at once as stopped, the session stays, and the next prompt waits
 *   for the cancelled one's answer — for [property@Mend.AcpAgent:cancel-grace-ms]
 *   at most: an agent that has not answered by then is ended and started
 *   again, and the next prompt goes to the session it loads.
 * - An agent that kept a failed (or empty) prompt in its history (its
 *   profile says) is asked, on the turn's next attempt, to continue: the
 *   chat's continue prompt, so that the model sees the user's words once.
 *   So is the user's Retry of such a turn. A session opened new (the agent
 *   started again cannot load its own) never had the prompt: it gets it.
 * - An agent that exits during an attempt fails it as a dropped
 *   connection, a transient failure, with the end of its standard error in
 *   the failure's text — at its exit, even while a process it started
 *   holds its output open (see [class@Mend.Agent]); the next attempt
 *   starts it again and loads the session.
 * - Requests the agent makes of the client (`session/request_permission`,
 *   `fs/read_text_file`, `fs/write_text_file`, anything else) are emitted
 *   as [signal@Mend.AcpAgent::request]. Unhandled, they are denied: a
 *   permission request is answered with its reject option (or as
 *   cancelled), any other request with a JSON-RPC error. At most
 *   %MEND_ACP_AGENT_MAX_REQUESTS requests (and
 *   %MEND_ACP_AGENT_MAX_REQUEST_BYTES) are in flight at once, answers the
 *   agent has not read yet included; past that a request is answered at
 *   once with a JSON-RPC error, and an agent that reads none of those
 *   either gets no answer, so that its memory here stays bounded.
 *
 * Make the agent the chat's sender; that is all the wiring there is:
 *
 * ```c
 * g_autoptr(MendAcpAgent) agent = mend_acp_agent_new_claude_code (NULL);
 * g_autoptr(MendChat) chat = mend_chat_new_with_sender (MEND_SENDER (agent), NULL);
 * g_autoptr(GError) error = NULL;
 *
 * mend_chat_submit (chat, "Review the diff", NULL, &error);
 * ```
 */

struct _MendAcpAgent
{
  MendAgent          parent_instance;

  char              *stop_reason;
  MendAcpSubagents  *subagents;
  MendAcpRequests   *requests;

  MendAcpConnection *conn;       /* the session, while the agent runs */
  guint              n_loads;
  guint              n_cancels;

  guint              prompt;     /* the attempt's prompt, once sent */
  MendAcpAttempt    *attempt;    /* what the prompt in flight brought */
  gboolean           failed;     /* the run's last prompt answered was an error */
  gboolean           after_cancel; /* a Stop cancelled the prompt before this one */
  char              *sent;       /* the text of the attempt's prompt, once sent */
  char              *dropped;    /* a failed prompt the agent did not keep */
  char              *kept_turn;  /* the turn whose failed prompt the agent kept */
  gboolean           history;    /* the session has prompts of ours: loaded, or prompted */
  MendFailure       *lost;       /* a lost session no attempt was told of */

  MendAcpProfile    *profile;    /* the app's, or the agent's from initialize */
  gboolean           app_profile;

  guint              cancel_grace_ms;
  guint              cancelled;  /* a prompt cancelled, not answered yet */
  GSource           *grace;      /* its grace period, in real time */
};

enum {
  PROP_0,
  PROP_STOP_REASON,
  PROP_CANCEL_GRACE_MS,
  PROP_PROFILE,
  N_PROPS
};

enum {
  UPDATE,
  REQUEST,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendAcpAgent, mend_acp_agent, MEND_TYPE_AGENT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

#define AGENT(self) MEND_AGENT (self)

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
  self->prompt = 0;
  mend_agent_finish_attempt (AGENT (self), failure, error);
}

static void end_run (MendAcpAgent *self,
                     MendFailure  *failure);
static gboolean keeps_prompt (MendAcpAgent *self);

/* The attempt's prompt was answered as failed (or empty), and the agent
 * keeps it: the turn's next attempt asks it to continue. */
static void
keep_failed_prompt (MendAcpAgent *self)
{
  MendTurn *turn = mend_agent_get_turn (AGENT (self));

  if (turn == NULL || !keeps_prompt (self))
    return;
  g_free (self->kept_turn);
  self->kept_turn = g_strdup (mend_turn_get_id (turn));
}

static void
finish_with_stop_reason (MendAcpAgent *self,
                         const char   *stop_reason,
                         gboolean      after_cancel)
{
  g_autoptr(MendFailure) failure = NULL;
  MendTurn *turn = mend_agent_get_turn (AGENT (self));

  if (g_strcmp0 (stop_reason, "end_turn") == 0 ||
      g_strcmp0 (stop_reason, "max_tokens") == 0 ||
      g_strcmp0 (stop_reason, "max_turn_requests") == 0)
    {
      /* A prompt that ended with nothing from the model was not answered:
       * the Gemini CLI ends an empty answer so. */
      if (!mend_acp_attempt_get_output (self->attempt))
        failure = mend_failure_new_empty_response ();
      /* A restreaming agent's text counts once its answer is whole. The
       * prompt was answered: nothing failed to continue. */
      else
        {
          g_clear_pointer (&self->kept_turn, g_free);
          if (turn != NULL)
            mend_turn_note_output (turn);
        }
      /* Right after a failed prompt it may be worse: claude-agent-acp
       * 0.23.1 ends the next prompt at once, before any model request,
       * on the failed one's late end; that prompt's answer then streams
       * into the prompt after, and every answer after comes one prompt
       * late. Its run is ended, so that the retry goes to a fresh one
       * that loads the session. */
      if (!mend_acp_attempt_get_output (self->attempt) && self->failed)
        {
          mend_debug ("The agent ended a prompt after a failed one with no output: starting it again");
          end_run (self, failure);
          return;
        }
      /* An empty answer stays in the agent's history as a failed prompt
       * does. Not the false end above, nor the one claude-agent-acp
       * 0.23.1 gives the prompt after a cancelled one: that prompt never
       * reached it. */
      if (failure != NULL && !after_cancel)
        keep_failed_prompt (self);
      finish_task (self, failure, NULL);
      return;
    }

  /* A Stop's cancelled prompt is no attempt's any more: this one was
   * cancelled by the agent itself, and is no Stop of the user's. */
  if (g_strcmp0 (stop_reason, "cancelled") == 0)
    failure = mend_acp_failure_new_own_cancel (stop_reason);
  else if (g_strcmp0 (stop_reason, "refusal") == 0)
    failure = mend_failure_new_from_text (_("The agent refused to continue the turn"));
  else
    {
      g_autofree char *text = g_strdup_printf (_("The agent ended the turn with an unknown stop reason: %s"),
                                               stop_reason ? stop_reason : "null");

      failure = mend_failure_new_from_text (text);
    }
  finish_task (self, failure, NULL);
}

static gboolean
is_continue_prompt (MendAcpAgent *self,
                    const char   *text)
{
  MendChat *chat = mend_agent_get_chat (AGENT (self));

  return chat != NULL && g_strcmp0 (mend_chat_get_continue_prompt (chat), text) == 0;
}

/* Whether the agent keeps a failed prompt in its history (its profile
 * says; an unknown agent is taken to keep it), with a chat to ask it to
 * continue. */
static gboolean
keeps_prompt (MendAcpAgent *self)
{
  return mend_agent_get_chat (AGENT (self)) != NULL &&
         (self->profile == NULL || mend_acp_profile_get_keeps_failed_prompt (self->profile));
}

/* Sends the attempt's prompt once the session is open and no earlier
 * prompt (a cancelled one) waits for its answer. */
static void
maybe_prompt (MendAcpAgent *self)
{
  MendTurn *turn = mend_agent_get_turn (AGENT (self));

  if (turn == NULL || self->prompt != 0 || self->conn == NULL ||
      !mend_acp_connection_can_prompt (self->conn))
    return;

  mend_acp_attempt_reset (self->attempt);
  g_free (self->sent);
  self->sent = g_strdup (mend_turn_get_prompt (turn));
  /* The chat's "Continue the current turn" after a give-up, to an agent
   * that dropped the failed prompt from its history: the prompt itself,
   * once. Any other prompt leaves it behind. */
  if (self->dropped != NULL && is_continue_prompt (self, self->sent))
    {
      g_free (self->sent);
      self->sent = g_steal_pointer (&self->dropped);
    }
  /* The user's Retry of a turn whose prompt the agent kept, or the next
   * attempt of a turn whose prompt the agent answered with a failure and
   * kept: it is asked to continue, so that the model sees the user's words
   * once. One that dropped it, or a new session that never had it, gets
   * the prompt again. */
  else if (self->dropped == NULL && self->history && keeps_prompt (self) &&
           (mend_turn_get_retry_of (turn) != NULL ||
            g_strcmp0 (self->kept_turn, mend_turn_get_id (turn)) == 0))
    {
      g_free (self->sent);
      self->sent = g_strdup (mend_chat_get_continue_prompt (mend_agent_get_chat (AGENT (self))));
    }
  g_clear_pointer (&self->dropped, g_free);
  self->history = TRUE;
  self->prompt = mend_acp_connection_prompt (self->conn, mend_agent_get_session_id (AGENT (self)),
                                             self->sent);
}

/* The grace period of a cancelled prompt */

static gboolean mend_acp_agent_start (MendAgent  *agent,
                                      GError    **error);

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

  mend_debug ("The agent did not answer a cancelled prompt within %u ms: starting it again",
              self->cancel_grace_ms);
  g_object_ref (self);
  mend_acp_connection_close (g_steal_pointer (&self->conn));
  mend_agent_close_child (AGENT (self));
  /* The attempt held behind the grace period has its whole idle timeout
   * for the agent started again, not what was left of it. */
  mend_agent_note_heard (AGENT (self));
  if (mend_agent_get_turn (AGENT (self)) != NULL && self->conn == NULL &&
      !mend_acp_agent_start (AGENT (self), &error))
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
mend_acp_agent_cancelled (MendAgent *agent)
{
  MendAcpAgent *self = MEND_ACP_AGENT (agent);
  const char *session_id = mend_agent_get_session_id (agent);

  if (self->prompt != 0 && self->conn != NULL && session_id != NULL)
    {
      self->n_cancels++;
      self->after_cancel = TRUE;
      mend_acp_connection_cancel (self->conn, session_id);
      arm_grace (self, self->prompt);
    }
  /* A session that has not opened yet has as long to open as a
   * cancelled prompt has to be answered: an agent that hangs before it
   * would hold every attempt after the Stop. */
  else if (self->conn != NULL && self->grace == NULL &&
           !mend_acp_connection_can_prompt (self->conn))
    arm_grace (self, 0);

  self->prompt = 0;
}

/* The run */

/* Ends the run: the attempt in flight fails with @failure, or as a
 * dropped connection with the end of the agent's standard error. */
static void
end_run (MendAcpAgent *self,
         MendFailure  *failure)
{
  g_autoptr(MendFailure) lost = NULL;

  g_object_ref (self);
  clear_grace (self);

  if (self->conn != NULL)
    mend_acp_connection_close (g_steal_pointer (&self->conn));
  /* Its output ended: what it said on its way out is in the tail. */
  if (failure == NULL && mend_agent_get_child (AGENT (self)) != NULL)
    mend_agent_child_drain_stderr (mend_agent_get_child (AGENT (self)));
  mend_agent_close_child (AGENT (self));
  if (mend_agent_get_turn (AGENT (self)) != NULL)
    {
      if (failure == NULL)
        failure = lost = mend_agent_new_exit_failure (AGENT (self));
      finish_task (self, failure, NULL);
    }

  g_object_unref (self);
}

static void
on_session (gpointer    user_data,
            const char *session_id)
{
  mend_agent_set_session_id (user_data, session_id);
}

static void
on_ready (gpointer user_data,
          gboolean loaded)
{
  MendAcpAgent *self = user_data;

  mend_agent_note_heard (AGENT (self));
  if (loaded)
    self->n_loads++;
  /* A new session has no history: nothing kept to continue, not even
   * for the user's Retry. */
  else
    g_clear_pointer (&self->kept_turn, g_free);
  self->history = loaded;
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
  const char *session_id = mend_agent_get_session_id (AGENT (self));
  MendTurn *turn = mend_agent_get_turn (AGENT (self));
  MendChat *chat;
  g_autofree char *json = NULL;

  if (kind == NULL || session_id == NULL)
    return;
  /* A subagent's own session: its words say why it failed, if it does. */
  if (g_strcmp0 (mend_json_get_string (params, "sessionId"), session_id) != 0)
    {
      if (mend_acp_subagents_feed_session (self->subagents, mend_json_get_string (params, "sessionId"), update))
        mend_agent_note_heard (AGENT (self));
      return;
    }

  mend_agent_note_heard (AGENT (self));
  g_object_ref (self);

  if (turn != NULL && self->prompt != 0)
    mend_acp_attempt_feed (self->attempt, self->profile, turn, update);

  /* The chat is held while it is fed: a handler of its subagents may drop
   * it, and one update may start and fail a subagent. */
  chat = mend_agent_get_chat (AGENT (self));
  if (chat != NULL)
    {
      g_object_ref (chat);
      mend_acp_subagents_feed (self->subagents, mend_chat_get_subagents (chat), params, update);
      g_object_unref (chat);
    }

  json = mend_json_to_string (json_object_get_member (params, "update"));
  g_signal_emit (self, signals[UPDATE], 0, kind, json);

  g_object_unref (self);
}

/* Not silence: a request the app keeps, not answered yet (the agent
 * waits on the app), or a cancelled prompt's grace period, which bounds
 * that wait itself. */
static gboolean
waits_on_app (MendAgent *agent)
{
  MendAcpAgent *self = MEND_ACP_AGENT (agent);
  MendAcpBacklog backlog;

  mend_acp_requests_get_backlog (self->requests, &backlog);
  return backlog.n_kept > 0 || self->grace != NULL;
}

static void
on_request (gpointer    user_data,
            const char *method,
            const char *params,
            guint       serial)
{
  MendAcpAgent *self = user_data;
  gboolean handled = FALSE;

  mend_agent_note_heard (AGENT (self));
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
  gboolean ours = mend_agent_get_turn (AGENT (self)) != NULL && self->prompt == prompt;
  gboolean after_cancel = ours && self->after_cancel;
  g_autoptr(MendFailure) held_failure = NULL;

  /* The prompt after a cancelled one is answered: the next is not. */
  if (ours)
    self->after_cancel = FALSE;

  mend_agent_note_heard (AGENT (self));
  g_object_ref (self);

  if (prompt == self->cancelled)
    clear_grace (self);

  /* Error text the prompt's plain end leaves standing may be its
   * failure. */
  if (ours)
    held_failure = mend_acp_attempt_end (self->attempt, failure == NULL ? stop_reason : NULL);
  if (failure == NULL)
    failure = held_failure;

  if (failure != NULL)
    {
      self->failed = TRUE;
      if (ours)
        keep_failed_prompt (self);
      if (ours && self->profile != NULL && !mend_acp_profile_get_keeps_failed_prompt (self->profile))
        {
          g_free (self->dropped);
          self->dropped = g_strdup (self->sent);
        }
      if (ours)
        finish_task (self, failure, NULL);
    }
  else
    {
      if (set_str (&self->stop_reason, stop_reason))
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOP_REASON]);
      if (ours)
        finish_with_stop_reason (self, stop_reason, after_cancel);
      self->failed = FALSE;
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
  if (failure == NULL && self->grace != NULL && mend_agent_get_turn (AGENT (self)) != NULL &&
      self->prompt == 0)
    {
      on_grace_over (self);
      return;
    }

  end_run (self, failure);
}

/* The agent's process exited, or was terminated. */
static void
mend_acp_agent_ended (MendAgent *agent)
{
  on_ended (agent, NULL);
}

/* Another chat has the agent, or none: a prompt that the last one's agent
 * dropped is not the next chat's to continue. */
static void
on_chat_changed (MendAcpAgent *self)
{
  g_clear_pointer (&self->dropped, g_free);
  g_clear_pointer (&self->kept_turn, g_free);
  g_clear_object (&self->lost);
}

static void
on_agent (gpointer    user_data,
          const char *name)
{
  MendAcpAgent *self = user_data;

  mend_agent_note_heard (AGENT (self));
  if (self->app_profile)
    return;
  g_clear_object (&self->profile);
  self->profile = mend_acp_profile_lookup (name);
  mend_debug ("The agent is %s: profile %s", name ? name : "(unnamed)",
              mend_acp_profile_get_name (self->profile));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROFILE]);
}

/* The session could not be loaded: the attempt fails, never retried, so
 * that no answer without the history passes for the turn's; the next
 * one goes to the new session. With no attempt in flight (a Stop came
 * while the agent started), the next attempt is the one told. */
static void
on_lost (gpointer     user_data,
         MendFailure *failure)
{
  MendAcpAgent *self = user_data;
  g_autoptr(MendFailure) lost = NULL;

  lost = mend_failure_new_session_lost (mend_failure_get_message (failure));
  g_clear_object (&self->lost);
  /* The new session has no history: nothing kept to continue. */
  g_clear_pointer (&self->kept_turn, g_free);
  if (mend_agent_get_turn (AGENT (self)) == NULL)
    {
      self->lost = g_steal_pointer (&lost);
      return;
    }
  finish_task (self, lost, NULL);
}

/* A message too large to read fails the attempt with what was wrong
 * with it; the prompt it may have answered is cancelled as a Stop
 * cancels one, so that the next attempt waits a grace period at most. */
static void
on_refused (gpointer     user_data,
            MendFailure *failure)
{
  MendAcpAgent *self = user_data;

  mend_agent_note_heard (AGENT (self));
  if (mend_agent_get_turn (AGENT (self)) == NULL)
    return;
  g_object_ref (self);
  mend_acp_agent_cancelled (AGENT (self));
  finish_task (self, failure, NULL);
  g_object_unref (self);
}

static const MendAcpConnectionEvents connection_events = {
  .agent = on_agent,
  .lost = on_lost,
  .session = on_session,
  .ready = on_ready,
  .update = on_update,
  .request = on_request,
  .answered = on_answered,
  .refused = on_refused,
  .ended = on_ended,
};

static gboolean
mend_acp_agent_start (MendAgent  *agent,
                      GError    **error)
{
  MendAcpAgent *self = MEND_ACP_AGENT (agent);
  MendAgentChild *child;

  self->failed = FALSE;
  if (!mend_agent_spawn (agent, NULL, error))
    return FALSE;

  /* A handler of the start's notifications may have ended it again. */
  child = mend_agent_get_child (agent);
  if (child == NULL)
    return TRUE;
  self->conn = mend_acp_connection_start (mend_agent_child_get_stdout (child),
                                          mend_agent_child_get_stdin (child),
                                          mend_agent_get_cwd (agent),
                                          mend_agent_get_session_id (agent),
                                          self->requests, &connection_events, self, error);
  if (self->conn == NULL)
    {
      mend_agent_close_child (agent);
      return FALSE;
    }
  return TRUE;
}

static void
mend_acp_agent_attempt (MendAgent *agent)
{
  MendAcpAgent *self = MEND_ACP_AGENT (agent);

  self->prompt = 0;
  /* JSON carries text: a prompt that is not UTF-8 cannot be sent. */
  if (!g_utf8_validate (mend_turn_get_prompt (mend_agent_get_turn (agent)), -1, NULL))
    {
      finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                                    _("The prompt is not valid UTF-8")));
      return;
    }
  if (self->lost != NULL)
    {
      g_autoptr(MendFailure) lost = g_steal_pointer (&self->lost);

      finish_task (self, lost, NULL);
      return;
    }

  maybe_prompt (self);
}

/* GObject */

static void
mend_acp_agent_dispose (GObject *object)
{
  MendAcpAgent *self = (MendAcpAgent *) object;

  finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CLOSED,
                                                _("The agent was closed")));
  clear_grace (self);
  mend_acp_requests_clear (self->requests);
  if (self->conn != NULL)
    mend_acp_connection_close (g_steal_pointer (&self->conn));

  G_OBJECT_CLASS (mend_acp_agent_parent_class)->dispose (object);
}

static void
mend_acp_agent_finalize (GObject *object)
{
  MendAcpAgent *self = (MendAcpAgent *) object;

  g_free (self->stop_reason);
  g_free (self->sent);
  g_free (self->dropped);
  g_free (self->kept_turn);
  mend_acp_attempt_free (self->attempt);
  g_clear_object (&self->lost);
  g_clear_object (&self->profile);
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
    case PROP_STOP_REASON:
      g_value_set_string (value, self->stop_reason);
      break;
    case PROP_CANCEL_GRACE_MS:
      g_value_set_uint (value, self->cancel_grace_ms);
      break;
    case PROP_PROFILE:
      g_value_set_object (value, self->profile);
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
    case PROP_CANCEL_GRACE_MS:
      mend_acp_agent_set_cancel_grace_ms (self, g_value_get_uint (value));
      break;
    case PROP_PROFILE:
      mend_acp_agent_set_profile (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_acp_agent_class_init (MendAcpAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  MendAgentClass *agent_class = MEND_AGENT_CLASS (klass);

  object_class->dispose = mend_acp_agent_dispose;
  object_class->finalize = mend_acp_agent_finalize;
  object_class->get_property = mend_acp_agent_get_property;
  object_class->set_property = mend_acp_agent_set_property;

  agent_class->start = mend_acp_agent_start;
  agent_class->attempt = mend_acp_agent_attempt;
  agent_class->cancelled = mend_acp_agent_cancelled;
  agent_class->ended = mend_acp_agent_ended;

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

  /**
   * MendAcpAgent:profile:
   *
   * What libmend knows of the agent ([class@Mend.AcpProfile]): the
   * profile of its `agentInfo.name` from the `initialize` answer
   * ([func@Mend.AcpProfile.lookup]; %NULL before it), or the one the app
   * set, which is kept.
   */
  properties[PROP_PROFILE] =
    g_param_spec_object ("profile", NULL, NULL,
                         MEND_TYPE_ACP_PROFILE,
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
  self->requests = mend_acp_requests_new ();
  self->attempt = mend_acp_attempt_new ();
  self->subagents = mend_acp_subagents_new ();
  self->cancel_grace_ms = MEND_ACP_AGENT_CANCEL_GRACE_MS;
  mend_agent_set_waits_func (AGENT (self), waits_on_app);
  g_signal_connect (self, "notify::chat", G_CALLBACK (on_chat_changed), NULL);
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
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, NULL);

  return self->stop_reason;
}

guint
mend_acp_agent_get_n_loads (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, 0);

  return self->n_loads;
}

guint
mend_acp_agent_count_cancels (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), 0);
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, 0);

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
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, 0);

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
  mend_return_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self);

  if (self->cancel_grace_ms == cancel_grace_ms)
    return;
  self->cancel_grace_ms = cancel_grace_ms;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CANCEL_GRACE_MS]);
}

void
mend_acp_agent_get_request_backlog (MendAcpAgent   *self,
                                    MendAcpBacklog *backlog)
{
  g_assert (MEND_IS_ACP_AGENT (self));

  mend_acp_requests_get_backlog (self->requests, backlog);
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
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, FALSE);

  /* The agent's silence is measured again from the app's answer. */
  mend_agent_note_heard (AGENT (self));
  if (result_json == NULL)
    return mend_acp_requests_deny (self->requests, request);

  return mend_acp_requests_reply (self->requests, request, result_json);
}

/**
 * mend_acp_agent_get_profile:
 * @self: an ACP agent
 *
 * Gets [property@Mend.AcpAgent:profile].
 *
 * Returns: (transfer none) (nullable): the profile, or %NULL before the
 *   agent answered `initialize` when the app set none
 */
MendAcpProfile *
mend_acp_agent_get_profile (MendAcpAgent *self)
{
  g_return_val_if_fail (MEND_IS_ACP_AGENT (self), NULL);
  mend_return_val_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self, NULL);

  return self->profile;
}

/**
 * mend_acp_agent_set_profile:
 * @self: an ACP agent
 * @profile: (nullable): a profile, or %NULL to take the agent's from its
 *   next `initialize` answer
 *
 * Sets what libmend takes the agent to do (see [class@Mend.AcpProfile]),
 * in place of what the agent's name says: for an agent libmend does not
 * know, or one whose behaviour the app knows better.
 */
void
mend_acp_agent_set_profile (MendAcpAgent   *self,
                            MendAcpProfile *profile)
{
  g_return_if_fail (MEND_IS_ACP_AGENT (self));
  g_return_if_fail (profile == NULL || MEND_IS_ACP_PROFILE (profile));
  mend_return_if_not_owner (mend_agent_get_owner (MEND_AGENT (self)), self);

  self->app_profile = profile != NULL;
  if (g_set_object (&self->profile, profile))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROFILE]);
}
