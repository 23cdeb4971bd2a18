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
 * writer writes, on its way to the agent). Input is taken whole into a
 * buffer, and converted output is handed out as room allows. */
struct _MendAcpFraming
{
  GObject     parent_instance;

  gboolean    to_frames;
  GByteArray *in;
  GByteArray *out;
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

/* Each whole line of input becomes one framed message. */
static void
lines_to_frames (MendAcpFraming *self)
{
  gsize start = 0;

  for (;;)
    {
      const guint8 *line = self->in->data + start;
      const guint8 *end = memchr (line, '\n', self->in->len - start);
      gsize length;
      char header[64];
      int header_len;

      if (end == NULL)
        break;

      length = (gsize) (end - line);
      if (length > 0 && line[length - 1] == '\r')
        length--;
      start = (gsize) (end - self->in->data) + 1;

      if (is_blank (line, length))
        continue;

      header_len = g_snprintf (header, sizeof header, "Content-Length: %" G_GSIZE_FORMAT "\r\n\r\n", length);
      g_byte_array_append (self->out, (const guint8 *) header, (guint) header_len);
      g_byte_array_append (self->out, line, (guint) length);
    }

  if (start > 0)
    g_byte_array_remove_range (self->in, 0, (guint) start);
}

/* Each whole framed message becomes one line. Headers other than
 * Content-Length are dropped. */
static gboolean
frames_to_lines (MendAcpFraming  *self,
                 GError         **error)
{
  for (;;)
    {
      const char *data = (const char *) self->in->data;
      const char *end = g_strstr_len (data, self->in->len, "\r\n\r\n");
      g_autofree char *headers = NULL;
      gint64 length = -1;
      gsize header_len;
      char **lines;

      if (end == NULL)
        return TRUE;

      header_len = (gsize) (end - data) + 4;
      headers = g_strndup (data, header_len - 4);
      lines = g_strsplit (headers, "\r\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (g_ascii_strncasecmp (lines[i], "Content-Length:", 15) == 0)
          length = g_ascii_strtoll (lines[i] + 15, NULL, 10);
      g_strfreev (lines);

      if (length < 0 || length > MEND_ACP_FRAMING_MAX_MESSAGE_BYTES)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               _("A message to the agent has no valid length"));
          return FALSE;
        }

      if (self->in->len < header_len + (gsize) length)
        return TRUE;

      g_byte_array_append (self->out, self->in->data + header_len, (guint) length);
      g_byte_array_append (self->out, (const guint8 *) "\n", 1);
      g_byte_array_remove_range (self->in, 0, (guint) (header_len + (gsize) length));
    }
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
  gsize n;

  *bytes_read = 0;
  *bytes_written = 0;

  if (inbuf_size > 0)
    {
      if (self->in->len + inbuf_size > MEND_ACP_FRAMING_MAX_MESSAGE_BYTES + 64)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                               _("The agent sent a message too large to read"));
          return G_CONVERTER_ERROR;
        }
      g_byte_array_append (self->in, inbuf, (guint) inbuf_size);
      *bytes_read = inbuf_size;

      if (self->to_frames)
        lines_to_frames (self);
      else if (!frames_to_lines (self, error))
        return G_CONVERTER_ERROR;
    }

  /* A last line without its line end is a message too. */
  if ((flags & G_CONVERTER_INPUT_AT_END) != 0 && self->to_frames && self->in->len > 0)
    {
      g_byte_array_append (self->in, (const guint8 *) "\n", 1);
      lines_to_frames (self);
      g_byte_array_set_size (self->in, 0);
    }

  n = MIN (outbuf_size, self->out->len);
  if (n > 0)
    {
      memcpy (outbuf, self->out->data, n);
      g_byte_array_remove_range (self->out, 0, (guint) n);
      *bytes_written = n;
    }

  if (self->out->len == 0)
    {
      if ((flags & G_CONVERTER_INPUT_AT_END) != 0)
        return G_CONVERTER_FINISHED;
      if ((flags & G_CONVERTER_FLUSH) != 0)
        return G_CONVERTER_FLUSHED;
    }

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
  g_byte_array_set_size (self->out, 0);
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
  g_byte_array_unref (self->out);

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
  self->out = g_byte_array_new ();
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
