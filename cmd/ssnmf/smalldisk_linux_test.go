package main

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// smallDisk returns a directory on a tmpfs of the given size (as mount's
// size= option), mounted for the test: directly as root, or else by
// running the test again as root of a user and mount namespace (unshare
// -rm), when it reports ok false and the caller returns (that run's
// result is this test's). Without either it skips, saying why; with
// SSNMF_REQUIRE_TMPFS set (as .ci/run sets it) it fails instead.
func smallDisk(t *testing.T, size string) (dir string, ok bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("SSNMF_TEST_UNSHARED") != "" {
			noDisk(t, "no tmpfs: not root in the namespace of unshare -rm")
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			noDisk(t, "no tmpfs: the test mounts one, as root or through unshare -rm, and neither is at hand (%v)", err)
		}
		cmd := exec.Command(unshare, "-rm", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "SSNMF_TEST_UNSHARED=1")
		out, err := cmd.CombinedOutput()
		if bytes.Contains(out, []byte("unshare failed")) {
			noDisk(t, "no tmpfs: not root, and unshare -rm failed: %s", bytes.TrimSpace(out))
		}
		t.Logf("run again under unshare -rm:\n%s", out)
		if err != nil {
			t.Fatalf("the run under unshare -rm failed: %v", err)
		}
		return "", false
	}
	dir = t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		noDisk(t, "no tmpfs: mount: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir, true
}
