/* mend-agent-common.c — what the agent senders share: stderr's tail, the environment
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-agent-common-private.h"
#include "mend-agent-process.h"
#include "mend-redact-private.h"

void
mend_stderr_tail_append (GByteArray   *tail,
                         const guint8 *data,
                         gsize         size)
{
  g_assert (tail != NULL);

  g_byte_array_append (tail, data, (guint) size);
  if (tail->len > MEND_AGENT_PROCESS_STDERR_MAX_BYTES)
    g_byte_array_remove_range (tail, 0, tail->len - MEND_AGENT_PROCESS_STDERR_MAX_BYTES);
}

char *
mend_stderr_tail_text (GByteArray *tail)
{
  g_autofree char *valid = NULL;

  g_assert (tail != NULL);

  if (tail->len == 0)
    return NULL;

  valid = g_utf8_make_valid ((const char *) tail->data, tail->len);
  g_strstrip (valid);
  return valid[0] != '\0' ? mend_redact_secrets (valid, -1) : NULL;
}

gboolean
mend_environ_replace (char               ***slot,
                      const char * const  *environ_)
{
  g_assert (slot != NULL);

  if (*slot == NULL && environ_ == NULL)
    return FALSE;
  if (*slot != NULL && environ_ != NULL &&
      g_strv_equal ((const char * const *) *slot, environ_))
    return FALSE;

  g_strfreev (*slot);
  *slot = g_strdupv ((char **) environ_);
  return TRUE;
}

char **
mend_environ_with (char       **current,
                   const char  *name,
                   const char  *value)
{
  char **env = current ? g_strdupv (current) : g_get_environ ();

  if (value != NULL)
    return g_environ_setenv (env, name, value, TRUE);
  return g_environ_unsetenv (env, name);
}
