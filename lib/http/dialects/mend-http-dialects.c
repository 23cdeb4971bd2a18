/* mend-http-dialects.c — which dialect MendHttpSender speaks to an endpoint
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-http-dialect-private.h"

const MendHttpDialectClass *
mend_http_dialect_lookup (MendHttpDialect  dialect,
                          const char      *uri)
{
  g_autoptr(GUri) parsed = NULL;
  const char *path;

  switch (dialect)
    {
    case MEND_HTTP_DIALECT_MESSAGES:
      return &mend_http_dialect_messages;
    case MEND_HTTP_DIALECT_CHAT_COMPLETIONS:
      return &mend_http_dialect_chat_completions;
    case MEND_HTTP_DIALECT_RESPONSES:
      return &mend_http_dialect_responses;
    case MEND_HTTP_DIALECT_GEMINI:
      return &mend_http_dialect_gemini;
    case MEND_HTTP_DIALECT_AUTO:
    default:
      break;
    }

  /* By the endpoint's path, as the providers name them. */
  parsed = uri != NULL ? g_uri_parse (uri, G_URI_FLAGS_NONE, NULL) : NULL;
  path = parsed != NULL ? g_uri_get_path (parsed) : "";
  if (g_str_has_suffix (path, "/chat/completions"))
    return &mend_http_dialect_chat_completions;
  if (g_str_has_suffix (path, "/responses"))
    return &mend_http_dialect_responses;
  if (g_str_has_suffix (path, ":streamGenerateContent") || g_str_has_suffix (path, ":generateContent"))
    return &mend_http_dialect_gemini;
  return &mend_http_dialect_messages;
}
