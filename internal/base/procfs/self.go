package procfs

import "os"

// selfPID is this process's pid, read once: os.Getpid is a system call
// each time, and a fire asks for it several times. Process-wide because
// it is the process's: Go never forks without exec, so it never changes.
var selfPID = os.Getpid()

// Self is this process's pid.
func Self() int { return selfPID }
