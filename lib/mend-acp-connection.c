/* mend-acp-connection.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The protocol side of MendAcpAgent: the agent's process, its JSON-RPC
 * connection, the session, prompts, and the agent's requests.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>
#include <jsonrpc-glib.h>

#include "mend-acp-agent-private.h"
#include "mend-acp-framing-private.h"
#include "mend-agent-common-private.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-turn.h"

#define STDERR_READ_SIZE 4096
/* The Agent Client Protocol's error code for a client that must log in. */
#define ACP_AUTH_REQUIRED (-32000)



/* jsonrpc-glib consumes floating parameters only, and its message
 * builder does not make them floating: the parameters are owned here and
 * dropped after the call. */
static void
rpc_call (JsonrpcClient       *client,
          const char          *method,
          GVariant            *params,
          GAsyncReadyCallback  callback,
          gpointer             user_data)
{
  g_autoptr(GVariant) owned = g_variant_take_ref (params);

  jsonrpc_client_call_async (client, method, owned, NULL, callback, user_data);
}

static void
rpc_notify (JsonrpcClient *client,
            const char    *method,
            GVariant      *params)
{
  g_autoptr(GVariant) owned = g_variant_take_ref (params);

  jsonrpc_client_send_notification_async (client, method, owned, NULL, NULL, NULL);
}

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

Child *
mend_acp_child_ref (Child *child)
{
  g_atomic_ref_count_inc (&child->ref_count);
  return child;
}

void
mend_acp_child_unref (Child *child)
{
  if (!g_atomic_ref_count_dec (&child->ref_count))
    return;

  g_clear_object (&child->client);
  g_clear_object (&child->stdin_connection);
  g_clear_object (&child->subprocess);
  g_clear_object (&child->stderr_stream);
  g_clear_object (&child->cancellable);
  g_free (child);
}

/* Detaches @child from its agent object and ends it. */
static gboolean
close_client (gpointer data)
{
  jsonrpc_client_close (data, NULL, NULL);
  return G_SOURCE_REMOVE;
}

void
mend_acp_child_close (Child *child)
{
  child->self = NULL;
  g_cancellable_cancel (child->cancellable);
  if (child->client != NULL)
    {
      g_signal_handlers_disconnect_matched (child->client, G_SIGNAL_MATCH_DATA,
                                            0, 0, NULL, NULL, child);
      /* Not from inside one of the client's own call callbacks: closing
       * fails every call still in its table, the finishing one too. */
      g_idle_add_full (G_PRIORITY_DEFAULT, close_client,
                       g_object_ref (child->client), g_object_unref);
    }
  if (!child->exited)
    g_subprocess_force_exit (child->subprocess);
  child->exited = TRUE;
  mend_acp_child_unref (child);
}

/* The attempt in flight */


void
mend_acp_agent_finish_task (MendAcpAgent *self,
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
  self->prompt_sent = FALSE;

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, failure ? g_object_ref (failure) : NULL, g_object_unref);
}

/* The end of standard error, redacted, for a failure's text. */
char *
mend_acp_agent_stderr_text (MendAcpAgent *self)
{
  return mend_stderr_tail_text (self->stderr_tail);
}

/* JSON-RPC errors. jsonrpc-glib hands an error answer to the caller as
 * G_IO_ERROR_FAILED whose message is the error object printed as a
 * GVariant; anything else is the connection's own failure. */
static gboolean
rpc_error_read (const GError  *error,
                gint64        *code,
                char         **text)
{
  g_autoptr(GVariant) object = NULL;
  g_autoptr(GVariant) code_v = NULL;
  g_autoptr(GVariant) data = NULL;
  const char *message = NULL;
  GString *s;

  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_FAILED))
    return FALSE;
  object = g_variant_parse (G_VARIANT_TYPE_VARDICT, error->message, NULL, NULL, NULL);
  if (object == NULL || (code_v = g_variant_lookup_value (object, "code", NULL)) == NULL)
    return FALSE;

  if (g_variant_is_of_type (code_v, G_VARIANT_TYPE_INT32))
    *code = g_variant_get_int32 (code_v);
  else if (g_variant_is_of_type (code_v, G_VARIANT_TYPE_INT64))
    *code = g_variant_get_int64 (code_v);
  else if (g_variant_is_of_type (code_v, G_VARIANT_TYPE_DOUBLE))
    *code = (gint64) g_variant_get_double (code_v);
  else
    return FALSE;

  s = g_string_new (NULL);
  if (g_variant_lookup (object, "message", "&s", &message))
    g_string_append (s, message);
  data = g_variant_lookup_value (object, "data", NULL);
  if (data != NULL)
    {
      g_autoptr(JsonNode) node = json_gvariant_serialize (data);
      g_autofree char *json = mend_json_to_string (node);

      if (s->len > 0)
        g_string_append_c (s, ' ');
      g_string_append (s, json);
    }
  /* ACP's own code for "authentication required": said in the words the
   * classifier reads as an authentication failure. */
  if (*code == ACP_AUTH_REQUIRED)
    g_string_append (s, " (ACP auth_required: unauthorized)");
  if (s->len == 0)
    {
      g_autofree char *number = g_strdup_printf ("%" G_GINT64_FORMAT, *code);

      g_string_printf (s, _("The agent answered with error %s"), number);
    }
  *text = g_string_free (s, FALSE);

  return TRUE;
}

/* A failure read from a JSON-RPC error answer, or NULL when @error is not
 * one (the connection failed: the agent is gone). */
static MendFailure *
failure_from_rpc_error (const GError *error)
{
  g_autofree char *text = NULL;
  gint64 code = 0;

  if (!rpc_error_read (error, &code, &text))
    return NULL;

  g_debug ("ACP error %" G_GINT64_FORMAT ": %s", code, text);
  return mend_failure_new_from_text (text);
}

/* A call of the session's opening failed: the attempt fails with what
 * the agent said, and the agent is ended, so that the next attempt starts
 * it again rather than wait for a session that will not open. */
static void
open_failed (Child       *child,
             MendFailure *failure)
{
  MendAcpAgent *self = child->self;

  if (self == NULL || self->child != child)
    return;

  g_object_ref (self);
  mend_acp_agent_finish_task (self, failure, NULL);
  if (self->child == child)
    mend_acp_agent_child_exited (self, child);
  g_object_unref (self);
}

static void
call_failed (Child        *child,
             const GError *error)
{
  g_autoptr(MendFailure) failure = NULL;
  MendAcpAgent *self = child->self;

  if (self == NULL || self->child != child)
    return;

  failure = failure_from_rpc_error (error);
  if (failure == NULL)
    {
      g_debug ("The connection to the agent failed: %s", error->message);
      mend_acp_agent_child_exited (self, child);
      return;
    }

  open_failed (child, failure);
}

/* Opening the session */

static const char *
session_cwd (MendAcpAgent *self,
             char        **owned)
{
  if (self->cwd != NULL && g_path_is_absolute (self->cwd))
    return self->cwd;
  *owned = self->cwd ? g_canonicalize_filename (self->cwd, NULL) : g_get_current_dir ();
  return *owned;
}

static void open_session (MendAcpAgent *self,
                          Child        *child,
                          gboolean      load);

static void
session_ready (MendAcpAgent *self)
{
  self->ready = TRUE;
  self->loading = FALSE;
  mend_acp_agent_maybe_prompt (self);
}

static void
on_session_new (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(Child) child = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  const char *session_id = NULL;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      call_failed (child, error);
      return;
    }
  if (child->self == NULL || child->self->child != child)
    return;

  if (reply == NULL || !g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT) ||
      !g_variant_lookup (reply, "sessionId", "&s", &session_id))
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (_("The agent opened no session"));

      open_failed (child, failure);
      return;
    }

  mend_acp_agent_set_session_id (child->self, session_id);
  session_ready (child->self);
}

static void
on_session_load (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(Child) child = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  MendAcpAgent *self = child->self;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      if (self == NULL || self->child != child)
        return;
      if (failure_from_rpc_error (error) == NULL)
        {
          mend_acp_agent_child_exited (self, child);
          return;
        }
      /* The agent could not take the session up: start a new one. */
      g_debug ("The agent could not load session %s: %s", self->session_id, error->message);
      self->loading = FALSE;
      mend_acp_agent_set_session_id (self, NULL);
      open_session (self, child, FALSE);
      return;
    }
  if (self == NULL || self->child != child)
    return;

  self->n_loads++;
  session_ready (self);
}

static void
open_session (MendAcpAgent *self,
              Child        *child,
              gboolean      load)
{
  g_autofree char *owned = NULL;
  const char *cwd = session_cwd (self, &owned);

  if (load)
    {
      self->loading = TRUE;
      rpc_call (child->client, "session/load",
                JSONRPC_MESSAGE_NEW ("sessionId", JSONRPC_MESSAGE_PUT_STRING (self->session_id),
                                     "cwd", JSONRPC_MESSAGE_PUT_STRING (cwd),
                                     "mcpServers", "[", "]"),
                on_session_load, mend_acp_child_ref (child));
    }
  else
    rpc_call (child->client, "session/new",
              JSONRPC_MESSAGE_NEW ("cwd", JSONRPC_MESSAGE_PUT_STRING (cwd),
                                   "mcpServers", "[", "]"),
              on_session_new, mend_acp_child_ref (child));
}

static void
on_initialized (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(Child) child = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) capabilities = NULL;
  g_autoptr(GError) error = NULL;
  MendAcpAgent *self = child->self;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      call_failed (child, error);
      return;
    }
  if (self == NULL || self->child != child)
    return;

  if (reply != NULL && g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT))
    capabilities = g_variant_lookup_value (reply, "agentCapabilities", G_VARIANT_TYPE_VARDICT);
  if (capabilities != NULL)
    g_variant_lookup (capabilities, "loadSession", "b", &child->can_load);

  open_session (self, child, self->session_id != NULL && child->can_load);
}

/* What the agent sends */

static void
on_notification (JsonrpcClient *client,
                 const char    *method,
                 GVariant      *params,
                 Child         *child)
{
  MendAcpAgent *self = child->self;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *json = NULL;
  JsonObject *object;
  JsonObject *update;
  const char *kind;

  if (self == NULL || self->child != child || params == NULL ||
      g_strcmp0 (method, "session/update") != 0)
    return;

  node = json_gvariant_serialize (params);
  object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  update = object ? mend_json_get_object (object, "update") : NULL;
  kind = update ? mend_json_get_string (update, "sessionUpdate") : NULL;
  if (kind == NULL ||
      g_strcmp0 (mend_json_get_string (object, "sessionId"), self->session_id) != 0)
    return;

  /* A load replays the session's history: not this turn's output. */
  if (self->loading)
    return;

  g_object_ref (self);

  if (self->task_turn != NULL && self->prompt_sent && mend_acp_update_is_output (update))
    mend_turn_note_output (self->task_turn);

  if (self->chat != NULL)
    mend_acp_subagents_feed (self->subagents, self->chat, object, update);

  json = mend_json_to_string (json_object_get_member (object, "update"));
  g_signal_emit_by_name (self, "update", kind, json);

  g_object_unref (self);
}

static void
on_client_failed (JsonrpcClient *client,
                  Child         *child)
{
  if (child->self != NULL)
    mend_acp_agent_child_exited (child->self, child);
}

void
mend_acp_agent_child_exited (MendAcpAgent *self,
                             Child        *child)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  GHashTableIter iter;
  gpointer value;

  if (self->child != child)
    return;

  g_object_ref (self);

  text = mend_acp_agent_stderr_text (self);
  if (text != NULL)
    error = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                         _("The agent exited before the turn's result: %s"), text);
  else
    error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                 _("The agent exited before the turn's result"));

  /* Requests of the run that ended cannot be answered any more. */
  g_hash_table_iter_init (&iter, self->requests);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Request *) value)->child == child)
      g_hash_table_iter_remove (&iter);

  self->child = NULL;
  self->ready = FALSE;
  self->loading = FALSE;
  self->prompt_busy = FALSE;
  mend_acp_child_close (child);

  if (self->task != NULL)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_error (error);

      mend_acp_agent_finish_task (self, failure, NULL);
    }

  g_object_notify (G_OBJECT (self), "running");
  g_object_unref (self);
}

static void
on_waited (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(Child) child = user_data;

  /* Not the end of the run yet: what the agent wrote before it exited
   * (an update, the prompt's answer) is still to be read. The end of its
   * output, where the JSON-RPC client fails, is. */
  if (g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL))
    child->exited = TRUE;
}

static void read_stderr (Child *child);

static void
on_stderr (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(Child) child = user_data;
  g_autoptr(GBytes) bytes = NULL;
  MendAcpAgent *self = child->self;
  const guint8 *data;
  gsize size;

  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result, NULL);
  if (bytes == NULL || g_bytes_get_size (bytes) == 0 || self == NULL)
    return;

  data = g_bytes_get_data (bytes, &size);
  mend_stderr_tail_append (self->stderr_tail, data, size);

  read_stderr (child);
}

static void
read_stderr (Child *child)
{
  g_input_stream_read_bytes_async (child->stderr_stream, STDERR_READ_SIZE, G_PRIORITY_DEFAULT,
                                   child->cancellable, on_stderr, mend_acp_child_ref (child));
}

gboolean
mend_acp_agent_start_child (MendAcpAgent  *self,
                            GError       **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GIOStream) stream = NULL;
  g_autoptr(GSocket) socket = NULL;
  Child *child;
  int fds[2];

  /* The agent's standard input is a socket, not a pipe: a write to an
   * agent that just died fails with EPIPE instead of raising SIGPIPE,
   * which would end the app. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "socketpair: %s", g_strerror (errsv));
      return FALSE;
    }
  socket = g_socket_new_from_fd (fds[0], error);
  if (socket == NULL)
    {
      close (fds[0]);
      close (fds[1]);
      return FALSE;
    }

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_stdin_fd (launcher, fds[1]);
  if (self->environ_ != NULL)
    g_subprocess_launcher_set_environ (launcher, self->environ_);
  if (self->cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, self->cwd);

  child = g_new0 (Child, 1);
  g_atomic_ref_count_init (&child->ref_count);
  child->subprocess = g_subprocess_launcher_spawnv (launcher, (const char * const *) self->argv, error);
  if (child->subprocess == NULL)
    {
      mend_acp_child_unref (child);
      return FALSE;
    }

  child->self = self;
  child->cancellable = g_cancellable_new ();
  child->stdin_connection = g_socket_connection_factory_create_connection (socket);
  child->stderr_stream = g_object_ref (g_subprocess_get_stderr_pipe (child->subprocess));
  stream = mend_acp_framing_wrap (g_subprocess_get_stdout_pipe (child->subprocess),
                                  g_io_stream_get_output_stream (G_IO_STREAM (child->stdin_connection)));
  child->client = jsonrpc_client_new (stream);
  g_signal_connect (child->client, "notification", G_CALLBACK (on_notification), child);
  g_signal_connect (child->client, "handle-call", G_CALLBACK (mend_acp_agent_handle_call), child);
  g_signal_connect (child->client, "failed", G_CALLBACK (on_client_failed), child);

  self->child = child;
  self->ready = FALSE;
  self->n_starts++;
  g_byte_array_set_size (self->stderr_tail, 0);

  g_subprocess_wait_async (child->subprocess, child->cancellable, on_waited, mend_acp_child_ref (child));
  read_stderr (child);
  jsonrpc_client_start_listening (child->client);

  rpc_call (child->client, "initialize",
            JSONRPC_MESSAGE_NEW (
              "protocolVersion", JSONRPC_MESSAGE_PUT_INT64 (MEND_ACP_AGENT_PROTOCOL_VERSION),
              "clientCapabilities", "{",
                "fs", "{",
                  "readTextFile", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
                  "writeTextFile", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
                "}",
                "terminal", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
              "}"),
            on_initialized, mend_acp_child_ref (child));

  g_object_notify (G_OBJECT (self), "running");
  g_object_notify (G_OBJECT (self), "n-starts");
  return TRUE;
}

/* Prompts */

typedef struct
{
  Child *child;
  GTask *task;
} PromptCall;

static void
prompt_call_free (PromptCall *call)
{
  g_clear_pointer (&call->child, mend_acp_child_unref);
  g_clear_object (&call->task);
  g_free (call);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PromptCall, prompt_call_free)

static void
finish_with_stop_reason (MendAcpAgent *self,
                         const char   *stop_reason)
{
  g_autoptr(MendFailure) failure = NULL;

  if (g_strcmp0 (stop_reason, "end_turn") == 0 ||
      g_strcmp0 (stop_reason, "max_tokens") == 0 ||
      g_strcmp0 (stop_reason, "max_turn_requests") == 0)
    {
      mend_acp_agent_finish_task (self, NULL, NULL);
      return;
    }

  if (g_strcmp0 (stop_reason, "cancelled") == 0)
    {
      mend_acp_agent_finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
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
  mend_acp_agent_finish_task (self, failure, NULL);
}

static void
on_prompt_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(PromptCall) call = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  MendAcpAgent *self = call->child->self;
  const char *stop_reason = NULL;
  gboolean ours;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      g_autoptr(MendFailure) failure = NULL;

      if (self == NULL || self->child != call->child)
        return;
      self->prompt_busy = FALSE;
      failure = failure_from_rpc_error (error);
      if (failure == NULL)
        {
          mend_acp_agent_child_exited (self, call->child);
          return;
        }
      if (self->task == call->task)
        mend_acp_agent_finish_task (self, failure, NULL);
      mend_acp_agent_maybe_prompt (self);
      return;
    }
  if (self == NULL || self->child != call->child)
    return;

  self->prompt_busy = FALSE;
  if (reply != NULL && g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT))
    g_variant_lookup (reply, "stopReason", "&s", &stop_reason);
  if (set_str (&self->stop_reason, stop_reason))
    g_object_notify (G_OBJECT (self), "stop-reason");

  ours = self->task != NULL && self->task == call->task;
  g_object_ref (self);
  if (ours)
    finish_with_stop_reason (self, stop_reason);
  /* A prompt held behind a cancelled one goes now. */
  mend_acp_agent_maybe_prompt (self);
  g_object_unref (self);
}

void
mend_acp_agent_maybe_prompt (MendAcpAgent *self)
{
  PromptCall *call;

  if (self->task == NULL || self->prompt_sent || self->prompt_busy ||
      !self->ready || self->child == NULL)
    return;

  call = g_new0 (PromptCall, 1);
  call->child = mend_acp_child_ref (self->child);
  call->task = g_object_ref (self->task);
  self->prompt_sent = TRUE;
  self->prompt_busy = TRUE;

  rpc_call (self->child->client, "session/prompt",
            JSONRPC_MESSAGE_NEW (
              "sessionId", JSONRPC_MESSAGE_PUT_STRING (self->session_id),
              "prompt", "[", "{",
                "type", JSONRPC_MESSAGE_PUT_STRING ("text"),
                "text", JSONRPC_MESSAGE_PUT_STRING (mend_turn_get_prompt (self->task_turn)),
              "}", "]"),
            on_prompt_done, call);
}

void
mend_acp_agent_task_cancelled (GCancellable *cancellable,
                               MendAcpAgent *self)
{
  g_object_ref (self);

  if (self->prompt_sent && self->child != NULL && self->session_id != NULL)
    {
      self->n_cancels++;
      rpc_notify (self->child->client, "session/cancel",
                  JSONRPC_MESSAGE_NEW ("sessionId", JSONRPC_MESSAGE_PUT_STRING (self->session_id)));
      /* The protocol wants pending permission requests answered as
       * cancelled. */
      mend_acp_agent_cancel_permissions (self);
    }

  mend_acp_agent_finish_task (self, NULL, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                              _("The turn was stopped")));
  g_object_unref (self);
}
