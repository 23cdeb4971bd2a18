/* mend-classifier-rules-private.h — the classifier's rules as data: rows, their parser, the built-in set
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "mend-classifier-private.h"
#include "mend-enums.h"

G_BEGIN_DECLS

/* How a rule's pattern is looked for in a failure's text; see the head of
 * lib/failure/rules/classifier-rules.txt for the format. */
typedef enum
{
  MEND_MATCH_WORDS,        /* anywhere in the normalized text */
  MEND_MATCH_TOKEN,        /* a whole token, any case */
  MEND_MATCH_TOKEN_EXACT,  /* a whole token, this case */
  MEND_MATCH_INFIX,        /* inside a token, this case */
  MEND_MATCH_STATUS,       /* an HTTP status, or a class of them */
  MEND_MATCH_NEAR,         /* a word of one family, then one of another close after */
} MendMatch;

typedef struct
{
  MendMatch         match;
  MendEvidenceRank  rank;
  MendReason        reason;
  char             *pattern;  /* words: lower case; status: "503" or "4xx" */
  char             *source;
  char            **family;   /* near: the first family's words */
  char            **evidence; /* near: the words that must follow one of them */
} MendRule;

/* How far past a near rule's first word (bytes of normalized text) its
 * evidence may start: one clause. */
#define MEND_RULE_NEAR_WINDOW 48

/* The longest pattern of a token rule: longer tokens are never looked up. */
#define MEND_RULE_MAX_TOKEN 128

/* Parses rules in the format of lib/failure/rules/classifier-rules.txt. When
 * @need_order, the text must have its `order` line; else it must not, and
 * the built-in order applies. Errors are MEND_POLICY_ERROR_INVALID and name
 * the line. */
MendRuleSet *mend_rule_set_parse        (const char    *text,
                                         gssize         length,
                                         gboolean       need_order,
                                         GError       **error);
MendRuleSet *mend_rule_set_new          (void);
MendRuleSet *mend_rule_set_ref          (MendRuleSet   *self);
void         mend_rule_set_unref        (MendRuleSet   *self);

/* The rules compiled into the library, parsed at first use; a built-in
 * row that does not parse aborts (a programming error, which the tests
 * catch). Transfer none: it lives as long as the process. */
MendRuleSet *mend_rule_set_get_default  (void);

/* The built-in rules' text, for the tests. */
GBytes      *mend_rule_set_dup_default_text (void);

/* Adds a words rule: @phrase is normalized (lower-cased, white space made
 * single spaces) first. FALSE, with @error set, when nothing of it is
 * left to match or it is longer than MEND_RULE_MAX_PHRASE. */
#define MEND_RULE_MAX_PHRASE 1024
gboolean     mend_rule_set_add_words    (MendRuleSet   *self,
                                         const char    *phrase,
                                         MendReason     reason,
                                         MendEvidenceRank rank,
                                         const char    *source,
                                         GError       **error);

guint        mend_rule_set_get_n_rules  (const MendRuleSet *self);
const MendRule *mend_rule_set_get_rule  (const MendRuleSet *self,
                                         guint              i);

/* Where @reason stands in the tie order: lower wins a tie. */
int          mend_rule_set_safety       (const MendRuleSet *self,
                                         MendReason         reason);

/* The rules of a kind that apply to @token (@len bytes, not
 * NUL-terminated): token, TOKEN and infix rows. Calls @func for each, in
 * the file's order. */
typedef void (*MendRuleFunc) (const MendRule *rule,
                              gpointer        data);
void         mend_rule_set_foreach_token_rule (const MendRuleSet *self,
                                               const char        *token,
                                               gsize              len,
                                               MendRuleFunc       func,
                                               gpointer           data);

/* The reason and the row an HTTP status stands for; UNKNOWN and NULL when
 * no row names it. */
MendReason   mend_rule_set_reason_for_status (const MendRuleSet *self,
                                              guint              status,
                                              const MendRule   **rule);

/* Writes the rules in the file's format, one a line: parse () reads it
 * back to the same rules. */
char        *mend_rule_set_to_text      (const MendRuleSet *self);

/* Lower-cased text with URLs blanked out and runs of white space (a
 * terminal's line wrap included) made one space: what rules match. */
char        *mend_rules_normalize_text  (const char        *text);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendRuleSet, mend_rule_set_unref)

G_END_DECLS
