/* mend-types.h — the public types, declared ahead
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct _MendClock         MendClock;
typedef struct _MendManualClock   MendManualClock;
typedef struct _MendFailure       MendFailure;
typedef struct _MendErrorPolicy   MendErrorPolicy;
typedef struct _MendRetryWait     MendRetryWait;
typedef struct _MendTurn          MendTurn;
typedef struct _MendSender        MendSender;
typedef struct _MendHttpSender    MendHttpSender;
typedef struct _MendQueue         MendQueue;
typedef struct _MendQueueItem     MendQueueItem;
typedef struct _MendChat          MendChat;
typedef struct _MendGate          MendGate;
typedef struct _MendSubagent      MendSubagent;
typedef struct _MendSubagentRetry MendSubagentRetry;
typedef struct _MendStreamObserver MendStreamObserver;

G_END_DECLS
