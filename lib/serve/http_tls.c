/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http_tls.c — the HTTPS listener's certificate and key, loaded at the
 * start (http_tls.h). A leaf of http.c.
 */
#include "http_tls.h"

#include <errno.h>
#include <stdint.h>

#include "log.h"

int
http_tls_load(struct dpmon_tls_pem *tls, const char *cert_file, const char *key_file,
	      struct MHD_OptionItem opts[4])
{
	enum dpmon_tls_file_which which;
	char e[320];
	int err;

	opts[0] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	if (cert_file == NULL || cert_file[0] == '\0')
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_ERR,
			  "http: this libmicrohttpd was built without TLS");
		return -ENOTSUP;
	}
	if (key_file == NULL || key_file[0] == '\0') {
		dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_ERR,
			  "http: certificate file %s without a key file", cert_file);
		return -EINVAL;
	}
	err = dpmon_tls_files_read(cert_file, key_file, tls, &which, e, sizeof(e));
	if (err != 0) {
		dpmon_log(DPMON_LOG_HTTP, DPMON_LOG_ERR, "http: %s file %s: %s",
			  which == DPMON_TLS_FILE_KEY ? "key" : "certificate",
			  which == DPMON_TLS_FILE_KEY ? key_file : cert_file, e);
		return err;
	}
	opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert};
	opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key};
	opts[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
					  (void *)(uintptr_t)HTTP_TLS_PRIORITIES};
	opts[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	return 0;
}
