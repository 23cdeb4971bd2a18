/* mend-acp-requests.c — what an ACP agent asks of the client (permissions, files); deny by default
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The requests an Agent Client Protocol agent makes of its client:
 * emitted as MendAcpAgent::request, answered by the app or denied.
 */

#include "config.h"

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>
#include <jsonrpc-glib.h>

#include "mend-acp-requests-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* JSON-RPC's "internal error": the answer to a request the client
 * refuses (ACP has no code of its own for it). */
#define RPC_INTERNAL_ERROR (-32603)

/* A request of the agent's, until it is answered. */
typedef struct
{
  JsonrpcClient *client;
  GVariant      *id;
  char          *method;
  char          *params;        /* JSON */
} Request;

struct _MendAcpRequests
{
  GHashTable *table;            /* serial → Request */
  guint       last_serial;
};

static void
request_free (Request *request)
{
  g_clear_object (&request->client);
  g_clear_pointer (&request->id, g_variant_unref);
  g_free (request->method);
  g_free (request->params);
  g_free (request);
}

MendAcpRequests *
mend_acp_requests_new (void)
{
  MendAcpRequests *requests = g_new0 (MendAcpRequests, 1);

  requests->table = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) request_free);
  return requests;
}

void
mend_acp_requests_free (MendAcpRequests *requests)
{
  g_hash_table_unref (requests->table);
  g_free (requests);
}

guint
mend_acp_requests_add (MendAcpRequests *requests,
                       JsonrpcClient   *client,
                       GVariant        *id,
                       const char      *method,
                       const char      *params)
{
  Request *request = g_new0 (Request, 1);
  guint serial;

  request->client = g_object_ref (client);
  request->id = g_variant_ref (id);
  request->method = g_strdup (method);
  request->params = g_strdup (params);

  do
    serial = ++requests->last_serial;
  while (serial == 0 || g_hash_table_contains (requests->table, GUINT_TO_POINTER (serial)));
  g_hash_table_insert (requests->table, GUINT_TO_POINTER (serial), request);

  return serial;
}

static gboolean
send_reply (Request    *request,
            const char *json)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  /* Parsed on its own first: the strict parser bounds it, and
   * json_gvariant_deserialize_data () leaks its parser on a parse error
   * (json-glib 1.6). */
  node = mend_json_parse (json, -1, &error);
  if (node != NULL)
    reply = json_gvariant_deserialize (node, NULL, &error);
  if (reply == NULL)
    {
      mend_debug ("Not an answer to %s: %s", request->method, error->message);
      return FALSE;
    }
  g_variant_take_ref (reply);
  jsonrpc_client_reply_async (request->client, request->id, reply, NULL, NULL, NULL);
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

  sent = send_reply (request, result_json);
  if (sent)
    g_hash_table_remove (requests->table, GUINT_TO_POINTER (serial));
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

      send_reply (request, json);
    }
  else
    jsonrpc_client_reply_error_async (request->client, request->id, RPC_INTERNAL_ERROR,
                                      _("The client does not allow this request"),
                                      NULL, NULL, NULL);

  g_hash_table_remove (requests->table, GUINT_TO_POINTER (serial));
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
      send_reply (request, json);
      g_hash_table_iter_remove (&iter);
    }
}

void
mend_acp_requests_forget_client (MendAcpRequests *requests,
                                 JsonrpcClient   *client)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, requests->table);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Request *) value)->client == client)
      g_hash_table_iter_remove (&iter);
}

void
mend_acp_requests_clear (MendAcpRequests *requests)
{
  g_hash_table_remove_all (requests->table);
}
