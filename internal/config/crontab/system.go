package crontab

import (
	"regexp"
	"slices"
	"strings"
)

// userName is what a user field looks like (useradd's default rule).
var userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]*\$?$`)

// systemShape is a command of /etc/crontab's own lines after its user
// field: the run-parts of cron.hourly and friends, Debian's anacron test.
var systemShape = regexp.MustCompile(`^\S+\s+(?:cd / && run-parts\b|test -x /usr/sbin/anacron\b|\[ -x /usr/sbin/anacron \])`)

// LooksSystem reports whether tab, read as a user crontab, is a system
// crontab instead: the first word of every entry's command is a user
// known to home (or root), or an entry has /etc/crontab's shape. users
// are the names found there, in order, each once.
func LooksSystem(tab *Tab, home func(user string) (string, bool)) (users []string, ok bool) {
	if len(tab.Entries) == 0 {
		return nil, false
	}
	named, shaped := 0, false
	for _, e := range tab.Entries {
		first, _, _ := strings.Cut(e.Command, " ")
		first, _, _ = strings.Cut(first, "\t")
		shaped = shaped || systemShape.MatchString(e.Command)
		if !userName.MatchString(first) {
			continue
		}
		if _, known := home(first); known || first == "root" || systemShape.MatchString(e.Command) {
			named++
			if !slices.Contains(users, first) {
				users = append(users, first)
			}
		}
	}
	return users, named == len(tab.Entries) || shaped
}
