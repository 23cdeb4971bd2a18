/* agent-matrix.h — the senders, scenarios and expected outcomes of test-agent-matrix
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libmend.h>

G_BEGIN_DECLS

typedef enum
{
  SENDER_HTTP,
  SENDER_CLAUDE_CLI,
  SENDER_CLAUDE_CODE_ACP,
  SENDER_CLAUDE_AGENT_ACP,
  SENDER_GEMINI,
  SENDER_CODEX,
  SENDER_AC_CLAUDE_AGENT_ACP,
  SENDER_AC_CODEX_ACP,
  N_SENDERS
} SenderId;

typedef enum
{
  MATRIX_API_MESSAGES,
  MATRIX_API_GEMINI,
  MATRIX_API_RESPONSES,
} MatrixApi;

typedef enum
{
  SCENARIO_503_TWICE,
  SCENARIO_503_ALWAYS,
  SCENARIO_429_HINT,
  SCENARIO_USAGE_LIMIT,
  SCENARIO_401,
  SCENARIO_400,
  SCENARIO_EMPTY,
  SCENARIO_CUT_BEFORE_OUTPUT,
  SCENARIO_CUT_AFTER_TEXT,
  SCENARIO_STOP_IN_WAIT,
  SCENARIO_STOP_IN_AGENT_BACKOFF,
  N_SCENARIOS
} Scenario;

extern const char * const scenario_names[N_SCENARIOS];

/* A sender of the matrix: how it is made (NULL: its program is missing),
 * with its own retries at most @own_retries where the scenario is about
 * them (and none otherwise). */
typedef struct
{
  SenderId     id;
  const char  *name;
  MatrixApi    api;
  MendSender *(*make) (const char *base_url,
                       guint       own_retries);
  guint        own_retries;    /* in the Stop-during-the-agent's-backoff cell */
  /* How many model requests one attempt makes, its own retries off, when
   * each answer is empty, or each stream cut: the agent's own recovery
   * that no setting turns off. The fault lasts that long, so that what
   * libmend does with it is seen. */
  guint        requests_per_empty;
  guint        requests_per_cut;
  guint        backoff_ms;     /* real time watched after a Stop for a late request */
} MatrixSender;

/* No failure: the turn's last failure is NULL. */
#define NO_FAILURE (-1)

/* What a cell must show; docs/agents.md has the same table. */
typedef struct
{
  const char    *na;                 /* the sender cannot play the cell: why */
  MendTurnState  state;              /* of the first prompt's turn */
  guint          attempts;
  int            reason;             /* of its last failure, or NO_FAILURE */
  int            kind;
  gboolean       partial;
  guint          requests;           /* the model requests for the first prompt, in all */
  int            hint_ms;            /* the first wait's server hint: -1 none, 0 not looked at */
  int            continue_mentions;  /* how often the Continue's request has the prompt (0: not looked at) */
  int            prompt_mentions;    /* how often the request that answered has the prompt (0: not looked at) */
  gboolean       continue_resends;   /* the Continue turn sends the failed prompt itself */
  guint          continue_requests;  /* the Continue turn's model requests (0: one) */
  guint          after_attempts;     /* the attempts of the turn after a Stop (0: one) */
  gboolean       agent_status;       /* the agent's own retries show as the turn's agent status */
  const char    *note;               /* why the cell differs from MendHttpSender's */
  const char    *defect;             /* the libmend defect that fails the cell: it is incomplete */
} Expected;

extern const Expected matrix_expected[N_SENDERS][N_SCENARIOS];

/* The outcomes of the chat's turn_retry records. */
typedef enum
{
  RECORD_SCHEDULED,
  RECORD_FIRED,
  RECORD_EXHAUSTED,
  RECORD_GAVE_UP,
  RECORD_STOPPED,
  N_RECORD_OUTCOMES
} RecordOutcome;

extern const char * const record_outcomes[N_RECORD_OUTCOMES];

/* What a cell showed. */
typedef struct
{
  gboolean       finished;           /* the scenario came to its end in time */
  MendTurnState  state;
  guint          attempts;
  int            reason;
  int            kind;
  guint          status;
  gboolean       partial;
  char          *message;            /* the last failure's message */
  guint          requests;           /* when the first turn finished */
  guint          requests_after;     /* at the end of the cell */
  guint          side_requests;
  guint          follow_up_requests; /* the model requests for the follow-up */
  guint          n_waits;
  guint          n_exhausted;
  guint          records[N_RECORD_OUTCOMES];  /* the first turn's, by outcome */
  int            hint_ms;            /* the first wait's delay when a server hint, else 0 */
  int            first_delay_ms;
  gboolean       wait_cancelled;
  gboolean       running_in_backoff;
  gint64         stop_ms;
  gboolean       agent_status;
  MendLifecycle  lifecycle;          /* when the first turn finished */
  GStrv          queue;              /* the same */
  char          *first_text;         /* the text the app was shown for the first prompt */
  char          *after_text;         /* and for the turns after it */
  gboolean       after_ok;           /* the turns after it succeeded */
  guint          after_attempts;     /* the attempts of the first turn after it */
  int            continue_mentions;
  int            prompt_mentions;    /* in the request that answered the first prompt */
} Seen;

char     *seen_describe (const Seen     *seen);
void      seen_clear    (Seen           *seen);

/* Appends to @mismatch each way @seen differs from @expected. */
void      matrix_check  (const Expected *expected,
                         Scenario        scenario,
                         const Seen     *seen,
                         GString        *mismatch);

G_END_DECLS
