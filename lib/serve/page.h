/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page.h — the dashboard page served at GET /, embedded in the binary.
 *
 * The source is www/index.html (HTML, CSS and JavaScript in one file, no
 * external resource); lib/meson.build turns it into a C array with
 * scripts/embed.py at build time, so the appliance needs no file at run
 * time and the page always matches the binary's API.
 */
#ifndef DPMON_PAGE_H
#define DPMON_PAGE_H

#include <stddef.h>

/** The bytes of www/index.html (UTF-8), followed by a NUL not counted. */
extern const unsigned char dpmon_page_index_html[];
/** Their number. */
extern const size_t dpmon_page_index_html_len;

#endif /* DPMON_PAGE_H */
