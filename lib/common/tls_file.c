/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls_file.c — the HTTPS listener's certificate and key (tls_file.h): read
 * through the one file reader (file.h), parsed and matched by GnuTLS, the
 * library libmicrohttpd serves TLS with.
 */
#include "tls_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "file.h"

/* A file's text as GnuTLS's datum (which it only reads). */
static gnutls_datum_t
datum_of(char *text, size_t len)
{
	return (gnutls_datum_t){.data = (unsigned char *)text, .size = (unsigned)len};
}

/* The chain in @p pem parses (at least one certificate). */
static int
check_cert(char *pem, size_t len, char *err, size_t errlen)
{
	gnutls_datum_t d = datum_of(pem, len);
	gnutls_x509_crt_t *crts = NULL;
	unsigned n = 0;
	int rc = gnutls_x509_crt_list_import2(&crts, &n, &d, GNUTLS_X509_FMT_PEM, 0);

	if (rc < 0) {
		snprintf(err, errlen, "no X.509 certificate in PEM form: %s", gnutls_strerror(rc));
		return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	}
	for (unsigned i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	return 0;
}

/* The key in @p pem parses (unencrypted PEM). */
static int
check_key(char *pem, size_t len, char *err, size_t errlen)
{
	gnutls_datum_t d = datum_of(pem, len);
	gnutls_x509_privkey_t k;
	int rc = gnutls_x509_privkey_init(&k);

	if (rc < 0) {
		snprintf(err, errlen, "%s", gnutls_strerror(rc));
		return -ENOMEM;
	}
	rc = gnutls_x509_privkey_import2(k, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
	gnutls_x509_privkey_deinit(k);
	if (rc < 0) {
		snprintf(err, errlen, "no unencrypted private key in PEM form: %s",
			 gnutls_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

/* The key of @p p is the one of its certificate (GnuTLS checks the pair
 * as it loads it, as libmicrohttpd will). */
static int
check_pair(struct dpmon_tls_pem *p, const char *cert_path, char *err, size_t errlen)
{
	gnutls_datum_t c = datum_of(p->cert, p->cert_len), k = datum_of(p->key, p->key_len);
	gnutls_certificate_credentials_t cred;
	int rc = gnutls_certificate_allocate_credentials(&cred);

	if (rc < 0) {
		snprintf(err, errlen, "%s", gnutls_strerror(rc));
		return -ENOMEM;
	}
	rc = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	gnutls_certificate_free_credentials(cred);
	if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
		snprintf(err, errlen, "the key does not belong to the certificate of %s",
			 cert_path);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(err, errlen, "GnuTLS cannot use it with the certificate: %s",
			 gnutls_strerror(rc));
		return rc == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	}
	return 0;
}

int
dpmon_tls_files_read(const char *cert_path, const char *key_path, struct dpmon_tls_pem *out,
		     enum dpmon_tls_file_which *which, char *err, size_t errlen)
{
	struct dpmon_tls_pem p = {0};
	enum dpmon_tls_file_which w = DPMON_TLS_FILE_CERT;
	char e[256] = "";
	int rc = dpmon_file_read(cert_path, DPMON_TLS_CERT_MAX, &p.cert, &p.cert_len, e, sizeof(e));

	if (rc == 0)
		rc = check_cert(p.cert, p.cert_len, e, sizeof(e));
	if (rc == 0) {
		w = DPMON_TLS_FILE_KEY;
		rc = dpmon_file_read_private(key_path, DPMON_TLS_KEY_MAX, &p.key, &p.key_len, e,
					     sizeof(e));
	}
	if (rc == 0)
		rc = check_key(p.key, p.key_len, e, sizeof(e));
	if (rc == 0)
		rc = check_pair(&p, cert_path, e, sizeof(e));
	if (rc != 0) {
		dpmon_tls_pem_free(&p);
		if (which != NULL)
			*which = w;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s", e);
		*out = (struct dpmon_tls_pem){0};
		return rc;
	}
	*out = p;
	return 0;
}

void
dpmon_tls_pem_free(struct dpmon_tls_pem *p)
{
	if (p == NULL)
		return;
	if (p->key != NULL)
		explicit_bzero(p->key, p->key_len);
	free(p->key);
	free(p->cert);
	*p = (struct dpmon_tls_pem){0};
}
