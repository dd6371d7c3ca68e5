/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_corpus.c — seed corpus for fuzz_parse from packet captures.
 *
 *   fuzz_corpus OUTDIR FILE...
 *
 * Reads each capture with libpcap (pcap and pcapng, any byte order) and
 * writes its first MAX_PER_FILE frames to OUTDIR, one file per frame,
 * named "<file index>-<frame index>", each prefixed with fuzz_parse's 4
 * control bytes (every tunnel kind enabled, one segment, no stripped tag)
 * and, for every other frame, a second copy cut into segments. Files
 * libpcap cannot open are reported and skipped (some captures of the
 * shared test data are not Ethernet or are partly unreadable: their
 * frames still make good seeds as far as they go).
 *
 * Exit status: 0, or 1 on a usage or write error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#define MAX_PER_FILE 64

static int
write_seed(const char *dir, int file, int frame, int variant, const uint8_t *ctl,
	   const u_char *data, uint32_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d-%d-%d", dir, file, frame, variant);
	f = fopen(path, "wb");
	if (f == NULL) {
		fprintf(stderr, "fuzz_corpus: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fwrite(ctl, 1, 4, f);
	fwrite(data, 1, len, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "fuzz_corpus: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Seeds from one capture; @return frames written, or -1 on a write error. */
static int
seeds_of(const char *dir, int index, const char *file)
{
	static const uint8_t whole[4] = {0x3f, 0, 0, 0}, cut[4] = {0x3f, 0x47, 0, 0};
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(file, err);
	int n = 0;

	if (p == NULL) {
		fprintf(stderr, "fuzz_corpus: skipping %s: %s\n", file, err);
		return 0;
	}
	while (n < MAX_PER_FILE && pcap_next_ex(p, &h, &data) == 1) {
		if (write_seed(dir, index, n, 0, whole, data, h->caplen) != 0 ||
		    ((n & 1) && write_seed(dir, index, n, 1, cut, data, h->caplen) != 0)) {
			pcap_close(p);
			return -1;
		}
		n++;
	}
	pcap_close(p);
	return n;
}

int
main(int argc, char **argv)
{
	int total = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: fuzz_corpus OUTDIR FILE...\n");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		int n = seeds_of(argv[1], i - 2, argv[i]);

		if (n < 0)
			return 1;
		total += n;
	}
	printf("fuzz_corpus: %d frames from %d files\n", total, argc - 2);
	return 0;
}
