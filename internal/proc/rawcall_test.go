package proc

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCallsThatReturnAtOnce checks the raw calls against what they stand
// for: recvmsg that finds nothing (EAGAIN), a message and a descriptor
// with it; write; ppoll of a pidfd before and after its process exits.
func TestCallsThatReturnAtOnce(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(4))
	if _, _, err := recvmsgNow(fds[0], buf, oob, 0); err != unix.EAGAIN {
		t.Fatalf("recvmsgNow on an empty socket: %v, want EAGAIN", err)
	}
	if n, err := writeNow(fds[1], []byte("stop\n")); n != 5 || err != nil {
		t.Fatalf("writeNow: %d, %v", n, err)
	}
	if n, _, err := recvmsgNow(fds[0], buf, oob, unix.MSG_CMSG_CLOEXEC); err != nil || string(buf[:n]) != "stop\n" {
		t.Fatalf("recvmsgNow: %q, %v", buf[:n], err)
	}
	if err := unix.Sendmsg(fds[1], []byte("x"), unix.UnixRights(fds[1]), nil, 0); err != nil {
		t.Fatal(err)
	}
	n, oobn, err := recvmsgNow(fds[0], buf, oob, unix.MSG_CMSG_CLOEXEC)
	got := rightsOf(oob[:oobn])
	if err != nil || n != 1 || len(got) != 1 {
		t.Fatalf("recvmsgNow with a descriptor: n %d, rights %v, %v", n, got, err)
	}
	unix.Close(got[0])

	cmd := exec.Command("sleep", "0.2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(pidfd)
	if readableNow(pidfd) {
		t.Error("readableNow: a running process's pidfd is readable")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !readableNow(pidfd) {
		t.Error("readableNow: an exited process's pidfd is not readable")
	}
}
