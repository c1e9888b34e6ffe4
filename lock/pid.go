package lock

import "os"

// selfPID is this process's pid, read once: os.Getpid is a system call
// each time, and a fire asked for it several times. Process-wide because
// it is the process's: Go never forks without exec, so it never changes.
var selfPID = os.Getpid()
