/* mend-owner-private.h — the thread rule of libmend's objects
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A libmend object lives on one thread: the one that runs the main
 * context it was made for (the thread-default context then), or, while no
 * other thread runs that context or has yet, the one that made it. Its signals, waits and
 * I/O are dispatched there; a call from any other thread is refused with a
 * critical that names the rule, before it touches anything. */
typedef struct
{
  GThread      *thread;
  GMainContext *context;  /* NULL once a context the object did not
                           * hold went, until a thread takes the object
                           * (see mend_owner_is_current ()) */
  gboolean      unheld;   /* the context is not held: see let_go */
} MendOwner;

void     mend_owner_init        (MendOwner       *owner);
void     mend_owner_clear       (MendOwner       *owner);
gboolean mend_owner_is_current  (const MendOwner *owner);
gboolean mend_owner_check_slow  (const MendOwner *owner,
                                 gconstpointer    object,
                                 const char      *function);
/* The object no longer holds its context (a gate of
 * mend_gate_get_for_uri (), which the context's own end lets go): the
 * context must outlive it, or be orphaned first. */
void     mend_owner_let_go      (MendOwner       *owner);
/* The context the object did not hold is going: no thread's until one
 * uses it, and takes it with its own thread-default context. */
void     mend_owner_orphan      (MendOwner       *owner);
/* For a moment, an orphan no thread took is this thread's (TRUE), so
 * that it may be told of something without being taken for good; given
 * back with mend_owner_end_borrow (). */
gboolean mend_owner_try_borrow  (MendOwner       *owner);
void     mend_owner_end_borrow  (MendOwner       *owner);
/* Runs @func on the owner's thread: at once when this is it, else from
 * the owner's main context (for what a dispose on another thread must
 * still do there). */
void     mend_owner_invoke      (const MendOwner *owner,
                                 GSourceFunc      func,
                                 gpointer         data,
                                 GDestroyNotify   notify);

/* The maker, or NULL once another thread ran the context: the one part
 * of the owner that changes, from any thread. */
static inline gpointer
mend_owner_get_thread (const MendOwner *owner)
{
  return g_atomic_pointer_get (&((MendOwner *) owner)->thread);
}

/* TRUE on the owner's thread. The common case, the maker running its
 * context, costs one comparison and the context's lock. */
#define mend_owner_check(owner, object) \
  (G_LIKELY (mend_owner_get_thread (owner) == (gpointer) g_thread_self () && \
             g_main_context_is_owner ((owner)->context)) || \
   mend_owner_check_slow ((owner), (object), G_STRFUNC))

#define mend_return_if_not_owner(owner, object) G_STMT_START { \
  if (!mend_owner_check ((owner), (object))) \
    return; \
} G_STMT_END

#define mend_return_val_if_not_owner(owner, object, val) G_STMT_START { \
  if (!mend_owner_check ((owner), (object))) \
    return (val); \
} G_STMT_END

G_END_DECLS
