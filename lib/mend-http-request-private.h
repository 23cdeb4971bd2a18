/* mend-http-request-private.h — the default request body of MendHttpSender
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The default body of a Messages request:
 * {"model","max_tokens","stream":true,"messages":@messages}. */
char *mend_http_request_build_body (const char *model,
                                    guint       max_tokens,
                                    JsonNode   *messages);

G_END_DECLS
