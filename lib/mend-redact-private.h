/* mend-redact-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A copy of @text with credentials blanked: the value after "Bearer ",
 * "Authorization:" and "x-api-key:", and API keys shaped like "sk-…". Error
 * text from a server or an agent may echo a request's headers; libmend keeps
 * none of it in messages, records or logs. */
char *mend_redact_secrets (const char *text,
                           gssize      length);

G_END_DECLS
