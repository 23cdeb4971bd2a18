/* mend-version-macros.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib.h>

#ifndef _MEND_EXTERN
# define _MEND_EXTERN __attribute__((visibility("default"))) extern
#endif

#define MEND_AVAILABLE_IN_ALL _MEND_EXTERN
/**
 * MEND_DEPRECATED:
 *
 * Marks a symbol deprecated, with no replacement.
 */
#define MEND_DEPRECATED G_DEPRECATED _MEND_EXTERN

/**
 * MEND_DEPRECATED_FOR:
 * @f: the name of the symbol to use instead
 *
 * Marks a symbol deprecated in favour of @f.
 */
#define MEND_DEPRECATED_FOR(f) G_DEPRECATED_FOR(f) _MEND_EXTERN
