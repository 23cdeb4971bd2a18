/* mend-acp-requests.c
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

#include "mend-acp-agent-private.h"
#include "mend-json-private.h"

/* JSON-RPC's "internal error": the answer to a request the client
 * refuses (ACP has no code of its own for it). */
#define RPC_INTERNAL_ERROR (-32603)

void
mend_acp_request_free (Request *request)
{
  g_clear_pointer (&request->child, mend_acp_child_unref);
  g_clear_pointer (&request->id, g_variant_unref);
  g_free (request->method);
  g_free (request->params);
  g_free (request);
}

gboolean
mend_acp_agent_handle_call (JsonrpcClient *client,
                            const char    *method,
                            GVariant      *id,
                            GVariant      *params,
                            Child         *child)
{
  MendAcpAgent *self = child->self;
  g_autoptr(JsonNode) node = NULL;
  Request *request;
  gboolean handled = FALSE;
  guint serial;

  if (self == NULL || self->child != child)
    return FALSE;

  node = params ? json_gvariant_serialize (params) : json_node_new (JSON_NODE_NULL);
  request = g_new0 (Request, 1);
  request->child = mend_acp_child_ref (child);
  request->id = g_variant_ref (id);
  request->method = g_strdup (method);
  request->params = mend_json_to_string (node);

  do
    serial = ++self->last_request;
  while (serial == 0 || g_hash_table_contains (self->requests, GUINT_TO_POINTER (serial)));
  g_hash_table_insert (self->requests, GUINT_TO_POINTER (serial), request);

  g_object_ref (self);
  g_signal_emit_by_name (self, "request", method, request->params, serial, &handled);
  if (!handled)
    mend_acp_agent_respond_default (self, serial);
  g_object_unref (self);

  return TRUE;
}

/* Requests of the agent */

gboolean
mend_acp_request_reply (Request    *request,
                        const char *json)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  if (request->child->client == NULL || request->child->exited)
    return FALSE;

  reply = json_gvariant_deserialize_data (json, -1, NULL, &error);
  if (reply != NULL)
    g_variant_take_ref (reply);
  if (reply == NULL)
    {
      g_debug ("Not an answer to %s: %s", request->method, error->message);
      return FALSE;
    }
  jsonrpc_client_reply_async (request->child->client, request->id, reply, NULL, NULL, NULL);
  return TRUE;
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

void
mend_acp_agent_respond_default (MendAcpAgent *self,
                                guint         serial)
{
  Request *request = g_hash_table_lookup (self->requests, GUINT_TO_POINTER (serial));

  if (request == NULL)
    return;

  if (g_strcmp0 (request->method, "session/request_permission") == 0)
    {
      g_autofree char *option = reject_option (request->params);
      g_autofree char *json = outcome_json (option);

      mend_acp_request_reply (request, json);
    }
  else if (request->child->client != NULL && !request->child->exited)
    jsonrpc_client_reply_error_async (request->child->client, request->id, RPC_INTERNAL_ERROR,
                                      _("The client does not allow this request"),
                                      NULL, NULL, NULL);

  g_hash_table_remove (self->requests, GUINT_TO_POINTER (serial));
}

void
mend_acp_agent_cancel_permissions (MendAcpAgent *self)
{
  g_autoptr(GList) serials = g_hash_table_get_keys (self->requests);

  for (GList *l = serials; l != NULL; l = l->next)
    {
      Request *request = g_hash_table_lookup (self->requests, l->data);
      g_autofree char *json = NULL;

      if (request == NULL || g_strcmp0 (request->method, "session/request_permission") != 0)
        continue;
      json = outcome_json (NULL);
      mend_acp_request_reply (request, json);
      g_hash_table_remove (self->requests, l->data);
    }
}

