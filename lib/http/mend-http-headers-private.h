/* mend-http-headers-private.h — MendHttpSender's headers, checked and registered for redaction
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "mend-secret-set-private.h"

G_BEGIN_DECLS

/* RFC 9110: a name is a token; a value holds no control character but a
 * tab (so no CR, LF or NUL). @bad_offset, if not %NULL, is set to the
 * offset of the first byte a name may not hold (0 for an empty name). */
gboolean mend_http_header_name_is_valid     (const char         *name,
                                             gsize              *bad_offset);
gboolean mend_http_header_value_is_valid    (const char         *value);

/* Headers whose values are never credentials (Accept, anthropic-version…). */
gboolean mend_http_header_is_public         (const char         *name);

/* A header the app set: unless it is public, its value is pinned in
 * @secrets (and each value of a Cookie's pairs), or let go. */
void     mend_http_secrets_pin_header       (MendSecretSet      *secrets,
                                             const char         *name,
                                             const char         *value);
void     mend_http_secrets_unpin_header     (MendSecretSet      *secrets,
                                             const char         *name,
                                             const char         *value);

/* The credentials of a request (headers named like credentials) rotate
 * in @secrets; those of the endpoint are pinned. */
void     mend_http_secrets_remember_headers (MendSecretSet      *secrets,
                                             SoupMessageHeaders *headers);
void     mend_http_secrets_remember_uri     (MendSecretSet      *secrets,
                                             const char         *uri);

/* The wait an OpenAI-style 429 names in x-ratelimit-reset-requests and
 * x-ratelimit-reset-tokens, in milliseconds (-1 for none): of the limits
 * that were hit (remaining 0, or no remaining count given), the longest
 * reset; when requests were left, the tokens' reset. */
gint64   mend_http_rate_limit_reset_ms      (SoupMessageHeaders *headers);

G_END_DECLS
