/* mend-acp-requests.c — what an ACP agent asks of the client (permissions, files); deny by default
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The requests an Agent Client Protocol agent makes of its client:
 * emitted as MendAcpAgent::request, answered by the app or denied.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-agent.h"
#include "mend-acp-requests-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* JSON-RPC's "internal error": the answer to a request the client
 * refuses (ACP has no code of its own for it). */
#define RPC_INTERNAL_ERROR (-32603)

/* What a request or an answer costs besides its text: its id, the
 * JSON-RPC envelope, the bookkeeping. */
#define MESSAGE_OVERHEAD 256

/* Answers sent and not written to the agent yet. Shared with the write
 * callbacks, which may come after the requests are freed. */
typedef struct
{
  gatomicrefcount ref_count;
  guint           n;
  gsize           bytes;
} Backlog;

/* A request of the agent's, until it is answered. */
typedef struct
{
  MendAcpRpc    *rpc;
  JsonNode      *id;
  gsize          id_bytes;      /* of its JSON, which each answer repeats */
  char          *method;
  char          *params;        /* JSON */
  gsize          bytes;
} Request;

struct _MendAcpRequests
{
  GHashTable *table;            /* serial → Request */
  guint       last_serial;
  gsize       kept_bytes;
  Backlog    *unwritten;
  guint64     n_refused;
  guint64     n_dropped;
};

static void
backlog_unref (Backlog *backlog)
{
  if (g_atomic_ref_count_dec (&backlog->ref_count))
    g_free (backlog);
}

typedef struct
{
  Backlog *backlog;
  gsize    bytes;
} Written;

/* Written, or never will be (the agent is gone): no longer held. */
static void
on_answer_written (gpointer user_data)
{
  Written *written = user_data;

  written->backlog->n--;
  written->backlog->bytes -= written->bytes;
  backlog_unref (written->backlog);
  g_free (written);
}

/* Counts an answer until it is written: an agent that reads
 * none of its answers holds them all in the client's queue. */
static Written *
count_answer (MendAcpRequests *requests,
              gsize            bytes)
{
  Written *written = g_new0 (Written, 1);

  written->backlog = requests->unwritten;
  g_atomic_ref_count_inc (&written->backlog->ref_count);
  written->bytes = bytes + MESSAGE_OVERHEAD;
  written->backlog->n++;
  written->backlog->bytes += written->bytes;
  return written;
}

/* The bytes of @id's JSON: an id is the agent's to choose, and as long
 * as a line may be. */
static gsize
id_bytes (JsonNode *id)
{
  g_autofree char *json = mend_json_to_string (id);

  return strlen (json);
}

static void
reply_error (MendAcpRequests *requests,
             MendAcpRpc      *rpc,
             JsonNode        *id,
             gsize            id_size,
             const char      *message)
{
  mend_acp_rpc_reply_error (rpc, id, RPC_INTERNAL_ERROR, message,
                            on_answer_written, count_answer (requests, strlen (message) + id_size));
}

static void
remove_request (MendAcpRequests *requests,
                guint            serial)
{
  Request *request = g_hash_table_lookup (requests->table, GUINT_TO_POINTER (serial));

  if (request == NULL)
    return;
  requests->kept_bytes -= request->bytes;
  g_hash_table_remove (requests->table, GUINT_TO_POINTER (serial));
}

static void
request_free (Request *request)
{
  g_clear_pointer (&request->rpc, mend_acp_rpc_unref);
  g_clear_pointer (&request->id, json_node_unref);
  g_free (request->method);
  g_free (request->params);
  g_free (request);
}

MendAcpRequests *
mend_acp_requests_new (void)
{
  MendAcpRequests *requests = g_new0 (MendAcpRequests, 1);

  requests->table = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) request_free);
  requests->unwritten = g_new0 (Backlog, 1);
  g_atomic_ref_count_init (&requests->unwritten->ref_count);
  return requests;
}

void
mend_acp_requests_free (MendAcpRequests *requests)
{
  g_hash_table_unref (requests->table);
  backlog_unref (requests->unwritten);
  g_free (requests);
}

guint
mend_acp_requests_add (MendAcpRequests *requests,
                       MendAcpRpc      *rpc,
                       JsonNode        *id,
                       const char      *method,
                       const char      *params)
{
  gsize id_size = id_bytes (id);
  gsize bytes = strlen (method) + strlen (params) + id_size + MESSAGE_OVERHEAD;
  guint n_in_flight = g_hash_table_size (requests->table) + requests->unwritten->n;
  gsize bytes_in_flight = requests->kept_bytes + requests->unwritten->bytes;
  Request *request;
  guint serial;

  if (n_in_flight >= MEND_ACP_AGENT_MAX_REQUESTS ||
      bytes_in_flight + bytes > MEND_ACP_AGENT_MAX_REQUEST_BYTES)
    {
      const char *refusal = _("The agent has too many requests waiting for an answer");

      /* Refused at once; and once as many refusals again, or as many
       * bytes, wait to be read, the agent reads nothing: what it asks goes
       * unanswered. */
      if (requests->unwritten->n < 2 * MEND_ACP_AGENT_MAX_REQUESTS &&
          requests->unwritten->bytes + strlen (refusal) + id_size + MESSAGE_OVERHEAD <= MEND_ACP_AGENT_MAX_REQUEST_BYTES)
        {
          requests->n_refused++;
          reply_error (requests, rpc, id, id_size, refusal);
        }
      else
        {
          if (requests->n_dropped % 1024 == 0)
            mend_debug ("The agent reads none of its answers: %" G_GUINT64_FORMAT
                        " of its requests left unanswered", requests->n_dropped + 1);
          requests->n_dropped++;
        }
      return 0;
    }

  request = g_new0 (Request, 1);
  request->rpc = mend_acp_rpc_ref (rpc);
  request->id = json_node_copy (id);
  request->id_bytes = id_size;
  request->method = g_strdup (method);
  request->params = g_strdup (params);
  request->bytes = bytes;
  requests->kept_bytes += bytes;

  do
    serial = ++requests->last_serial;
  while (serial == 0 || g_hash_table_contains (requests->table, GUINT_TO_POINTER (serial)));
  g_hash_table_insert (requests->table, GUINT_TO_POINTER (serial), request);

  return serial;
}

static gboolean
send_reply (MendAcpRequests *requests,
            Request         *request,
            const char      *json)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  node = mend_json_parse (json, -1, &error);
  if (node == NULL)
    {
      mend_debug ("Not an answer to %s: %s", request->method, error->message);
      return FALSE;
    }
  mend_acp_rpc_reply (request->rpc, request->id, node,
                      on_answer_written, count_answer (requests, strlen (json) + request->id_bytes));
  return TRUE;
}

gboolean
mend_acp_requests_reply (MendAcpRequests *requests,
                         guint            serial,
                         const char      *result_json)
{
  Request *request = g_hash_table_lookup (requests->table, GUINT_TO_POINTER (serial));
  gboolean sent;

  if (request == NULL)
    return FALSE;

  sent = send_reply (requests, request, result_json);
  if (sent)
    remove_request (requests, serial);
  return sent;
}

/* The reject option of a permission request, if it has one. */
static char *
reject_option (const char *params)
{
  g_autoptr(JsonNode) node = mend_json_parse (params, -1, NULL);
  JsonObject *object = node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  JsonNode *options = object ? json_object_get_member (object, "options") : NULL;
  const char *kinds[] = { "reject_once", "reject_always" };

  if (options == NULL || !JSON_NODE_HOLDS_ARRAY (options))
    return NULL;

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (guint i = 0; i < json_array_get_length (json_node_get_array (options)); i++)
      {
        JsonNode *option = json_array_get_element (json_node_get_array (options), i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT (option) ? json_node_get_object (option) : NULL;

        if (o != NULL && g_strcmp0 (mend_json_get_string (o, "kind"), kinds[k]) == 0 &&
            mend_json_get_string (o, "optionId") != NULL)
          return g_strdup (mend_json_get_string (o, "optionId"));
      }

  return NULL;
}

static char *
outcome_json (const char *option_id)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "outcome");
  json_builder_begin_object (builder);
  mend_json_add_string (builder, "outcome", option_id ? "selected" : "cancelled");
  if (option_id != NULL)
    mend_json_add_string (builder, "optionId", option_id);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}

gboolean
mend_acp_requests_deny (MendAcpRequests *requests,
                        guint            serial)
{
  Request *request = g_hash_table_lookup (requests->table, GUINT_TO_POINTER (serial));

  if (request == NULL)
    return FALSE;

  if (g_strcmp0 (request->method, "session/request_permission") == 0)
    {
      g_autofree char *option = reject_option (request->params);
      g_autofree char *json = outcome_json (option);

      send_reply (requests, request, json);
    }
  else
    reply_error (requests, request->rpc, request->id, request->id_bytes,
                 _("The client does not allow this request"));

  remove_request (requests, serial);
  return TRUE;
}

void
mend_acp_requests_cancel_permissions (MendAcpRequests *requests)
{
  g_autofree char *json = outcome_json (NULL);
  GHashTableIter iter;
  gpointer value;

  /* Sending only queues the answer: the table does not change under
   * the walk. */
  g_hash_table_iter_init (&iter, requests->table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Request *request = value;

      if (g_strcmp0 (request->method, "session/request_permission") != 0)
        continue;
      send_reply (requests, request, json);
      requests->kept_bytes -= request->bytes;
      g_hash_table_iter_remove (&iter);
    }
}

void
mend_acp_requests_forget_rpc (MendAcpRequests *requests,
                              MendAcpRpc      *rpc)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, requests->table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Request *) value)->rpc == rpc)
      {
        requests->kept_bytes -= ((Request *) value)->bytes;
        g_hash_table_iter_remove (&iter);
      }
}

void
mend_acp_requests_clear (MendAcpRequests *requests)
{
  g_hash_table_remove_all (requests->table);
  requests->kept_bytes = 0;
}

void
mend_acp_requests_get_backlog (MendAcpRequests *requests,
                               MendAcpBacklog  *backlog)
{
  backlog->n_kept = g_hash_table_size (requests->table);
  backlog->n_unwritten = requests->unwritten->n;
  backlog->bytes = requests->kept_bytes + requests->unwritten->bytes;
  backlog->n_refused = requests->n_refused;
  backlog->n_dropped = requests->n_dropped;
}
