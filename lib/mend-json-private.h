/* mend-json-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The deepest nesting of arrays and objects libmend parses. json-glib
 * recurses once per level, so hostile input is refused before the parse. */
#define MEND_JSON_MAX_DEPTH 64

JsonNode   *mend_json_parse          (const char    *data,
                                      gssize         length,
                                      GError       **error);
char       *mend_json_to_string      (JsonNode      *node);
char       *mend_json_builder_finish (JsonBuilder   *builder);
const char *mend_json_get_string     (JsonObject    *object,
                                      const char    *member);
JsonObject *mend_json_get_object     (JsonObject    *object,
                                      const char    *member);

G_END_DECLS
