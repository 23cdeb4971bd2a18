/* mend-acp-framing.c — newline-delimited JSON-RPC framing for ACP agents
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-acp-framing-private.h"

/* One converter, one direction: lines to frames (what the agent writes,
 * on its way to the JSON-RPC reader) or frames to lines (what the JSON-RPC
 * writer writes, on its way to the agent). A message is written out whole
 * or not at all, and a converter never keeps output back: GIO's converter
 * streams only call it again when they have input for it, and an agent
 * that waits for an answer sends none. What it keeps is the start of a
 * message whose end has not come yet. */
struct _MendAcpFraming
{
  GObject     parent_instance;

  gboolean    to_frames;
  GByteArray *in;
  gsize       scanned;    /* bytes of in with no line end in them */
};

static void mend_acp_framing_converter_init (GConverterIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendAcpFraming, mend_acp_framing, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_CONVERTER, mend_acp_framing_converter_init))

static gboolean
is_blank (const guint8 *data,
          gsize         length)
{
  for (gsize i = 0; i < length; i++)
    if (!g_ascii_isspace (data[i]))
      return FALSE;
  return TRUE;
}

static gboolean
read_hex4 (const guint8 *p,
           guint        *value)
{
  *value = 0;
  for (guint i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (p[i]);

      if (digit < 0)
        return FALSE;
      *value = *value * 16 + (guint) digit;
    }
  return TRUE;
}

/* A \uD83D with no low half after it, or a low half alone, is no
 * character: an agent in JavaScript writes one when it cuts a chunk of
 * text inside an emoji. json-glib makes invalid UTF-8 of it, which GVariant
 * refuses with a critical, and the JSON-RPC reader fails on it: the run
 * would end on a piece of the answer, again at every attempt. Each lone
 * half becomes \uFFFD, in place (the same six bytes). */
static void
replace_lone_surrogates (guint8 *data,
                         gsize   length)
{
  guint8 *end = data + length;
  guint8 *p = data;

  while (p < end && (p = memchr (p, '\\', (gsize) (end - p))) != NULL)
    {
      guint unit;
      guint next;

      if (end - p < 6 || p[1] != 'u' || !read_hex4 (p + 2, &unit))
        {
          /* Another escape, such as \\: its two bytes. */
          p += 2;
          continue;
        }
      if (unit >= 0xD800 && unit <= 0xDBFF && end - p >= 12 && p[6] == '\\' && p[7] == 'u' &&
          read_hex4 (p + 8, &next) && next >= 0xDC00 && next <= 0xDFFF)
        {
          p += 12;
          continue;
        }
      if (unit >= 0xD800 && unit <= 0xDFFF)
        memcpy (p + 2, "FFFD", 4);
      p += 6;
    }
}

/* The whole line at @start: its text at *@body, *@length bytes long, and
 * where the next begins. At the end of the input, a last line without
 * its line end is a line too. The bytes before *@scanned are known to
 * hold no line end: a long line is searched once, not again with each
 * piece of it. */
static gboolean
next_line (GByteArray *in,
           gsize       start,
           gboolean    at_end,
           gsize      *scanned,
           gsize      *body,
           gsize      *length,
           gsize      *next)
{
  const guint8 *line;
  const guint8 *end;
  gsize from = MAX (start, *scanned);

  if (start >= in->len)
    return FALSE;
  line = in->data + start;
  end = from < in->len ? memchr (in->data + from, '\n', in->len - from) : NULL;
  /* Past a line end the next search starts at the next line. */
  *scanned = end ? 0 : in->len;
  if (end == NULL && !at_end)
    return FALSE;

  *body = start;
  *length = end ? (gsize) (end - line) : in->len - start;
  *next = end ? start + *length + 1 : in->len;
  if (*length > 0 && line[*length - 1] == '\r')
    (*length)--;
  return TRUE;
}

/* The whole framed message at @start. Headers other than Content-Length
 * are dropped. */
static int
next_frame (GByteArray  *in,
            gsize        start,
            gsize       *body,
            gsize       *length,
            gsize       *next,
            GError     **error)
{
  const char *data;
  const char *end;
  g_autofree char *headers = NULL;
  gint64 content_length = -1;
  gsize header_len;
  char **lines;

  if (start >= in->len)
    return 0;
  data = (const char *) in->data + start;
  end = g_strstr_len (data, in->len - start, "\r\n\r\n");
  if (end == NULL)
    return 0;

  header_len = (gsize) (end - data) + 4;
  headers = g_strndup (data, header_len - 4);
  lines = g_strsplit (headers, "\r\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_ascii_strncasecmp (lines[i], "Content-Length:", 15) == 0)
      content_length = g_ascii_strtoll (lines[i] + 15, NULL, 10);
  g_strfreev (lines);

  if (content_length < 0 || content_length > MEND_ACP_FRAMING_MAX_MESSAGE_BYTES)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("A message to the agent has no valid length"));
      return -1;
    }

  if (in->len - start < header_len + (gsize) content_length)
    return 0;

  *body = start + header_len;
  *length = (gsize) content_length;
  *next = *body + *length;
  return 1;
}

static GConverterResult
too_large (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                       _("The agent sent a message too large to read"));
  return G_CONVERTER_ERROR;
}

/* The bytes kept once @inbuf is taken in: a line reader keeps what
 * follows the last line end, a frame reader all of it until its frames
 * are whole. */
static gsize
held_after (MendAcpFraming *self,
            const guint8   *inbuf,
            gsize           inbuf_size)
{
  if (self->to_frames)
    for (gsize i = inbuf_size; i > 0; i--)
      if (inbuf[i - 1] == '\n')
        return inbuf_size - i;
  return self->in->len + inbuf_size;
}

static GConverterResult
mend_acp_framing_convert (GConverter       *converter,
                          const void       *inbuf,
                          gsize             inbuf_size,
                          void             *outbuf,
                          gsize             outbuf_size,
                          GConverterFlags   flags,
                          gsize            *bytes_read,
                          gsize            *bytes_written,
                          GError          **error)
{
  MendAcpFraming *self = MEND_ACP_FRAMING (converter);
  gboolean at_end = (flags & G_CONVERTER_INPUT_AT_END) != 0;
  guint8 *out = outbuf;
  gsize old_len = self->in->len;
  gsize used = 0;               /* what of self->in is written out or skipped */
  gboolean full = FALSE;

  *bytes_read = 0;
  *bytes_written = 0;

  /* What is kept is the start of one message: bounded as a message is,
   * not the whole messages that come in with it. */
  if (held_after (self, inbuf, inbuf_size) > MEND_ACP_FRAMING_MAX_MESSAGE_BYTES + 64)
    return too_large (error);
  g_byte_array_append (self->in, inbuf, (guint) inbuf_size);

  for (;;)
    {
      gsize body = 0, length = 0, next = 0;
      char header[64];
      gsize header_len = 0;
      gsize needed;

      if (self->to_frames)
        {
          if (!next_line (self->in, used, at_end, &self->scanned, &body, &length, &next))
            break;
          if (length > MEND_ACP_FRAMING_MAX_MESSAGE_BYTES)
            {
              g_byte_array_set_size (self->in, (guint) old_len);
              self->scanned = 0;
              return too_large (error);
            }
          if (is_blank (self->in->data + body, length))
            {
              used = next;
              continue;
            }
          replace_lone_surrogates (self->in->data + body, length);
          header_len = (gsize) g_snprintf (header, sizeof header,
                                           "Content-Length: %" G_GSIZE_FORMAT "\r\n\r\n", length);
          needed = header_len + length;
        }
      else
        {
          int found = next_frame (self->in, used, &body, &length, &next, error);

          if (found < 0)
            {
              g_byte_array_set_size (self->in, (guint) old_len);
              return G_CONVERTER_ERROR;
            }
          if (found == 0)
            break;
          needed = length + 1;
        }

      if (needed > outbuf_size - *bytes_written)
        {
          full = TRUE;
          break;
        }

      memcpy (out + *bytes_written, header, header_len);
      memcpy (out + *bytes_written + header_len, self->in->data + body, length);
      *bytes_written += header_len + length;
      if (!self->to_frames)
        out[(*bytes_written)++] = '\n';
      used = next;
    }

  if (full && *bytes_written == 0)
    {
      /* The caller offers more room and the same input again. */
      g_byte_array_set_size (self->in, (guint) old_len);
      self->scanned = 0;
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "Not enough room for a message");
      return G_CONVERTER_ERROR;
    }

  /* Input after the last message written out is left to the caller when
   * a message did not fit: only the start of a message is kept. */
  *bytes_read = full ? MAX (used, old_len) - old_len : inbuf_size;
  g_byte_array_set_size (self->in, (guint) (old_len + *bytes_read));
  g_byte_array_remove_range (self->in, 0, (guint) used);
  self->scanned = MIN (self->scanned > used ? self->scanned - used : 0, self->in->len);

  if (!full && at_end)
    return G_CONVERTER_FINISHED;
  if (!full && (flags & G_CONVERTER_FLUSH) != 0)
    return G_CONVERTER_FLUSHED;

  if (*bytes_read == 0 && *bytes_written == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT,
                           "More input is needed");
      return G_CONVERTER_ERROR;
    }

  return G_CONVERTER_CONVERTED;
}

static void
mend_acp_framing_reset (GConverter *converter)
{
  MendAcpFraming *self = MEND_ACP_FRAMING (converter);

  g_byte_array_set_size (self->in, 0);
  self->scanned = 0;
}

static void
mend_acp_framing_converter_init (GConverterIface *iface)
{
  iface->convert = mend_acp_framing_convert;
  iface->reset = mend_acp_framing_reset;
}

static void
mend_acp_framing_finalize (GObject *object)
{
  MendAcpFraming *self = (MendAcpFraming *) object;

  g_byte_array_unref (self->in);

  G_OBJECT_CLASS (mend_acp_framing_parent_class)->finalize (object);
}

static void
mend_acp_framing_class_init (MendAcpFramingClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = mend_acp_framing_finalize;
}

static void
mend_acp_framing_init (MendAcpFraming *self)
{
  self->in = g_byte_array_new ();
}

/* A stream over an agent's standard output (@lines_in) and input
 * (@lines_out) that reads and writes Content-Length framed messages. */
GIOStream *
mend_acp_framing_wrap (GInputStream  *lines_in,
                       GOutputStream *lines_out)
{
  g_autoptr(MendAcpFraming) reader = g_object_new (MEND_TYPE_ACP_FRAMING, NULL);
  g_autoptr(MendAcpFraming) writer = g_object_new (MEND_TYPE_ACP_FRAMING, NULL);
  g_autoptr(GInputStream) in = NULL;
  g_autoptr(GOutputStream) out = NULL;

  reader->to_frames = TRUE;
  in = g_converter_input_stream_new (lines_in, G_CONVERTER (reader));
  out = g_converter_output_stream_new (lines_out, G_CONVERTER (writer));

  return g_simple_io_stream_new (in, out);
}
