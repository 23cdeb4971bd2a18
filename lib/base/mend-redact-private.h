/* mend-redact-private.h — keeps credentials out of every text libmend hands out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Values shorter than this are not registered: blanking every "1" of a
 * message would say nothing and hide everything. */
#define MEND_REDACT_MIN_SECRET_BYTES 6

/* A copy of @text with credentials blanked: every registered value, the
 * value of a credential label ("x-api-key: …", "\"api_key\":\"…\"",
 * "Authorization: Bearer …", "?key=…", "Cookie: …"), "Bearer …", a URL's
 * password, and tokens shaped like keys ("sk-…", "sk-ant-…", "AIza…",
 * "ghp_…", a JWT…). Error text from a server or an agent may echo a
 * request's headers; libmend keeps none of it in messages, records or
 * logs. */
char *mend_redact_secrets       (const char *text,
                                 gssize      length);

/* Redact before cutting: a cut inside a key leaves a piece of it that
 * no rule knows. The first @max_bytes of @text redacted (cut where a
 * character ends, with an ellipsis when cut); and its last @max_bytes,
 * for a text that was cut at its start already when @cut_before (its
 * first line, or word, goes: it may be the end of a key). */
char *mend_redact_head          (const char *text,
                                 gssize      length,
                                 gsize       max_bytes);
char *mend_redact_tail          (const char *text,
                                 gssize      length,
                                 gsize       max_bytes,
                                 gboolean    cut_before);

/* @text, @length bytes of a longer text cut there, redacted: the cut
 * may fall inside a key, whose start no rule knows as a key, so its last
 * word goes first. */
char *mend_redact_cut_end       (const char *text,
                                 gsize       length);

/* Values redacted wherever they appear, whatever their shape, while they
 * are registered: a sender registers the credentials it sends. Counted, so
 * that two senders holding the same key each add and remove it. */
void  mend_redact_add_secret    (const char *value);
void  mend_redact_remove_secret (const char *value);

/* Whether a header, parameter or field of this name holds a credential:
 * "Authorization", "x-api-key", "api_key", "key", "access_token",
 * "client_secret", "Cookie"… */
gboolean mend_redact_is_credential_name (const char *name);

/* Whether an environment variable or a command-line flag of this name
 * holds a credential: its name says KEY, TOKEN, SECRET, PASSWORD, PASSWD,
 * AUTH, CREDENTIAL or COOKIE, in any case ("ANTHROPIC_API_KEY",
 * "GITHUB_TOKEN", "--api-key", "--auth-token"), but not a count
 * ("MAX_TOKENS") or a socket ("SSH_AUTH_SOCK", "XAUTHORITY"). */
gboolean mend_redact_is_credential_variable (const char *name);

/* Redacts @error's message in place (nothing when @error is %NULL): an
 * error that quotes the text it was given leaves the library too. */
void     mend_redact_error              (GError             *error);

/* Every line libmend logs goes through the redaction of its failures:
 * what it quotes (an agent's error, a server's answer) may hold a key.
 * The library logs through these, never through g_debug () and its kin
 * (tests/hygiene/check-log-redacted.sh keeps it so). */
void     mend_log_redacted              (GLogLevelFlags      level,
                                         const char         *format,
                                         ...) G_GNUC_PRINTF (2, 3);

#define mend_debug(...)    mend_log_redacted (G_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define mend_message(...)  mend_log_redacted (G_LOG_LEVEL_MESSAGE, __VA_ARGS__)
#define mend_warning(...)  mend_log_redacted (G_LOG_LEVEL_WARNING, __VA_ARGS__)
#define mend_critical(...) mend_log_redacted (G_LOG_LEVEL_CRITICAL, __VA_ARGS__)

G_END_DECLS
