/* mend-acp-connection.c — the JSON-RPC connection to an ACP agent over its stdio
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The protocol side of MendAcpAgent: one run of the agent's process, its
 * JSON-RPC connection, the session and the prompts. What happens goes to
 * the owner through the events it handed in.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-agent.h"
#include "mend-acp-connection-private.h"
#include "mend-acp-failure-private.h"
#include "mend-acp-rpc-private.h"
#include "mend-agent-common-private.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

struct _MendAcpConnection
{
  gatomicrefcount                ref_count;
  const MendAcpConnectionEvents *events;
  gpointer                       user_data;    /* NULL once closed */
  MendAcpRequests               *requests;     /* the owner's; NULL once closed */

  MendAcpRpc                    *rpc;
  char                          *cwd;          /* the session's, absolute */
  char                          *load_id;      /* the session to load */

  gboolean                       can_load;     /* agentCapabilities.loadSession */
  gboolean                       loading;      /* session/load replays history */
  gboolean                       ready;        /* the session is open */
  gboolean                       busy;         /* a prompt is not answered yet */
  guint                          last_prompt;
};

static MendAcpConnection *
conn_ref (MendAcpConnection *conn)
{
  g_atomic_ref_count_inc (&conn->ref_count);
  return conn;
}

static void
conn_unref (MendAcpConnection *conn)
{
  if (!g_atomic_ref_count_dec (&conn->ref_count))
    return;

  g_clear_pointer (&conn->rpc, mend_acp_rpc_unref);
  g_free (conn->cwd);
  g_free (conn->load_id);
  g_free (conn);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAcpConnection, conn_unref)

static gboolean
is_open (MendAcpConnection *conn)
{
  return conn->user_data != NULL;
}

/* The parameters of a call: an object begun in a builder, ended and
 * taken here. */
static JsonBuilder *
params_begin (void)
{
  JsonBuilder *builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  return builder;
}

static JsonNode *
params_end (JsonBuilder *builder)
{
  JsonNode *node;

  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  g_object_unref (builder);
  return node;
}

static void
params_add_empty_array (JsonBuilder *builder,
                        const char  *name)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_array (builder);
  json_builder_end_array (builder);
}

static void
rpc_call (MendAcpConnection    *conn,
          const char           *method,
          JsonNode             *params,
          MendAcpRpcAnswerFunc  answer,
          gpointer              user_data)
{
  g_autoptr(JsonNode) owned = params;

  mend_acp_rpc_call (conn->rpc, method, owned, answer, user_data);
}

/* Reports the end of the run, once; the owner closes the connection. */
static void
run_ended (MendAcpConnection *conn,
           MendFailure       *failure)
{
  if (!is_open (conn))
    return;

  conn_ref (conn);
  conn->events->ended (conn->user_data, failure);
  conn_unref (conn);
}

void
mend_acp_connection_close (MendAcpConnection *conn)
{
  if (conn->requests != NULL)
    mend_acp_requests_forget_rpc (conn->requests, conn->rpc);
  conn->requests = NULL;
  conn->user_data = NULL;
  conn->events = NULL;
  /* Every call in flight is answered now, each once: the owner is gone,
   * so the answers only drop what they hold. */
  mend_acp_rpc_close (mend_acp_rpc_ref (conn->rpc));
  conn_unref (conn);
}

/* A call of the session's opening failed: with what the agent said, the
 * run ends so that the next attempt starts the agent again rather than
 * wait for a session that will not open; otherwise the agent is gone. */
static void
call_failed (MendAcpConnection *conn,
             JsonObject        *error)
{
  g_autoptr(MendFailure) failure = mend_acp_failure_from_rpc_error (error);

  if (failure == NULL)
    mend_debug ("The connection to the agent failed");
  run_ended (conn, failure);
}

static JsonObject *
result_object (JsonNode *result)
{
  return result != NULL && JSON_NODE_HOLDS_OBJECT (result) ? json_node_get_object (result) : NULL;
}

/* Opening the session */

static void open_session (MendAcpConnection *conn,
                          gboolean           load);

static void
session_ready (MendAcpConnection *conn,
               gboolean           loaded)
{
  conn->ready = TRUE;
  conn->loading = FALSE;
  conn->events->ready (conn->user_data, loaded);
}

static void
on_session_new (JsonNode   *result,
                JsonObject *error,
                gpointer    user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;
  JsonObject *reply = result_object (result);
  const char *session_id = reply ? mend_json_get_string (reply, "sessionId") : NULL;

  if (!is_open (conn))
    return;
  if (result == NULL)
    {
      call_failed (conn, error);
      return;
    }

  if (session_id == NULL)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (_("The agent opened no session"));

      run_ended (conn, failure);
      return;
    }

  conn->events->session (conn->user_data, session_id);
  if (is_open (conn))
    session_ready (conn, FALSE);
}

static void
on_session_load (JsonNode   *result,
                 JsonObject *error,
                 gpointer    user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;

  if (result == NULL)
    {
      g_autoptr(MendFailure) failure = NULL;

      if (!is_open (conn))
        return;
      failure = mend_acp_failure_from_rpc_error (error);
      if (failure == NULL)
        {
          run_ended (conn, NULL);
          return;
        }
      /* The agent could not take the session up: the owner is told, and
       * a new one starts. */
      mend_debug ("The agent could not load session %s: %s", conn->load_id,
                  mend_failure_get_message (failure));
      conn->loading = FALSE;
      conn->events->session (conn->user_data, NULL);
      if (is_open (conn))
        conn->events->lost (conn->user_data, failure);
      if (is_open (conn))
        open_session (conn, FALSE);
      return;
    }
  if (!is_open (conn))
    return;

  session_ready (conn, TRUE);
}

static void
open_session (MendAcpConnection *conn,
              gboolean           load)
{
  JsonBuilder *params = params_begin ();

  if (load)
    mend_json_add_string (params, "sessionId", conn->load_id);
  mend_json_add_string (params, "cwd", conn->cwd);
  params_add_empty_array (params, "mcpServers");
  if (load)
    {
      conn->loading = TRUE;
      rpc_call (conn, "session/load", params_end (params), on_session_load, conn_ref (conn));
    }
  else
    rpc_call (conn, "session/new", params_end (params), on_session_new, conn_ref (conn));
}

static void
on_initialized (JsonNode   *result,
                JsonObject *error,
                gpointer    user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;
  JsonObject *reply = result_object (result);
  JsonObject *capabilities = NULL;

  if (!is_open (conn))
    return;
  if (result == NULL)
    {
      call_failed (conn, error);
      return;
    }

  if (reply != NULL)
    {
      JsonObject *info = mend_json_get_object (reply, "agentInfo");

      capabilities = mend_json_get_object (reply, "agentCapabilities");
      conn->events->agent (conn->user_data, info ? mend_json_get_string (info, "name") : NULL);
      if (!is_open (conn))
        return;
    }
  if (capabilities != NULL)
    {
      JsonNode *load = json_object_get_member (capabilities, "loadSession");

      conn->can_load = load != NULL && JSON_NODE_HOLDS_VALUE (load) &&
                       json_node_get_value_type (load) == G_TYPE_BOOLEAN && json_node_get_boolean (load);
    }

  open_session (conn, conn->load_id != NULL && conn->can_load);
}

/* What the agent sends */

static void
on_message (gpointer    user_data,
            const char *method,
            JsonNode   *id,
            JsonNode   *params)
{
  MendAcpConnection *conn = user_data;
  g_autoptr(JsonNode) null = NULL;
  g_autofree char *json = NULL;
  guint serial;

  if (!is_open (conn))
    return;

  if (id == NULL)
    {
      /* A load replays the session's history: not this turn's output. */
      if (params == NULL || conn->loading || g_strcmp0 (method, "session/update") != 0 ||
          !JSON_NODE_HOLDS_OBJECT (params))
        return;
      conn_ref (conn);
      conn->events->update (conn->user_data, json_node_get_object (params));
      conn_unref (conn);
      return;
    }

  if (params == NULL)
    params = null = json_node_new (JSON_NODE_NULL);
  json = mend_json_to_string (params);
  serial = mend_acp_requests_add (conn->requests, conn->rpc, id, method, json);
  /* Past the bounds: answered already, or left unanswered. */
  if (serial == 0)
    return;

  conn_ref (conn);
  conn->events->request (conn->user_data, method, json, serial);
  conn_unref (conn);
}

/* A line past the parser's bounds: the attempt fails with what was
 * wrong; the agent and its session go on. */
static void
on_refused (gpointer    user_data,
            const char *problem)
{
  MendAcpConnection *conn = user_data;
  g_autofree char *text = NULL;
  g_autoptr(MendFailure) failure = NULL;

  if (!is_open (conn))
    return;
  text = g_strdup_printf (_("The agent sent a message too large to read: %s"), problem);
  failure = mend_failure_new_from_text (text);
  conn_ref (conn);
  conn->events->refused (conn->user_data, failure);
  conn_unref (conn);
}

static void
on_failed (gpointer user_data)
{
  run_ended (user_data, NULL);
}

static const MendAcpRpcEvents rpc_events = {
  .message = on_message,
  .refused = on_refused,
  .failed = on_failed,
};

static char *
absolute_cwd (const char *cwd)
{
  if (cwd != NULL && g_path_is_absolute (cwd))
    return g_strdup (cwd);
  return cwd ? g_canonicalize_filename (cwd, NULL) : g_get_current_dir ();
}

MendAcpConnection *
mend_acp_connection_start (GInputStream                  *output,
                           GOutputStream                 *input,
                           const char                    *cwd,
                           const char                    *session_id,
                           MendAcpRequests               *requests,
                           const MendAcpConnectionEvents *events,
                           gpointer                       user_data,
                           GError                       **error)
{
  g_autofree char *session_cwd = absolute_cwd (cwd);
  MendAcpConnection *conn;
  JsonBuilder *params;

  g_assert (user_data != NULL);

  /* Both go to the agent as JSON strings: a directory whose name is not
   * UTF-8 cannot be a session's, and such a session id is none. */
  if (!g_utf8_validate (session_cwd, -1, NULL))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_FILENAME,
                           _("The agent's working directory is not valid UTF-8"));
      return NULL;
    }
  if (session_id != NULL && !g_utf8_validate (session_id, -1, NULL))
    session_id = NULL;

  conn = g_new0 (MendAcpConnection, 1);
  g_atomic_ref_count_init (&conn->ref_count);
  conn->events = events;
  conn->user_data = user_data;
  conn->requests = requests;
  conn->cwd = g_steal_pointer (&session_cwd);
  conn->load_id = g_strdup (session_id);
  conn->rpc = mend_acp_rpc_new (output, input, &rpc_events, conn);

  params = params_begin ();
  json_builder_set_member_name (params, "protocolVersion");
  json_builder_add_int_value (params, MEND_ACP_AGENT_PROTOCOL_VERSION);
  json_builder_set_member_name (params, "clientCapabilities");
  json_builder_begin_object (params);
  json_builder_set_member_name (params, "fs");
  json_builder_begin_object (params);
  json_builder_set_member_name (params, "readTextFile");
  json_builder_add_boolean_value (params, FALSE);
  json_builder_set_member_name (params, "writeTextFile");
  json_builder_add_boolean_value (params, FALSE);
  json_builder_end_object (params);
  json_builder_set_member_name (params, "terminal");
  json_builder_add_boolean_value (params, FALSE);
  /* Subagents reported as subagent_update (claude-agent-acp), and typed
   * failures in place of error text in message chunks (the extension
   * today's adapters speak): a failed prompt ends with a sessionFailure,
   * the agent's own retries come as warnings. */
  json_builder_set_member_name (params, "subagents");
  json_builder_begin_object (params);
  json_builder_end_object (params);
  json_builder_set_member_name (params, "_meta");
  json_builder_begin_object (params);
  json_builder_set_member_name (params, "jetbrains");
  json_builder_begin_object (params);
  json_builder_set_member_name (params, "air");
  json_builder_begin_object (params);
  json_builder_set_member_name (params, "version");
  json_builder_add_int_value (params, 1);
  json_builder_set_member_name (params, "capabilities");
  json_builder_begin_array (params);
  json_builder_add_string_value (params, "sessionFailure");
  json_builder_end_array (params);
  json_builder_end_object (params);
  json_builder_end_object (params);
  json_builder_end_object (params);
  json_builder_end_object (params);
  rpc_call (conn, "initialize", params_end (params), on_initialized, conn_ref (conn));

  return conn;
}

/* Prompts */

typedef struct
{
  MendAcpConnection *conn;
  guint              prompt;
} PromptCall;

static void
on_prompt_done (JsonNode   *result,
                JsonObject *error,
                gpointer    user_data)
{
  PromptCall call = *(PromptCall *) user_data;
  g_autoptr(MendAcpConnection) conn = call.conn;
  JsonObject *reply = result_object (result);
  g_autoptr(MendFailure) failure = NULL;
  const char *stop_reason = NULL;

  g_free (user_data);

  if (result == NULL)
    {
      if (!is_open (conn))
        return;
      failure = mend_acp_failure_from_rpc_error (error);
      if (failure == NULL)
        {
          run_ended (conn, NULL);
          return;
        }
    }
  if (!is_open (conn))
    return;

  conn->busy = FALSE;
  if (failure == NULL && reply != NULL)
    {
      JsonObject *session_failure = mend_acp_session_failure_get (reply);

      stop_reason = mend_json_get_string (reply, "stopReason");
      /* A typed failure ends the prompt with a stopReason of its own
       * (end_turn): the prompt failed all the same. */
      if (session_failure != NULL && !mend_acp_session_failure_is_warning (session_failure))
        failure = mend_acp_failure_from_session_failure (session_failure);
    }
  conn->events->answered (conn->user_data, call.prompt, stop_reason, failure);
}

gboolean
mend_acp_connection_can_prompt (MendAcpConnection *conn)
{
  return is_open (conn) && conn->ready && !conn->busy;
}

guint
mend_acp_connection_prompt (MendAcpConnection *conn,
                            const char        *session_id,
                            const char        *text)
{
  JsonBuilder *params = params_begin ();
  PromptCall *call;
  guint prompt;

  g_assert (mend_acp_connection_can_prompt (conn));

  prompt = ++conn->last_prompt;
  call = g_new0 (PromptCall, 1);
  call->conn = conn_ref (conn);
  call->prompt = prompt;
  conn->busy = TRUE;

  mend_json_add_string (params, "sessionId", session_id);
  json_builder_set_member_name (params, "prompt");
  json_builder_begin_array (params);
  json_builder_begin_object (params);
  mend_json_add_string (params, "type", "text");
  mend_json_add_string (params, "text", text);
  json_builder_end_object (params);
  json_builder_end_array (params);
  rpc_call (conn, "session/prompt", params_end (params), on_prompt_done, call);

  return prompt;
}

void
mend_acp_connection_cancel (MendAcpConnection *conn,
                            const char        *session_id)
{
  JsonBuilder *params = params_begin ();
  g_autoptr(JsonNode) node = NULL;

  mend_json_add_string (params, "sessionId", session_id);
  node = params_end (params);
  mend_acp_rpc_notify (conn->rpc, "session/cancel", node);
  /* The protocol wants pending permission requests answered as
   * cancelled. */
  if (conn->requests != NULL)
    mend_acp_requests_cancel_permissions (conn->requests);
}
