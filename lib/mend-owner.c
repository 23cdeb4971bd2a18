/* mend-owner.c — the thread rule of libmend's objects
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib-object.h>

#include "mend-owner-private.h"
#include "mend-redact-private.h"

void
mend_owner_init (MendOwner *owner)
{
  GMainContext *context = g_main_context_get_thread_default ();

  owner->thread = g_thread_self ();
  owner->context = g_main_context_ref (context != NULL ? context : g_main_context_default ());
}

void
mend_owner_clear (MendOwner *owner)
{
  g_clear_pointer (&owner->context, g_main_context_unref);
  owner->thread = NULL;
}

/* Another thread than the maker: allowed while it runs the object's main
 * context, where everything the object does is dispatched. */
gboolean
mend_owner_check_slow (const MendOwner *owner,
                       gconstpointer    object,
                       const char      *function)
{
  if (owner->context != NULL && g_main_context_is_owner (owner->context))
    return TRUE;

  mend_critical ("%s: %s %p belongs to another thread: a libmend object is used only on "
                 "the thread that made it or the one that runs its main context; "
                 "the call was refused",
                 function, G_IS_OBJECT (object) ? G_OBJECT_TYPE_NAME (object) : "object", object);
  return FALSE;
}
