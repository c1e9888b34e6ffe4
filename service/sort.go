package service

import (
	"sort"

	"cronvisor/ctl"
)

func sortLocks(l []ctl.LockStatus) {
	sort.Slice(l, func(i, j int) bool { return l[i].Lock < l[j].Lock })
}
