/* mend-json-private.h — small json-glib helpers that fail closed on hostile input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The deepest nesting of arrays and objects libmend parses. json-glib
 * recurses once per level, so hostile input is refused before the parse. */
#define MEND_JSON_MAX_DEPTH 64

/* The most values (containers, and members or elements) in one JSON text:
 * each becomes a node of some 80 bytes, so a few megabytes of "[0,0,…]"
 * would otherwise become gigabytes of tree. */
#define MEND_JSON_MAX_VALUES 262144

/* Parses strict JSON. A text past MEND_JSON_MAX_DEPTH or
 * MEND_JSON_MAX_VALUES fails with G_IO_ERROR_MESSAGE_TOO_LARGE, any
 * other that is not JSON with JSON_PARSER_ERROR. */
JsonNode   *mend_json_parse          (const char    *data,
                                      gssize         length,
                                      GError       **error);
/* The same with @parser (json_parser_new_immutable ()), reused for many
 * texts in a row; it keeps the last root until the next parse. */
JsonNode   *mend_json_parse_with     (JsonParser    *parser,
                                      const char    *data,
                                      gssize         length,
                                      GError       **error);
char       *mend_json_to_string      (JsonNode      *node);
/* @data written again without the \u escapes of printable ASCII in it
 * (JSON allows "\u0072esult" for "result"; no writer needs it), so that
 * a byte scan for a name or a value finds what a parse finds; NULL when
 * it has none, or is not JSON. */
char       *mend_json_plain_escapes  (const char    *data,
                                      gsize          length);
char       *mend_json_builder_finish (JsonBuilder   *builder);
/* The first byte from @from before @end that is '"', '\\', below 0x20 or
 * 0x7f (@end if none), eight bytes at a time; sets *@high (unless NULL)
 * when a byte before it is beyond ASCII. */
const char *mend_json_next_special  (const char    *from,
                                     const char    *end,
                                     gboolean      *high);
/* Appends @value as a JSON string, escaped byte for byte as json-glib's
 * generator escapes it. */
void        mend_json_write_string   (GString       *out,
                                      const char    *value);
/* The same: its length, quotes included, and a copy to @out (which has
 * room for it), returning the end of what was written. */
gsize       mend_json_string_length  (const char    *value);
char       *mend_json_string_copy    (char          *out,
                                      const char    *value);
const char *mend_json_get_string     (JsonObject    *object,
                                      const char    *member);
JsonObject *mend_json_get_object     (JsonObject    *object,
                                      const char    *member);

/* Typed reads of saved state. Each clears *ok on a missing member (unless
 * @nullable), a wrong type, text that is not UTF-8 or a number out of
 * range, and leaves it alone otherwise, so that a run of reads can be
 * checked once. */
const char *mend_json_read_string    (JsonObject    *object,
                                      const char    *member,
                                      gboolean       nullable,
                                      gboolean      *ok);
gint64      mend_json_read_int       (JsonObject    *object,
                                      const char    *member,
                                      gint64         min,
                                      gint64         max,
                                      gboolean      *ok);
gboolean    mend_json_read_bool      (JsonObject    *object,
                                      const char    *member,
                                      gboolean      *ok);
int         mend_json_read_nick      (JsonObject    *object,
                                      const char    *member,
                                      GType          enum_type,
                                      gboolean      *ok);
void        mend_json_add_string     (JsonBuilder   *builder,
                                      const char    *member,
                                      const char    *value);
/* The nick of @value of @enum_type (static), or %NULL out of range; and
 * @member set to it, the counterpart of mend_json_read_nick(). */
const char *mend_json_nick           (GType          enum_type,
                                      int            value);
void        mend_json_add_nick       (JsonBuilder   *builder,
                                      const char    *member,
                                      GType          enum_type,
                                      int            value);

G_END_DECLS
