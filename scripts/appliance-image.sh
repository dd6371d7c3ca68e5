#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# appliance-image.sh - the dpmon appliance: throw-away roots and a bootable
# Debian 12 disk image with dpmon installed and enabled.
#
# Usage (root):
#   appliance-image.sh rootfs CACHE NAME [PKG,PKG,...]
#       Print the path of CACHE/NAME.tar, a bookworm root (debootstrap
#       --variant=minbase plus PKGs) from the machine's Debian mirror. Built
#       once and reused while the package list is the same.
#   appliance-image.sh image --deb DEB --out DIR [--cache DIR] [--isolate CPUS]
#       [--hugepages N] [--config-dir DIR] [--root-password-hash HASH]
#       [--extra-packages P,P] [--keep-root]
#       Build DIR/dpmon-appliance.img: a GPT disk with an EFI system
#       partition (systemd-boot, the kernel, the initrd and one boot entry
#       carrying the kernel command line) and an ext4 root with dpmon.deb
#       installed, dpmon.service enabled and systemd-networkd doing DHCP on
#       the first Ethernet port for management. Boot it with UEFI firmware
#       (OVMF under qemu). --config-dir puts DIR's dpmon.json and dpmon.env in
#       /etc/dpmon; --root-password-hash sets root's password (a crypt hash,
#       `openssl passwd -6`; root stays locked otherwise); --extra-packages
#       adds Debian packages.
#       Docs: docs/appliance.md.
#
# Design: no loop devices and no mounts of images: the root is a directory
# (debootstrap + apt in a chroot), the file systems are made from
# directories and files (mkfs.ext4 -d, mkfs.vfat + mtools) and copied into
# the partitions of a sparse disk file laid out by sfdisk. That runs in a
# container as well as on a build host. Kernel command line:
#   default_hugepagesz=2M hugepagesz=2M hugepages=N   hugepages for DPDK
#   isolcpus=CPUS nohz_full=CPUS rcu_nocbs=CPUS         the worker cores
# Mirror: the first Debian URI of /etc/apt/sources.list(.d), else
# deb.debian.org; DPMON_MIRROR overrides it.
set -euo pipefail

SUITE=bookworm
ESP_MB=96
MOUNTED=()

die() {
	echo "appliance-image: $*" >&2
	exit 1
}

# mirror: the Debian archive this machine uses.
mirror() {
	local m=${DPMON_MIRROR:-}
	if [ -z "$m" ]; then
		m=$(grep -hoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list \
			/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
			2>/dev/null | head -1 | tr -d ' ') || true
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

# umount_all: undo mount_chroot (also on errors, through the EXIT trap).
umount_all() {
	local i
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		umount -l "${MOUNTED[i]}" 2>/dev/null || true
	done
	MOUNTED=()
}
trap umount_all EXIT

# mount_chroot ROOT: /proc, /sys, /dev and DNS for apt inside ROOT.
mount_chroot() {
	mount -t proc proc "$1/proc" && MOUNTED+=("$1/proc")
	mount --rbind /sys "$1/sys" && MOUNTED+=("$1/sys")
	mount --rbind /dev "$1/dev" && MOUNTED+=("$1/dev")
	cp -L /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null || true
}

# in_root ROOT CMD...: run CMD in ROOT with no service started by packages.
in_root() {
	local root=$1
	shift
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 chroot "$root" "$@"
	rm -f "$root/usr/sbin/policy-rc.d"
}

# sources ROOT MIRROR: bookworm, -updates and -security, as on the host.
write_sources() {
	local sec=${2%/debian*}/debian-security
	cat >"$1/etc/apt/sources.list" <<EOF
deb $2 $SUITE main
deb $2 $SUITE-updates main
deb $sec $SUITE-security main
EOF
}

# rootfs_tar CACHE NAME PKGS: build CACHE/NAME.tar unless it is current; print its path.
rootfs_tar() {
	local cache=$1 name=$2 pkgs=${3:-} m tmp
	m=$(mirror)
	mkdir -p "$cache"
	if [ -f "$cache/$name.tar" ] && [ "$(cat "$cache/$name.pkgs" 2>/dev/null)" = "$m $pkgs" ]; then
		echo "$cache/$name.tar"
		return 0
	fi
	tmp="$cache/$name.tmp"
	rm -rf "$tmp" "$cache/$name.tar"
	echo "appliance-image: debootstrap $SUITE ($pkgs) from $m" >&2
	debootstrap --variant=minbase ${pkgs:+--include="$pkgs"} "$SUITE" "$tmp" "$m" \
		>"$cache/$name.log" 2>&1 || { tail -20 "$cache/$name.log" >&2; die "debootstrap failed"; }
	write_sources "$tmp" "$m"
	mount_chroot "$tmp"
	in_root "$tmp" apt-get update -q >>"$cache/$name.log" 2>&1
	in_root "$tmp" apt-get -y -q upgrade >>"$cache/$name.log" 2>&1
	in_root "$tmp" apt-get clean
	umount_all
	tar -C "$tmp" -cf "$cache/$name.tar" .
	rm -rf "$tmp"
	echo "$m $pkgs" >"$cache/$name.pkgs"
	echo "$cache/$name.tar"
}

# install_deb ROOT DEB [PKG,PKG]: dpmon, its dependencies and extra packages from the mirror.
install_deb() {
	local pkgs=()
	IFS=, read -r -a pkgs <<<"${3:-}"
	cp "$2" "$1/tmp/dpmon.deb"
	mount_chroot "$1"
	in_root "$1" apt-get install -y -q --no-install-recommends /tmp/dpmon.deb "${pkgs[@]}"
	in_root "$1" apt-get clean
	umount_all
	rm -f "$1/tmp/dpmon.deb"
}

# configure_root ROOT CONFIG_DIR PASSWORD_HASH: host name, fstab,
# management network, services, /etc/dpmon, root's password.
configure_root() {
	local root=$1 f
	echo dpmon >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 dpmon\n' >"$root/etc/hosts"
	printf 'LABEL=dpmon-root / ext4 defaults,noatime 0 1\n' >"$root/etc/fstab"
	printf 'LABEL=DPMON-ESP /boot/efi vfat umask=0077,nofail 0 2\n' >>"$root/etc/fstab"
	mkdir -p "$root/boot/efi" "$root/etc/systemd/network"
	printf '[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n' \
		>"$root/etc/systemd/network/20-management.network"
	in_root "$root" systemctl enable systemd-networkd.service dpmon.service
	if [ -n "$2" ]; then
		for f in dpmon.json dpmon.env; do
			[ -f "$2/$f" ] || die "--config-dir $2: no $f"
			install -m 0644 "$2/$f" "$root/etc/dpmon/$f"
		done
	fi
	if [ -n "$3" ]; then
		in_root "$root" usermod -p "$3" root
	fi
}

# make_esp ROOT FILE CMDLINE: the EFI system partition image.
make_esp() {
	local root=$1 esp=$2 kernel initrd
	kernel=$(find "$root/boot" -name 'vmlinuz-*' | sort | tail -1)
	initrd=$(find "$root/boot" -name 'initrd.img-*' | sort | tail -1)
	if [ -z "$kernel" ] || [ -z "$initrd" ]; then die "no kernel or initrd in $root/boot"; fi
	rm -f "$esp"
	mkfs.vfat -C -F 32 -n DPMON-ESP "$esp" $((ESP_MB * 1024)) >/dev/null
	mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries
	mcopy -i "$esp" "$root/usr/lib/systemd/boot/efi/systemd-bootx64.efi" ::/EFI/BOOT/BOOTX64.EFI
	mcopy -i "$esp" "$kernel" ::/vmlinuz
	mcopy -i "$esp" "$initrd" ::/initrd.img
	printf 'default dpmon.conf\ntimeout 0\n' | mcopy -i "$esp" - ::/loader/loader.conf
	printf 'title dpmon appliance\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' "$3" |
		mcopy -i "$esp" - ::/loader/entries/dpmon.conf
}

# make_disk ROOT OUT CMDLINE: OUT/dpmon-appliance.img from the root directory.
make_disk() {
	local root=$1 out=$2 used root_mb disk
	make_esp "$root" "$out/esp.img" "$3"
	used=$(du -sm "$root" | cut -f1)
	root_mb=$((used + used / 2 + 512))
	rm -f "$out/root.img"
	mkfs.ext4 -q -L dpmon-root -d "$root" "$out/root.img" "${root_mb}M"
	disk="$out/dpmon-appliance.img"
	rm -f "$disk"
	truncate -s $((1 + ESP_MB + root_mb + 1))M "$disk"
	sfdisk -q "$disk" <<EOF
label: gpt
start=1MiB, size=${ESP_MB}MiB, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=esp
start=$((1 + ESP_MB))MiB, size=${root_mb}MiB, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name=root
EOF
	dd if="$out/esp.img" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
	dd if="$out/root.img" of="$disk" bs=1M seek=$((1 + ESP_MB)) conv=notrunc,sparse status=none
	rm -f "$out/esp.img" "$out/root.img"
	echo "$3" >"$out/cmdline.txt"
}

cmd_image() {
	local deb="" out="" cache="" isolate=1-3 huge=512 keep=0 tar root cmdline
	local config_dir="" password="" extra=""
	while [ $# -gt 0 ]; do
		case "$1" in
		--deb) deb=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--cache) cache=$2; shift 2 ;;
		--isolate) isolate=$2; shift 2 ;;
		--hugepages) huge=$2; shift 2 ;;
		--config-dir) config_dir=$2; shift 2 ;;
		--root-password-hash) password=$2; shift 2 ;;
		--extra-packages) extra=$2; shift 2 ;;
		--keep-root) keep=1; shift ;;
		*) die "unknown option $1" ;;
		esac
	done
	if [ ! -f "$deb" ] || [ -z "$out" ]; then die "image needs --deb FILE and --out DIR"; fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	cache=${cache:-$out/cache}
	tar=$(rootfs_tar "$cache" image \
		"systemd-sysv,udev,kmod,linux-image-amd64,initramfs-tools,systemd-boot-efi,iproute2")
	root="$out/root"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf "$tar"
	install_deb "$root" "$deb" "$extra"
	configure_root "$root" "$config_dir" "$password"
	cmdline="root=LABEL=dpmon-root ro console=ttyS0,115200 default_hugepagesz=2M"
	cmdline+=" hugepagesz=2M hugepages=$huge isolcpus=$isolate nohz_full=$isolate rcu_nocbs=$isolate"
	make_disk "$root" "$out" "$cmdline"
	[ "$keep" = 1 ] || rm -rf "$root"
	echo "$out/dpmon-appliance.img"
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot)"
case "${1:-}" in
rootfs) [ $# -ge 3 ] || die "usage: $0 rootfs CACHE NAME [PKGS]"; rootfs_tar "$2" "$3" "${4:-}" ;;
image) shift; cmd_image "$@" ;;
*) die "usage: $0 rootfs CACHE NAME [PKGS] | image --deb DEB --out DIR [...]" ;;
esac
