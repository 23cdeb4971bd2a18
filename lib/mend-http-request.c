/* mend-http-request.c — the default request body of MendHttpSender
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The default request body of MendHttpSender.
 */

#include "config.h"

#include "mend-http-request-private.h"
#include "mend-json-private.h"

char *
mend_http_request_build_body (const char *model,
                              guint       max_tokens,
                              JsonNode   *messages)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  g_assert (model != NULL);
  g_assert (messages != NULL && JSON_NODE_HOLDS_ARRAY (messages));

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, model);
  json_builder_set_member_name (builder, "max_tokens");
  json_builder_add_int_value (builder, max_tokens);
  json_builder_set_member_name (builder, "stream");
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_set_member_name (builder, "messages");
  json_builder_add_value (builder, json_node_ref (messages));
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}
