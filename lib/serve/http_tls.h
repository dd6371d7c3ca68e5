/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_tls.h — the HTTPS listener's certificate and key: read and checked
 * once at the start (tls_file.h), handed to libmicrohttpd as options, and
 * the GnuTLS priorities it uses. Private to lib/serve (http.c).
 */
#ifndef DPMON_HTTP_TLS_H
#define DPMON_HTTP_TLS_H

#include <microhttpd.h>

#include "tls_file.h"

/* GnuTLS priorities of the HTTPS listener: its defaults, TLS 1.2 and 1.3
 * only (RFC 8996 deprecates 1.0 and 1.1). */
#define HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/**
 * Read the certificate @p cert_file and key @p key_file (PEM) into @p tls
 * (nothing when @p cert_file is NULL or empty: plain HTTP) and fill
 * @p opts, an option array for MHD_OPTION_ARRAY, with them.
 * @param opts  4 entries: certificate, key, priorities, end; MHD_OPTION_END
 *              first when there is no TLS (no TLS option is passed then:
 *              libmicrohttpd warns of one without MHD_USE_TLS)
 * @return 0, -ENOTSUP (libmicrohttpd without TLS), -EINVAL (a certificate
 *         without a key), or the negative errno of the file read; each
 *         logged with the file and why. @p tls may hold memory on error:
 *         the caller frees it with dpmon_tls_pem_free in every case.
 * Thread-safety: the thread that starts the server.
 */
int http_tls_load(struct dpmon_tls_pem *tls, const char *cert_file, const char *key_file,
		  struct MHD_OptionItem opts[4]);

#endif
