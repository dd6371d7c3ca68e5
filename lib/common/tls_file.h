/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls_file.h — the HTTPS listener's certificate and private key
 * (http.tls_cert_file, http.tls_key_file): both read through the one file
 * reader (file.h), the key as a private file (not readable by its group
 * or others), both parsed by GnuTLS, and the key checked against the
 * certificate, so that --check-config and the start refuse what the TLS
 * handshake would fail on.
 *
 * Thread-safety: no state; any thread.
 */
#ifndef DPMON_TLS_FILE_H
#define DPMON_TLS_FILE_H

#include <stddef.h>

/** Largest certificate file (a PEM chain), in bytes. */
#define DPMON_TLS_CERT_MAX (1024 * 1024)
/** Largest private key file (PEM), in bytes. */
#define DPMON_TLS_KEY_MAX  (64 * 1024)

/** A certificate chain and its private key, PEM, as read from their files. */
struct dpmon_tls_pem {
	char *cert;      /**< malloc'd, NUL-terminated PEM chain, leaf first */
	size_t cert_len; /**< its length in bytes */
	char *key;       /**< malloc'd, NUL-terminated PEM private key */
	size_t key_len;  /**< its length in bytes */
};

/** Which of the two files a refusal is about. */
enum dpmon_tls_file_which {
	DPMON_TLS_FILE_CERT, /**< http.tls_cert_file */
	DPMON_TLS_FILE_KEY,  /**< http.tls_key_file */
};

/**
 * Read and check the certificate chain in @p cert_path (a regular file of
 * at most DPMON_TLS_CERT_MAX bytes, X.509 PEM, RFC 7468 section 5) and the
 * private key in @p key_path (a private regular file, file.h, of at most
 * DPMON_TLS_KEY_MAX bytes, PEM: PKCS#1, PKCS#8 unencrypted, or SEC 1),
 * and that the key is the certificate's.
 * @param cert_path  the certificate file.
 * @param key_path   the private key file.
 * @param out        receives both texts (free with dpmon_tls_pem_free);
 *                   zeroed on failure.
 * @param which      receives the file a refusal is about; may be NULL.
 * @param err        receives the reason of a refusal, without the file's
 *                   name ("not a regular file (FIFO)", "group or others may
 *                   access it ...", "no PEM certificate: ...", "the key does
 *                   not belong to the certificate of ..."); may be NULL.
 * @param errlen     size of @p err in bytes.
 * @return 0, or -errno as dpmon_file_read (-ENOENT, -EINVAL, -EFBIG, ...),
 *         -EPERM for a key file others may access, -EINVAL for text
 *         GnuTLS cannot parse or a key of another certificate, -ENOMEM.
 * Any thread.
 */
int dpmon_tls_files_read(const char *cert_path, const char *key_path, struct dpmon_tls_pem *out,
			 enum dpmon_tls_file_which *which, char *err, size_t errlen);

/**
 * Wipe the key's bytes and free both texts of @p p (zeroed after); NULL
 * or an already freed @p p is ignored.
 * Any thread.
 */
void dpmon_tls_pem_free(struct dpmon_tls_pem *p);

#endif /* DPMON_TLS_FILE_H */
