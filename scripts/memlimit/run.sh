#!/usr/bin/env bash
# run.sh runs a command inside a new Linux memory cgroup whose limit is
# LIMIT bytes, so that a claim of bounded memory is tested against the
# kernel's accounting, which counts the page cache of the files the command
# maps and writes, not only its heap.
#
#   scripts/memlimit/run.sh LIMIT COMMAND [ARG...]
#
# LIMIT is a number of bytes, or a number with K, M or G (powers of 1024).
# It uses cgroup v2 (memory.max, memory.swap.max = 0) where the memory
# controller is enabled in /sys/fs/cgroup, else cgroup v1
# (memory.limit_in_bytes under /sys/fs/cgroup/memory); it needs the right
# to make a cgroup (root). When the command ends, it prints one line on
# stderr:
#
#   memlimit: cgroup v1, limit 104857600, peak 104849408, 41.2s, exit 0
#
# (peak is memory.max_usage_in_bytes or memory.peak: the most the cgroup
# was charged, page cache included) and exits with the command's status. Where no memory cgroup can be made it prints why and
# exits 77, which tests take as a reason to skip.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 LIMIT COMMAND [ARG...]" >&2
	exit 2
fi
limit=$1
shift
case $limit in
*K) limit=$((${limit%K} * 1024)) ;;
*M) limit=$((${limit%M} * 1024 * 1024)) ;;
*G) limit=$((${limit%G} * 1024 * 1024 * 1024)) ;;
esac
case $limit in
'' | *[!0-9]*)
	echo "memlimit: LIMIT $1: want a number of bytes, or a number with K, M or G" >&2
	exit 2
	;;
esac

name=ssnmf-memlimit-$$
root=/sys/fs/cgroup
if grep -qw memory "$root/cgroup.controllers" 2>/dev/null; then
	version=v2
	dir=$root/$name
	grep -qw memory "$root/cgroup.subtree_control" || echo +memory >"$root/cgroup.subtree_control" 2>/dev/null
	if ! mkdir "$dir" 2>/dev/null || ! echo "$limit" >"$dir/memory.max" 2>/dev/null; then
		rmdir "$dir" 2>/dev/null
		echo "memlimit: cannot make a memory cgroup under $root (cgroup v2; need root)" >&2
		exit 77
	fi
	echo 0 >"$dir/memory.swap.max" 2>/dev/null
elif [ -w "$root/memory" ] && [ -e "$root/memory/memory.limit_in_bytes" ]; then
	version=v1
	dir=$root/memory/$name
	if ! mkdir "$dir" 2>/dev/null || ! echo "$limit" >"$dir/memory.limit_in_bytes" 2>/dev/null; then
		rmdir "$dir" 2>/dev/null
		echo "memlimit: cannot make a memory cgroup under $root/memory (cgroup v1; need root)" >&2
		exit 77
	fi
	echo "$limit" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null
else
	echo "memlimit: no memory cgroup controller to use (neither cgroup v2 with memory in $root/cgroup.controllers nor a writable $root/memory)" >&2
	exit 77
fi

start=$(date +%s.%N)
# The subshell joins the cgroup, then becomes the command.
(echo "$BASHPID" >"$dir/cgroup.procs" && exec "$@") &
child=$!
trap 'kill -TERM $child 2>/dev/null' INT TERM
wait $child
status=$?
end=$(date +%s.%N)
if [ $version = v2 ]; then
	peak=$(cat "$dir/memory.peak" 2>/dev/null || echo unknown)
else
	peak=$(cat "$dir/memory.max_usage_in_bytes")
fi
rmdir "$dir" 2>/dev/null
echo "$version $limit $peak $start $end $status" |
	awk '{printf "memlimit: cgroup %s, limit %s, peak %s, %.1fs, exit %d\n", $1, $2, $3, $5 - $4, $6}' >&2
exit $status
