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
  owner->unheld = FALSE;
  owner->context = g_main_context_ref (context != NULL ? context : g_main_context_default ());
}

void
mend_owner_clear (MendOwner *owner)
{
  if (owner->unheld)
    owner->context = NULL;
  g_clear_pointer (&owner->context, g_main_context_unref);
  owner->thread = NULL;
}

void
mend_owner_let_go (MendOwner *owner)
{
  g_return_if_fail (!owner->unheld && owner->context != NULL);

  owner->unheld = TRUE;
  g_main_context_unref (owner->context);
}

void
mend_owner_orphan (MendOwner *owner)
{
  /* The context a taker adopts is held. The context first, so that the
   * maker, meanwhile, is still let in. */
  owner->unheld = FALSE;
  g_atomic_pointer_set (&owner->context, NULL);
  g_atomic_pointer_set (&owner->thread, NULL);
}

gboolean
mend_owner_try_borrow (MendOwner *owner)
{
  return g_atomic_pointer_get (&owner->context) == NULL &&
         g_atomic_pointer_compare_and_exchange (&owner->thread, NULL, g_thread_self ());
}

void
mend_owner_end_borrow (MendOwner *owner)
{
  g_atomic_pointer_set (&owner->thread, NULL);
}

gboolean
mend_owner_is_current (const MendOwner *owner)
{
  gpointer maker = mend_owner_get_thread (owner);
  GMainContext *context = g_atomic_pointer_get (&((MendOwner *) owner)->context);

  /* Its context went (a gate of mend_gate_get_for_uri () held past
   * it): the first thread to use it takes it, with its thread-default
   * context, as if it had made it there; the rule below then holds for
   * it, from this first call on (another thread may run that context). */
  if (context == NULL)
    {
      if (maker != NULL ||
          !g_atomic_pointer_compare_and_exchange (&((MendOwner *) owner)->thread, NULL, g_thread_self ()))
        return mend_owner_get_thread (owner) == (gpointer) g_thread_self ();
      context = g_main_context_ref_thread_default ();
      g_atomic_pointer_set (&((MendOwner *) owner)->context, context);
      maker = g_thread_self ();
    }
  /* Read once: a re-read of one going may be NULL, the global default. */
  if (g_main_context_is_owner (context))
    {
      /* Another thread runs the context: from now on the object is that
       * thread's, and the maker is refused even between its iterations.
       * The thread is the one part of the owner that changes. */
      if (maker != NULL && maker != g_thread_self ())
        g_atomic_pointer_set (&((MendOwner *) owner)->thread, NULL);
      return TRUE;
    }
  if (maker != g_thread_self ())
    return FALSE;
  /* The maker, while no other thread runs the context. */
  if (!g_main_context_acquire (context))
    return FALSE;
  g_main_context_release (context);
  return TRUE;
}

gboolean
mend_owner_check_slow (const MendOwner *owner,
                       gconstpointer    object,
                       const char      *function)
{
  if (mend_owner_is_current (owner))
    return TRUE;

  mend_critical ("%s: %s %p belongs to another thread: a libmend object is used only on "
                 "the thread that runs its main context, or the one that made it while "
                 "none does; the call was refused",
                 function, G_IS_OBJECT (object) ? G_OBJECT_TYPE_NAME (object) : "object", object);
  return FALSE;
}

void
mend_owner_invoke (const MendOwner *owner,
                   GSourceFunc      func,
                   gpointer         data,
                   GDestroyNotify   notify)
{
  if (mend_owner_is_current (owner))
    {
      func (data);
      if (notify != NULL)
        notify (data);
      return;
    }
  /* Never g_main_context_invoke_full (): on a thread whose default
   * context is the owner's, it acquires the context and runs @func right
   * here, on the wrong thread, when no thread runs the context at that
   * moment (the maker may still be using the object). */
  {
    GMainContext *context = g_atomic_pointer_get (&((MendOwner *) owner)->context);
    GSource *source;

    /* Another thread is taking it as its context goes: nowhere to run. */
    if (context == NULL)
      {
        if (notify != NULL)
          notify (data);
        return;
      }
    source = g_idle_source_new ();
    g_source_set_priority (source, G_PRIORITY_DEFAULT);
    g_source_set_callback (source, func, data, notify);
    g_source_set_static_name (source, "[mend] owner invoke");
    g_source_attach (source, context);
    g_source_unref (source);
  }
}
