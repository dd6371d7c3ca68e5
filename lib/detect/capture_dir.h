/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture_dir.h — the bound of the alerts' capture directory
 * (actions.pcap_dir, actions.pcap_max_files, actions.pcap_max_mb): the
 * oldest capture files are removed first to make room.
 *
 * Capture files are the names the sampler writes: ID.pcap and an earlier
 * run's ID.STAMP.pcap (sampler.h), ID being decimal digits; nothing else
 * in the directory is counted or removed.
 */
#ifndef DPMON_CAPTURE_DIR_H
#define DPMON_CAPTURE_DIR_H

#include <stdint.h>

/** What a capture directory may hold, and what must stay. */
struct dpmon_capture_bound {
	uint32_t max_files;       /**< capture files at most, >= 1 */
	uint64_t max_bytes;       /**< their bytes at most */
	uint64_t file_max_bytes;  /**< the largest one capture file grows to */
	const uint64_t *open_ids; /**< alerts whose ID.pcap is being written: kept */
	unsigned n_open;
};

/**
 * Remove the oldest capture files of @p dir (by modification time, then
 * name) until, with room for @p new_files more files of
 * b->file_max_bytes, at most b->max_files files and b->max_bytes bytes
 * are there. A file being written (b->open_ids) is never removed, and
 * counts as b->file_max_bytes at least (it grows). Removals are logged
 * (kind "sample", one line per call).
 * @param dir        the capture directory (an absolute path).
 * @param new_files  0, or 1 to make room for a capture about to start.
 * @return the number of files removed, -ENOSPC when the room could not be
 *         made (the files that could go are removed), or -errno when
 *         @p dir cannot be read.
 * Thread-safety: main lcore (the sampler's thread); it does file I/O,
 * never on the hot path.
 */
int dpmon_capture_dir_prune(const char *dir, const struct dpmon_capture_bound *b,
			    unsigned new_files);

#endif /* DPMON_CAPTURE_DIR_H */
