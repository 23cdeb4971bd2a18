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
#include <jsonrpc-glib.h>

#include "mend-acp-agent.h"
#include "mend-acp-connection-private.h"
#include "mend-acp-framing-private.h"
#include "mend-agent-common-private.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* The Agent Client Protocol's error code for a client that must log in. */
#define ACP_AUTH_REQUIRED (-32000)

struct _MendAcpConnection
{
  gatomicrefcount                ref_count;
  const MendAcpConnectionEvents *events;
  gpointer                       user_data;    /* NULL once closed */
  MendAcpRequests               *requests;     /* the owner's; NULL once closed */

  JsonrpcClient                 *client;
  GCancellable                  *cancellable;
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

  g_clear_object (&conn->client);
  g_clear_object (&conn->cancellable);
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

/* jsonrpc-glib consumes floating parameters only, and its message
 * builder does not make them floating: the parameters are owned here and
 * dropped after the call. */
static void
rpc_call (MendAcpConnection   *conn,
          const char          *method,
          GVariant            *params,
          GAsyncReadyCallback  callback,
          gpointer             user_data)
{
  g_autoptr(GVariant) owned = g_variant_take_ref (params);

  jsonrpc_client_call_async (conn->client, method, owned, NULL, callback, user_data);
}

static void
rpc_notify (MendAcpConnection *conn,
            const char        *method,
            GVariant          *params)
{
  g_autoptr(GVariant) owned = g_variant_take_ref (params);

  jsonrpc_client_send_notification_async (conn->client, method, owned, NULL, NULL, NULL);
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

static gboolean
close_client (gpointer data)
{
  jsonrpc_client_close (data, NULL, NULL);
  return G_SOURCE_REMOVE;
}

void
mend_acp_connection_close (MendAcpConnection *conn)
{
  if (conn->requests != NULL)
    mend_acp_requests_forget_client (conn->requests, conn->client);
  conn->requests = NULL;
  conn->user_data = NULL;
  conn->events = NULL;
  g_cancellable_cancel (conn->cancellable);
  g_signal_handlers_disconnect_matched (conn->client, G_SIGNAL_MATCH_DATA,
                                        0, 0, NULL, NULL, conn);
  /* Not from inside one of the client's own call callbacks: closing fails
   * every call still in its table, the finishing one too. */
  g_idle_add_full (G_PRIORITY_DEFAULT, close_client,
                   g_object_ref (conn->client), g_object_unref);
  conn_unref (conn);
}

/* JSON-RPC errors. jsonrpc-glib hands an error answer to the caller as
 * G_IO_ERROR_FAILED whose message is the error object printed as a
 * GVariant; anything else is the connection's own failure. */

/* JSON-RPC's catch-all message for -32603, which adapters send with the
 * real error in "data" (codex-acp: "Internal error", the details in
 * data.message and data.codex_error_info) or after a colon (Claude's
 * adapters: "Internal error: API Error: 529 …"). */
#define RPC_INTERNAL_ERROR "Internal error"

/* The words of @data that say what failed: its "message", "details" and
 * "error" strings, and codex-acp's codex_error_info (a string, or an
 * object whose member names are the kind), or NULL when it has none. */
static char *
rpc_error_data_text (JsonNode *data)
{
  static const char *const names[] = { "message", "details", "error" };
  JsonObject *object;
  JsonNode *info;
  GString *s;

  if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
    return NULL;
  object = json_node_get_object (data);
  s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const char *text = mend_json_get_string (object, names[i]);

      if (text != NULL && *text != '\0')
        g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", text);
    }
  info = json_object_get_member (object, "codex_error_info");
  if (info != NULL && s->len > 0)
    {
      if (JSON_NODE_HOLDS_VALUE (info) && json_node_get_value_type (info) == G_TYPE_STRING)
        g_string_append_printf (s, " (%s)", json_node_get_string (info));
      else if (JSON_NODE_HOLDS_OBJECT (info))
        {
          g_autoptr(GList) kinds = json_object_get_members (json_node_get_object (info));

          for (GList *l = kinds; l != NULL; l = l->next)
            g_string_append_printf (s, " (%s)", (const char *) l->data);
        }
    }
  if (s->len == 0)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  return g_string_free (s, FALSE);
}

static gboolean
rpc_error_read (const GError  *error,
                gint64        *code,
                char         **text)
{
  g_autoptr(GVariant) object = NULL;
  g_autoptr(GVariant) code_v = NULL;
  g_autoptr(GVariant) data = NULL;
  g_autoptr(JsonNode) data_node = NULL;
  g_autofree char *details = NULL;
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
    {
      double d = g_variant_get_double (code_v);

      /* Out of range (or not a number), the conversion is undefined: such
       * a code means nothing. Nor does one that is not whole (599.5), as
       * JSON-RPC's codes are integers: it is no HTTP status. */
      *code = d > -9.2e18 && d < 9.2e18 ? (gint64) d : 0;
      if ((double) *code != d)
        *code = 0;
    }
  else
    return FALSE;

  s = g_string_new (NULL);
  g_variant_lookup (object, "message", "&s", &message);
  data = g_variant_lookup_value (object, "data", NULL);
  if (data != NULL)
    {
      data_node = json_gvariant_serialize (data);
      details = rpc_error_data_text (data_node);
    }

  /* A wrapper's catch-all yields to the error it wraps. */
  if (message != NULL && g_str_has_prefix (message, RPC_INTERNAL_ERROR ": "))
    message += strlen (RPC_INTERNAL_ERROR ": ");
  else if (details != NULL && g_strcmp0 (message, RPC_INTERNAL_ERROR) == 0)
    message = NULL;

  if (message != NULL)
    g_string_append (s, message);
  if (details != NULL)
    g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", details);
  else if (data_node != NULL)
    {
      g_autofree char *json = mend_json_to_string (data_node);

      g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", json);
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
 * one (the connection failed: the agent is gone). JSON-RPC's own codes
 * are negative; an error code from 400 to 599 is the HTTP status of the
 * upstream's answer, as the Gemini CLI sends it, and the message its
 * body or the body's message. */
static MendFailure *
failure_from_rpc_error (const GError *error)
{
  g_autofree char *text = NULL;
  gint64 code = 0;

  if (!rpc_error_read (error, &code, &text))
    return NULL;

  mend_debug ("ACP error %" G_GINT64_FORMAT ": %s", code, text);
  if (code >= 400 && code <= 599)
    {
      g_autoptr(GBytes) body = g_bytes_new (text, strlen (text));

      return mend_failure_new_from_http ((guint) code, NULL, body);
    }
  return mend_failure_new_from_text (text);
}

/* A call of the session's opening failed: with what the agent said, the
 * run ends so that the next attempt starts the agent again rather than
 * wait for a session that will not open; otherwise the agent is gone. */
static void
call_failed (MendAcpConnection *conn,
             const GError      *error)
{
  g_autoptr(MendFailure) failure = failure_from_rpc_error (error);

  if (failure == NULL)
    mend_debug ("The connection to the agent failed: %s", error->message);
  run_ended (conn, failure);
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
on_session_new (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  const char *session_id = NULL;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      call_failed (conn, error);
      return;
    }
  if (!is_open (conn))
    return;

  if (reply == NULL || !g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT) ||
      !g_variant_lookup (reply, "sessionId", "&s", &session_id))
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
on_session_load (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      g_autoptr(MendFailure) failure = NULL;

      if (!is_open (conn))
        return;
      failure = failure_from_rpc_error (error);
      if (failure == NULL)
        {
          run_ended (conn, NULL);
          return;
        }
      /* The agent could not take the session up: the owner is told, and
       * a new one starts. */
      mend_debug ("The agent could not load session %s: %s", conn->load_id, error->message);
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
  if (load)
    {
      conn->loading = TRUE;
      rpc_call (conn, "session/load",
                JSONRPC_MESSAGE_NEW ("sessionId", JSONRPC_MESSAGE_PUT_STRING (conn->load_id),
                                     "cwd", JSONRPC_MESSAGE_PUT_STRING (conn->cwd),
                                     "mcpServers", "[", "]"),
                on_session_load, conn_ref (conn));
    }
  else
    rpc_call (conn, "session/new",
              JSONRPC_MESSAGE_NEW ("cwd", JSONRPC_MESSAGE_PUT_STRING (conn->cwd),
                                   "mcpServers", "[", "]"),
              on_session_new, conn_ref (conn));
}

static void
on_initialized (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(MendAcpConnection) conn = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) capabilities = NULL;
  g_autoptr(GError) error = NULL;

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      call_failed (conn, error);
      return;
    }
  if (!is_open (conn))
    return;

  if (reply != NULL && g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT))
    {
      g_autoptr(GVariant) info = g_variant_lookup_value (reply, "agentInfo", G_VARIANT_TYPE_VARDICT);
      const char *name = NULL;

      capabilities = g_variant_lookup_value (reply, "agentCapabilities", G_VARIANT_TYPE_VARDICT);
      if (info != NULL)
        g_variant_lookup (info, "name", "&s", &name);
      conn->events->agent (conn->user_data, name);
      if (!is_open (conn))
        return;
    }
  if (capabilities != NULL)
    g_variant_lookup (capabilities, "loadSession", "b", &conn->can_load);

  open_session (conn, conn->load_id != NULL && conn->can_load);
}

/* What the agent sends */

static void
on_notification (JsonrpcClient     *client,
                 const char        *method,
                 GVariant          *params,
                 MendAcpConnection *conn)
{
  g_autoptr(JsonNode) node = NULL;

  /* A load replays the session's history: not this turn's output. */
  if (!is_open (conn) || params == NULL || conn->loading ||
      g_strcmp0 (method, "session/update") != 0)
    return;

  node = json_gvariant_serialize (params);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return;

  conn_ref (conn);
  conn->events->update (conn->user_data, json_node_get_object (node));
  conn_unref (conn);
}

static gboolean
on_handle_call (JsonrpcClient     *client,
                const char        *method,
                GVariant          *id,
                GVariant          *params,
                MendAcpConnection *conn)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *json = NULL;
  guint serial;

  if (!is_open (conn))
    return FALSE;

  node = params ? json_gvariant_serialize (params) : json_node_new (JSON_NODE_NULL);
  json = mend_json_to_string (node);
  serial = mend_acp_requests_add (conn->requests, client, id, method, json);
  /* Past the bounds: answered already, or left unanswered. */
  if (serial == 0)
    return TRUE;

  conn_ref (conn);
  conn->events->request (conn->user_data, method, json, serial);
  conn_unref (conn);

  return TRUE;
}

static void
on_client_failed (JsonrpcClient     *client,
                  MendAcpConnection *conn)
{
  run_ended (conn, NULL);
}

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
  g_autoptr(GIOStream) stream = NULL;
  g_autofree char *session_cwd = absolute_cwd (cwd);
  MendAcpConnection *conn;

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
  conn->cancellable = g_cancellable_new ();
  conn->cwd = g_steal_pointer (&session_cwd);
  conn->load_id = g_strdup (session_id);
  stream = mend_acp_framing_wrap (output, input);
  conn->client = jsonrpc_client_new (stream);
  g_signal_connect (conn->client, "notification", G_CALLBACK (on_notification), conn);
  g_signal_connect (conn->client, "handle-call", G_CALLBACK (on_handle_call), conn);
  g_signal_connect (conn->client, "failed", G_CALLBACK (on_client_failed), conn);

  jsonrpc_client_start_listening (conn->client);

  rpc_call (conn, "initialize",
            JSONRPC_MESSAGE_NEW (
              "protocolVersion", JSONRPC_MESSAGE_PUT_INT64 (MEND_ACP_AGENT_PROTOCOL_VERSION),
              "clientCapabilities", "{",
                "fs", "{",
                  "readTextFile", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
                  "writeTextFile", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
                "}",
                "terminal", JSONRPC_MESSAGE_PUT_BOOLEAN (FALSE),
              "}"),
            on_initialized, conn_ref (conn));

  return conn;
}

/* Prompts */

typedef struct
{
  MendAcpConnection *conn;
  guint              prompt;
} PromptCall;

static void
on_prompt_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  PromptCall call = *(PromptCall *) user_data;
  g_autoptr(MendAcpConnection) conn = call.conn;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendFailure) failure = NULL;
  const char *stop_reason = NULL;

  g_free (user_data);

  if (!jsonrpc_client_call_finish (JSONRPC_CLIENT (source), result, &reply, &error))
    {
      if (!is_open (conn))
        return;
      failure = failure_from_rpc_error (error);
      if (failure == NULL)
        {
          run_ended (conn, NULL);
          return;
        }
    }
  if (!is_open (conn))
    return;

  conn->busy = FALSE;
  if (failure == NULL && reply != NULL && g_variant_is_of_type (reply, G_VARIANT_TYPE_VARDICT))
    g_variant_lookup (reply, "stopReason", "&s", &stop_reason);
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
  PromptCall *call;
  guint prompt;

  g_assert (mend_acp_connection_can_prompt (conn));

  prompt = ++conn->last_prompt;
  call = g_new0 (PromptCall, 1);
  call->conn = conn_ref (conn);
  call->prompt = prompt;
  conn->busy = TRUE;

  rpc_call (conn, "session/prompt",
            JSONRPC_MESSAGE_NEW (
              "sessionId", JSONRPC_MESSAGE_PUT_STRING (session_id),
              "prompt", "[", "{",
                "type", JSONRPC_MESSAGE_PUT_STRING ("text"),
                "text", JSONRPC_MESSAGE_PUT_STRING (text),
              "}", "]"),
            on_prompt_done, call);

  return prompt;
}

void
mend_acp_connection_cancel (MendAcpConnection *conn,
                            const char        *session_id)
{
  rpc_notify (conn, "session/cancel",
              JSONRPC_MESSAGE_NEW ("sessionId", JSONRPC_MESSAGE_PUT_STRING (session_id)));
  /* The protocol wants pending permission requests answered as
   * cancelled. */
  if (conn->requests != NULL)
    mend_acp_requests_cancel_permissions (conn->requests);
}
