package runner

import (
	"os"
	"syscall"

	"cronvisor/internal/config"
)

// credential is what a job with user: or group: runs as (nil: as the
// supervisor). config allows a non-root supervisor only its own uid and
// gid, and setgroups(2) would refuse it even those: it keeps its groups.
func credential(a *config.Account) *syscall.Credential {
	if a == nil {
		return nil
	}
	return &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: a.Groups, NoSetGroups: os.Geteuid() != 0}
}

// accountEnv sets what cron sets for a crontab's owner when the job runs
// as a user: HOME, USER and LOGNAME from its passwd entry, and SHELL, the
// shell that runs the command (cron's /bin/sh; the job's shell here). The
// job's env is applied after, so it wins, as a crontab's own lines do.
func accountEnv(vars map[string]string, job config.Job) {
	a := job.RunAs
	if a == nil || a.User == "" {
		return
	}
	vars["HOME"] = a.Home
	vars["USER"] = a.User
	vars["LOGNAME"] = a.User
	vars["SHELL"] = job.Shell
}
