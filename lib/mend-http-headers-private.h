/* mend-http-headers-private.h — MendHttpSender's headers, checked and registered for redaction
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

G_BEGIN_DECLS

/* RFC 9110: a name is a token; a value holds no control character but a
 * tab (so no CR, LF or NUL). */
gboolean mend_http_header_name_is_valid     (const char         *name);
gboolean mend_http_header_value_is_valid    (const char         *value);

/* Headers whose values are never credentials (Accept, anthropic-version…). */
gboolean mend_http_header_is_public         (const char         *name);

/* @secrets: the values one sender registered with the redactor, at most
 * 32; the oldest is let go first. */
void     mend_http_secrets_remember         (GPtrArray          *secrets,
                                             const char         *value);
void     mend_http_secrets_remember_headers (GPtrArray          *secrets,
                                             SoupMessageHeaders *headers);
void     mend_http_secrets_remember_uri     (GPtrArray          *secrets,
                                             const char         *uri);
void     mend_http_secrets_forget           (GPtrArray          *secrets);

G_END_DECLS
