/* mend-http-sender-private.h — MendHttpSender's attempts, and reading their answers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "mend-http-answer-private.h"
#include "mend-http-dialect-private.h"
#include "mend-http-sender.h"
#include "mend-sse-private.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* One attempt of a turn: its request, and its answer as it is read. */
typedef struct
{
  MendHttpSender   *self;
  MendTurn         *turn;
  MendClock        *clock;
  SoupMessage      *message;
  GCancellable     *cancellable;  /* ours: the timeout and Stop cancel it */
  GCancellable     *outer;
  gulong            outer_id;
  guint             timeout_id;
  gboolean          timed_out;
  gint64            started_us;   /* real time */
  guint             n_interim;    /* 1xx answers read */
  gint64            interim_us;   /* real time of the first */
  gboolean          interim_flood;
  GInputStream     *body_stream;
  gboolean          streaming;    /* the answer is text/event-stream */
  gboolean          success;      /* its status is 2xx */
  MendSseReader     events;
  GByteArray       *body;
  guint64           received;     /* bytes of the answer, decoded */
  gboolean          ended;        /* an event ended the attempt… */
  MendFailure      *outcome;      /* …with this failure, or NULL for success */
  int               io_priority;
  MendHttpAnswer   *answer;       /* the assistant's message, as it arrives */
  JsonParser       *parser;       /* for the events the scan leaves, reused */
  GString          *scratch;      /* the text of the event the scan read */
  MendJsonTemplate  memo;         /* the last text delta the scan read */
  char             *buffer;       /* a chunk read from a pollable stream */
  GSource          *readable;     /* waits for the next chunk of one */
  guint             empty_wakeups;  /* in a row, that read nothing */
  gboolean          output_noted;   /* the turn was told of output */
  gboolean          content_wanted; /* ::content has a handler */
  gboolean          text_wanted;    /* the turn's ::text-delta has one */

  /* What reading the answer needs of the sender, taken as it starts. */
  MendTranscript             *transcript;
  const MendHttpDialectClass *wire;
  guint             timeout_ms;
  guint             max_body_bytes;
  guint             max_line_bytes;
  guint             max_event_bytes;
  guint             content_signal;     /* the sender's ::content */
  guint             text_delta_signal;  /* the sender's ::text-delta */
  char             *answer_text;  /* of a success, for the sender's answer */
} MendHttpAttempt;

/* The most 1xx answers an attempt reads, and for how long: libsoup
 * reads them back to back within one dispatch, so a flood of them would
 * hold the main loop, the timeout and Stop. */
#define MEND_HTTP_MAX_INTERIM 32
#define MEND_HTTP_MAX_INTERIM_MS 30000

/* Bytes read at a time, and the most read in one go before the main loop
 * gets a turn. */
#define MEND_HTTP_READ_SIZE 16384
#define MEND_HTTP_READS_PER_DISPATCH 64

/* Reading an attempt's answer (mend-http-sender-read.c), which calls
 * nothing of the sender's: what it needs is in the attempt. */

/* Ends the attempt of @task with @failure (taken), or NULL for success:
 * the answer then goes to the transcript, and its text to the attempt's
 * answer_text, for send_finish to make it the sender's answer. */
void  mend_http_attempt_finish        (GTask          *task,
                                       MendFailure    *failure);
/* The answer came: its status and headers, then its body, read to the
 * end of the attempt. */
void  mend_http_attempt_on_sent       (GObject        *object,
                                       GAsyncResult   *result,
                                       gpointer        user_data);
void  mend_http_attempt_free          (MendHttpAttempt *attempt);

/* The default request body for @turn, in the sender's dialect, with its
 * model and max-tokens: the same bytes for every attempt of a turn. */
char *mend_http_sender_build_body     (MendHttpSender *self,
                                       MendTurn       *turn);

G_END_DECLS
