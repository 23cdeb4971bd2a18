/* mend-json.c — small json-glib helpers that fail closed on hostile input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-json-private.h"
#include "mend-redact-private.h"

/* The four hex digits of the \u escape at @i, or -1. */
static gint
hex4 (const char *data,
      gsize       length,
      gsize       i)
{
  gint value = 0;

  if (i + 6 > length || data[i] != '\\' || data[i + 1] != 'u')
    return -1;
  for (gsize j = i + 2; j < i + 6; j++)
    {
      gint digit = g_ascii_xdigit_value (data[j]);

      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }
  return value;
}

/* The length of the \u escape at @i (a surrogate pair is one), or 0
 * when it is not a character: not four hex digits, or half a pair. */
static gsize
unicode_escape (const char *data,
                gsize       length,
                gsize       i)
{
  gint value = hex4 (data, length, i);
  gint low;

  if (value < 0 || (value >= 0xdc00 && value <= 0xdfff))
    return 0;
  if (value < 0xd800 || value > 0xdbff)
    return 6;
  low = hex4 (data, length, i + 6);
  return low >= 0xdc00 && low <= 0xdfff ? 12 : 0;
}

/* A byte scan, before any parse. json-glib's scanner recurses once per
 * level of nesting and reads more than JSON (comments, for one), so the
 * text must pass a scan that reads it the way the parser will:
 *
 * - outside strings, only the bytes of strict JSON (whitespace, the six
 *   structural characters, numbers, the letters of true, false and null);
 *   a comment, a single quote or a NUL is refused, since a comment can
 *   hide a quote from a scan that does not read it, and the nesting behind
 *   it from the depth count;
 * - nesting no deeper than %MEND_JSON_MAX_DEPTH;
 * - no more than %MEND_JSON_MAX_VALUES values, so that a large text of
 *   small values does not become a much larger tree of nodes;
 * - one value: json-glib 1.6 takes "{}{}" or "1 {}", keeps the last value
 *   and leaks the others;
 * - each \u escape four hex digits and a character: json-glib 1.6 leaks
 *   a string on a broken surrogate pair, and reads a lone half as bytes
 *   that are not UTF-8.
 *
 * Returns %NULL when the text may be parsed, or what is wrong with it. */
static char *
check_shape (const char *data,
             gsize       length,
             gboolean   *bound)
{
  gboolean in_string = FALSE;
  gboolean in_scalar = FALSE;   /* a top-level number, true, false, null */
  gboolean done = FALSE;        /* the top-level value has ended */
  guint depth = 0;
  gsize values = 1;

  for (gsize i = 0; i < length; i++)
    {
      guchar c = data[i];

      if (c == '\0')
        return g_strdup (_("The JSON text holds a NUL byte"));

      if (in_string)
        {
          if (c == '\\' && i + 1 < length && data[i + 1] == 'u')
            {
              gsize n = unicode_escape (data, length, i);

              /* json-glib 1.6 leaks a string on a broken pair, and
               * makes a string that is not UTF-8 of a lone half. */
              if (n == 0)
                return g_strdup (_("The JSON text holds a \\u escape that is not a character"));
              i += n - 1;
            }
          else if (c == '\\' && i + 1 < length && data[i + 1] != '\0')
            i++;
          else if (c == '"')
            {
              in_string = FALSE;
              done = done || depth == 0;
            }
          continue;
        }

      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
          if (depth == 0)
            {
              done = done || in_scalar;
              in_scalar = FALSE;
            }
          continue;
        }

      if (c == '/' || c == '#')
        return g_strdup (_("The JSON text holds a comment, which JSON does not allow"));

      if (!(c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',' ||
            c == '"' || c == '-' || c == '+' || c == '.' || g_ascii_isalnum (c)))
        {
          if (c >= 0x20 && c < 0x7f)
            return g_strdup_printf (_("The JSON text holds “%c” outside a string"), c);
          return g_strdup_printf (_("The JSON text holds the byte 0x%02x outside a string"), c);
        }

      if (depth == 0 && (done || (in_scalar && (c == '{' || c == '[' || c == '"'))))
        return g_strdup (_("The JSON text holds more than one value"));

      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        {
          if (++depth > MEND_JSON_MAX_DEPTH && (*bound = TRUE))
            return g_strdup_printf (_("JSON is nested deeper than %u levels"), MEND_JSON_MAX_DEPTH);
          values++;
        }
      else if ((c == '}' || c == ']') && depth > 0)
        {
          if (--depth == 0)
            done = TRUE;
        }
      else if (c == ',')
        values++;
      else if (depth == 0)
        in_scalar = TRUE;

      if (values > MEND_JSON_MAX_VALUES && (*bound = TRUE))
        return g_strdup_printf (_("The JSON text holds more than %u values"), MEND_JSON_MAX_VALUES);
    }

  return NULL;
}

JsonNode *
mend_json_parse (const char  *data,
                 gssize       length,
                 GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();

  return mend_json_parse_with (parser, data, length, error);
}

JsonNode *
mend_json_parse_with (JsonParser  *parser,
                      const char  *data,
                      gssize       length,
                      GError     **error)
{
  g_autofree char *problem = NULL;
  gboolean bound = FALSE;
  JsonNode *root;

  if (length < 0)
    length = strlen (data);

  problem = check_shape (data, length, &bound);
  if (problem != NULL)
    {
      if (bound)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, problem);
      else
        g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE, problem);
      return NULL;
    }

  if (!json_parser_load_from_data (parser, data, length, error))
    {
      /* json-glib quotes the token it could not read. */
      if (error != NULL)
        mend_redact_error (*error);
      return NULL;
    }

  root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE,
                           _("The JSON text is empty"));
      return NULL;
    }

  return json_node_ref (root);
}

char *
mend_json_to_string (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

char *
mend_json_plain_escapes (const char *data,
                         gsize       length)
{
  const char *end = data + length;
  const char *p = data;
  g_autoptr(JsonNode) root = NULL;

  /* Each backslash starts an escape: the byte after it is its own. */
  while (p < end && (p = memchr (p, '\\', (gsize) (end - p))) != NULL)
    {
      gint value = hex4 (p, (gsize) (end - p), 0);

      if (value >= 0x20 && value < 0x7f)
        break;
      p += 2;
    }
  if (p == NULL || p >= end)
    return NULL;

  root = mend_json_parse (data, (gssize) length, NULL);
  return root != NULL ? mend_json_to_string (root) : NULL;
}

/* The bytes json-glib's generator escapes: '"', '\\', the control
 * characters but 0x1f, and 0x7f. */
static const guint8 escaped[256] = {
  [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1, [0x08] = 1,
  [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1,
  [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1,
  [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1,
  ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

#define ONES  G_GUINT64_CONSTANT (0x0101010101010101)
#define HIGHS G_GUINT64_CONSTANT (0x8080808080808080)

const char *
mend_json_next_special (const char *from,
                        const char *end,
                        gboolean   *high)
{
  const guchar *p = (const guchar *) from;
  guint64 seen = 0;

#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  while (end - (const char *) p >= 8)
    {
      guint64 v, quote, slash, del, stops;

      memcpy (&v, p, 8);
      quote = v ^ (ONES * '"');
      slash = v ^ (ONES * '\\');
      del = v ^ (ONES * 0x7f);
      /* A byte that is 0 in quote, slash or del, or below 0x20 in v: the
       * lowest such byte is flagged exactly (those above it may not be),
       * and the bytes are in memory order in a little-endian word. */
      stops = (((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | ((del - ONES) & ~del) |
               ((v - ONES * 0x20) & ~v)) & HIGHS;
      if (stops != 0)
        {
          guint at = (guint) __builtin_ctzll (stops) / 8;

          if (at > 0)
            seen |= v & (G_MAXUINT64 >> (64 - 8 * at));
          p += at;
          goto done;
        }
      seen |= v;
      p += 8;
    }
#endif
  while ((const char *) p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p != 0x7f)
    seen |= *p++;

#if G_BYTE_ORDER == G_LITTLE_ENDIAN
done:
#endif
  if (high != NULL && (seen & HIGHS) != 0)
    *high = TRUE;
  return (const char *) p;
}

/* The first byte json-glib's generator escapes from @p before @end, or
 * @end. */
static inline const guchar *
next_escaped (const guchar *p,
              const guchar *end)
{
  for (;;)
    {
      p = (const guchar *) mend_json_next_special ((const char *) p, (const char *) end, NULL);
      if (p == end || escaped[*p])
        return p;
      p++;   /* 0x1f: written as it is */
    }
}

/* The escape of byte @c, in @escape (at least 7 bytes); its length. */
static gsize
escape_byte (guchar  c,
             char   *escape)
{
  switch (c)
    {
    case '"': memcpy (escape, "\\\"", 2); return 2;
    case '\\': memcpy (escape, "\\\\", 2); return 2;
    case '\b': memcpy (escape, "\\b", 2); return 2;
    case '\f': memcpy (escape, "\\f", 2); return 2;
    case '\n': memcpy (escape, "\\n", 2); return 2;
    case '\r': memcpy (escape, "\\r", 2); return 2;
    case '\t': memcpy (escape, "\\t", 2); return 2;
    default:
      g_snprintf (escape, 7, "\\u%04x", c);
      return 6;
    }
}

gsize
mend_json_string_length (const char *value)
{
  const guchar *p = (const guchar *) value;
  const guchar *end = p + strlen (value);
  gsize length = 2 + (end - p);
  char escape[8];

  while ((p = next_escaped (p, end)) < end)
    length += escape_byte (*p++, escape) - 1;
  return length;
}

char *
mend_json_string_copy (char       *out,
                       const char *value)
{
  const guchar *run = (const guchar *) value;
  const guchar *p = run;
  const guchar *end = p + strlen (value);

  *out++ = '"';
  for (;;)
    {
      p = next_escaped (p, end);
      memcpy (out, run, p - run);
      out += p - run;
      if (p == end)
        break;
      {
        char escape[8];
        gsize n = escape_byte (*p, escape);

        memcpy (out, escape, n);
        out += n;
      }
      run = ++p;
    }
  *out++ = '"';
  return out;
}

void
mend_json_write_string (GString    *out,
                        const char *value)
{
  const guchar *run = (const guchar *) value;
  const guchar *p = run;
  const guchar *end = p + strlen (value);
  gsize at = out->len;
  char *o;

  /* One pass, written in place: room for the string as it is, grown by
   * what each escape adds. */
  g_string_set_size (out, at + (end - p) + 2);
  o = out->str + at;
  *o++ = '"';
  for (;;)
    {
      char escape[8];
      gsize n;
      gsize used;

      p = next_escaped (p, end);
      memcpy (o, run, p - run);
      o += p - run;
      if (p == end)
        break;
      n = escape_byte (*p, escape);
      used = o - out->str;
      /* The escape, the rest as it is and the quote. */
      g_string_set_size (out, used + n + (end - p - 1) + 1);
      o = out->str + used;
      memcpy (o, escape, n);
      o += n;
      run = ++p;
    }
  *o++ = '"';
  g_assert ((gsize) (o - out->str) == out->len);
}

char *
mend_json_builder_finish (JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = json_builder_get_root (builder);

  return mend_json_to_string (root);
}

const char *
mend_json_get_string (JsonObject *object,
                      const char *member)
{
  JsonNode *node;

  if (object == NULL)
    return NULL;

  node = json_object_get_member (object, member);
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;

  return json_node_get_string (node);
}

JsonObject *
mend_json_get_object (JsonObject *object,
                      const char *member)
{
  JsonNode *node;

  if (object == NULL)
    return NULL;

  node = json_object_get_member (object, member);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;

  return json_node_get_object (node);
}

const char *
mend_json_read_string (JsonObject *object,
                       const char *member,
                       gboolean    nullable,
                       gboolean   *ok)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (!nullable)
        *ok = FALSE;
      return NULL;
    }

  if (!JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING ||
      !g_utf8_validate (json_node_get_string (node), -1, NULL))
    {
      *ok = FALSE;
      return NULL;
    }

  return json_node_get_string (node);
}

gint64
mend_json_read_int (JsonObject *object,
                    const char *member,
                    gint64      min,
                    gint64      max,
                    gboolean   *ok)
{
  JsonNode *node = json_object_get_member (object, member);
  gint64 value;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    {
      *ok = FALSE;
      return min;
    }

  value = json_node_get_int (node);
  if (value < min || value > max)
    {
      *ok = FALSE;
      return min;
    }

  return value;
}

gboolean
mend_json_read_bool (JsonObject *object,
                     const char *member,
                     gboolean   *ok)
{
  JsonNode *node = json_object_get_member (object, member);

  /* A flag left out is false. */
  if (node == NULL)
    return FALSE;

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    {
      *ok = FALSE;
      return FALSE;
    }

  return json_node_get_boolean (node);
}

int
mend_json_read_nick (JsonObject *object,
                     const char *member,
                     GType       enum_type,
                     gboolean   *ok)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (enum_type);
  const char *nick = mend_json_read_string (object, member, FALSE, ok);
  GEnumValue *value = nick ? g_enum_get_value_by_nick (klass, nick) : NULL;

  if (value == NULL)
    {
      *ok = FALSE;
      return 0;
    }

  return value->value;
}

void
mend_json_add_string (JsonBuilder *builder,
                      const char  *member,
                      const char  *value)
{
  json_builder_set_member_name (builder, member);
  if (value != NULL)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

const char *
mend_json_nick (GType enum_type,
                int   value)
{
  GEnumClass *klass = g_type_class_ref (enum_type);
  GEnumValue *ev = g_enum_get_value (klass, value);
  const char *nick = ev ? ev->value_nick : NULL;

  /* Enum classes are never freed once made; the nick is static. */
  g_type_class_unref (klass);
  return nick;
}

void
mend_json_add_nick (JsonBuilder *builder,
                    const char  *member,
                    GType        enum_type,
                    int          value)
{
  mend_json_add_string (builder, member, mend_json_nick (enum_type, value));
}
