/* mend-stream-observer.h — MendStreamObserver: reads an agent's stream-json lines into the chat
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_STREAM_OBSERVER_DEFAULT_MAX_LINE_BYTES:
 *
 * The default of [property@Mend.StreamObserver:max-line-bytes]: 1 MiB.
 */
#define MEND_STREAM_OBSERVER_DEFAULT_MAX_LINE_BYTES (1024 * 1024)

#define MEND_TYPE_STREAM_OBSERVER (mend_stream_observer_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendStreamObserver, mend_stream_observer, MEND, STREAM_OBSERVER, GObject)

MEND_AVAILABLE_IN_0_2
MendStreamObserver *mend_stream_observer_new                (MendChat            *chat);
MEND_AVAILABLE_IN_0_2
MendChat           *mend_stream_observer_get_chat           (MendStreamObserver  *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_stream_observer_feed_line          (MendStreamObserver  *self,
                                                             const char          *line,
                                                             gssize               length);
MEND_AVAILABLE_IN_0_2
void                mend_stream_observer_watch_async        (MendStreamObserver  *self,
                                                             GInputStream        *stream,
                                                             GCancellable        *cancellable,
                                                             GAsyncReadyCallback  callback,
                                                             gpointer             user_data);
MEND_AVAILABLE_IN_0_2
gboolean            mend_stream_observer_watch_finish       (MendStreamObserver  *self,
                                                             GAsyncResult        *result,
                                                             GError             **error);
MEND_AVAILABLE_IN_0_2
guint               mend_stream_observer_get_max_line_bytes (MendStreamObserver  *self);
MEND_AVAILABLE_IN_0_2
void                mend_stream_observer_set_max_line_bytes (MendStreamObserver  *self,
                                                             guint                max_line_bytes);

G_END_DECLS
