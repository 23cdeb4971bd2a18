/* mend-classifier-private.h — the ranks of evidence the classifier weighs in a failure's text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "mend-enums.h"

G_BEGIN_DECLS

/* How much a piece of evidence counts. The strongest evidence decides the
 * reason; between two of the same rank the one that never retries wins, so
 * that a doubt is never resolved by retrying:
 *
 *   DECISIVE      words that settle it whatever else the text says: a usage
 *                 limit ("You've hit your usage limit"), a request larger than
 *                 the whole limit, a certificate no retry makes acceptable
 *   CODE          a provider's own code or type, read as a whole token:
 *                 `overloaded_error`, `RESOURCE_EXHAUSTED`, a per-day quota
 *                 id, `ThrottlingException`, `ECONNRESET`
 *   SPECIFIC      a provider's own wording: "Overloaded", "Bedrock is unable
 *                 to process your request", "socket hang up"
 *   GENERIC_CODE  a code a wrapper or client library puts on anything:
 *                 `invalid_request_error`, `api_error`, `APIConnectionError`
 *   STATUS        an HTTP status: the response's, or a number a wrapper put
 *                 in the text ("API error (400): …")
 *   GENERIC       words too plain to outrank a status: "timeout", "bad request"
 *
 * So a wrapper's status never outranks a provider's code or words, and a
 * generic code yields to the words of the message it carries. */
typedef enum
{
  MEND_EVIDENCE_NONE,
  MEND_EVIDENCE_GENERIC,
  MEND_EVIDENCE_STATUS,
  MEND_EVIDENCE_GENERIC_CODE,
  MEND_EVIDENCE_SPECIFIC,
  MEND_EVIDENCE_CODE,
  MEND_EVIDENCE_DECISIVE,
} MendEvidenceRank;

typedef struct
{
  MendReason        reason;
  MendEvidenceRank  rank;
  char             *rule;  /* what decided, for people: "provider code …" */
} MendClassification;

/* Classifies error text (agent output, or an HTTP body). @status is the
 * HTTP status of the response the text came with, or 0 to read a status out
 * of the text itself. */
void   mend_classifier_classify   (const char         *text,
                                   guint               status,
                                   gboolean            status_is_http,
                                   MendClassification *result);
void   mend_classification_clear  (MendClassification *result);

typedef struct _MendRuleSet MendRuleSet;

/* Weighs @text by @rules alone (an app's rules, say), with the built-in
 * tie order; FALSE, and no rule in @result, when none of them matched. */
gboolean mend_classifier_match    (const MendRuleSet  *rules,
                                   const char         *text,
                                   MendClassification *result);

/* The first whole number in the text that is an HTTP status we know, or 0. */
guint  mend_classifier_status_in_text (const char *text);

/* The reason an HTTP status stands for, or UNKNOWN. */
MendReason mend_classifier_reason_for_status (guint status);


G_END_DECLS
