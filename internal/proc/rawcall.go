package proc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Calls that return at once, made without telling the runtime. A system
// call made the usual way (syscall.Syscall) wakes the runtime's monitor
// thread when it sleeps, so that it can take the processor back should
// the call block; woken, the monitor polls every 20 µs until the process
// is idle again. For a call on a non-blocking descriptor, repeated at
// every message a keeper handles, that wake-up cost more than the call.
// Only calls that cannot block may go here.

// recvmsgNow is recvmsg(2) with MSG_DONTWAIT: unix.EAGAIN when nothing
// is there. p must not be empty.
func recvmsgNow(fd int, p, oob []byte, flags int) (n, oobn int, err error) {
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	msg := unix.Msghdr{Iov: &iov}
	msg.SetIovlen(1)
	if len(oob) > 0 {
		msg.Control = &oob[0]
		msg.SetControllen(len(oob))
	}
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags|unix.MSG_DONTWAIT))
	if e != 0 {
		return 0, 0, e
	}
	return int(r), int(msg.Controllen), nil
}

// readableNow is ppoll(2) with a zero timeout: whether fd is readable
// (a pidfd: its process has exited).
func readableNow(fd int) bool { return pollNow(fd, unix.POLLIN) != 0 }

// pollNow is ppoll(2) with a zero timeout: the events of fd ready now.
func pollNow(fd int, events int16) int16 {
	p := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
	var zero unix.Timespec
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p[0])), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	if e != 0 || n == 0 {
		return 0
	}
	return p[0].Revents
}

// epollNow is epoll_wait(2) with a zero timeout: the events ready, -1
// on an error.
func epollNow(fd int, events []unix.EpollEvent) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(fd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return -1
	}
	return int(n)
}

// writeNow is write(2) on a non-blocking descriptor.
func writeNow(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// queuedNow is ioctl(2) SIOCINQ: the bytes waiting to be read on a
// socket, -1 on an error.
func queuedNow(fd int) int {
	var n int32
	_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCINQ, uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return -1
	}
	return int(n)
}
