/* mend-version-macros.h — which release each symbol came in, and the
 * MEND_VERSION_MIN_REQUIRED / MEND_VERSION_MAX_ALLOWED checks an app sets.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib.h>

#include "mend-version.h"

#ifndef _MEND_EXTERN
# define _MEND_EXTERN __attribute__((visibility("default"))) extern
#endif

/**
 * MEND_VERSION_0_2:
 *
 * A value for `MEND_VERSION_MIN_REQUIRED` and `MEND_VERSION_MAX_ALLOWED`:
 * the 0.2 API, the first release. Until 1.0 the API may change between
 * releases; NEWS says what changed.
 */
#define MEND_VERSION_0_2 (G_ENCODE_VERSION (0, 2))

/* The version of these headers. */
#define MEND_VERSION_CUR_STABLE (G_ENCODE_VERSION (MEND_MAJOR_VERSION, MEND_MINOR_VERSION))

/**
 * MEND_VERSION_MIN_REQUIRED:
 *
 * The oldest libmend API the app is written for: define it before including
 * `<libmend.h>` (for example `-DMEND_VERSION_MIN_REQUIRED=MEND_VERSION_0_2`)
 * to be warned about symbols deprecated in that version or before. It
 * defaults to the version of the headers.
 */
#ifndef MEND_VERSION_MIN_REQUIRED
# define MEND_VERSION_MIN_REQUIRED (MEND_VERSION_CUR_STABLE)
#endif

/**
 * MEND_VERSION_MAX_ALLOWED:
 *
 * The newest libmend API the app may use: define it before including
 * `<libmend.h>` to be warned when it uses a symbol added after that
 * version. It defaults to `MEND_VERSION_MIN_REQUIRED` when that is
 * newer than the headers, else to the version of the headers.
 */
#ifndef MEND_VERSION_MAX_ALLOWED
# if MEND_VERSION_MIN_REQUIRED > MEND_VERSION_CUR_STABLE
#  define MEND_VERSION_MAX_ALLOWED (MEND_VERSION_MIN_REQUIRED)
# else
#  define MEND_VERSION_MAX_ALLOWED (MEND_VERSION_CUR_STABLE)
# endif
#endif

#if MEND_VERSION_MAX_ALLOWED < MEND_VERSION_MIN_REQUIRED
# error "MEND_VERSION_MAX_ALLOWED must be >= MEND_VERSION_MIN_REQUIRED"
#endif
#if MEND_VERSION_MIN_REQUIRED < MEND_VERSION_0_2
# error "MEND_VERSION_MIN_REQUIRED must be >= MEND_VERSION_0_2"
#endif

/* Deprecation warnings go when the app defines
 * MEND_DISABLE_DEPRECATION_WARNINGS, and inside libmend itself. */
#if defined (MEND_DISABLE_DEPRECATION_WARNINGS) || defined (MEND_COMPILATION)
# define _MEND_DEPRECATED _MEND_EXTERN
# define _MEND_DEPRECATED_FOR(f) _MEND_EXTERN
# define _MEND_UNAVAILABLE(maj,min) _MEND_EXTERN
#else
# define _MEND_DEPRECATED G_DEPRECATED _MEND_EXTERN
# define _MEND_DEPRECATED_FOR(f) G_DEPRECATED_FOR(f) _MEND_EXTERN
# define _MEND_UNAVAILABLE(maj,min) G_UNAVAILABLE(maj,min) _MEND_EXTERN
#endif

/**
 * MEND_DEPRECATED:
 *
 * Marks a symbol deprecated, with no replacement. Nothing is deprecated
 * before 1.0: until then a name that goes is removed, and NEWS says so.
 */
#define MEND_DEPRECATED _MEND_DEPRECATED

/**
 * MEND_DEPRECATED_FOR:
 * @f: the name of the symbol to use instead
 *
 * Marks a symbol deprecated in favour of @f.
 */
#define MEND_DEPRECATED_FOR(f) _MEND_DEPRECATED_FOR(f)

/**
 * MEND_AVAILABLE_IN_ALL:
 *
 * Marks a symbol that every version of libmend has. Symbols of the public
 * API are marked with the version they came in instead
 * (`MEND_AVAILABLE_IN_0_2`).
 */
#define MEND_AVAILABLE_IN_ALL _MEND_EXTERN

/**
 * MEND_AVAILABLE_IN_0_2:
 *
 * Marks a symbol that came in libmend 0.2. Symbols added later are marked
 * `MEND_AVAILABLE_IN_x_y`, and an app that sets `MEND_VERSION_MAX_ALLOWED`
 * below x.y is warned when it uses one.
 */
#if MEND_VERSION_MAX_ALLOWED < MEND_VERSION_0_2
# define MEND_AVAILABLE_IN_0_2 _MEND_UNAVAILABLE(0, 2)
#else
# define MEND_AVAILABLE_IN_0_2 _MEND_EXTERN
#endif
