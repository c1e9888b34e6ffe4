package config

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"

	"gopkg.in/yaml.v3"
)

// A job's user: and group: are looked up when the file is loaded, so that
// validate names an unknown one at its line and a run never fails to start
// for it. Names and numeric ids are both accepted; either must exist in
// the user database (os/user: /etc/passwd and /etc/group, or NSS).

// lookedUp is one user or group lookup, cached per decoder: thousands of
// jobs tend to share one user.
type lookedUp struct {
	acct *Account // the user's, or for a group only GID set
	err  string   // the message when the lookup failed
}

// runAs resolves user: and group: into j.RunAs and refuses what this
// supervisor could not do: only root may run a job as another user.
func (d *decoder) runAs(j *Job, fields *jobFields) {
	ue, ge := fields[kUser], fields[kGroup]
	uName, hasUser := scalarText(ue)
	gName, hasGroup := scalarText(ge)
	if !hasUser && !hasGroup {
		return // not written, or not text (reported already)
	}
	acct := &Account{UID: uint32(d.euid), GID: uint32(d.egid)}
	ok := true
	if hasUser {
		if u := d.lookup("user", uName); u.err != "" {
			d.errorf(ue.val, "user: %s", u.err)
			ok = false
		} else {
			*acct = *u.acct
		}
	}
	if hasGroup {
		if g := d.lookup("group", gName); g.err != "" {
			d.errorf(ge.val, "group: %s", g.err)
			ok = false
		} else {
			acct.GID = g.acct.GID
		}
	}
	if !ok {
		return
	}
	if d.euid != 0 {
		d.refuseSwitch(acct, ue, ge)
	}
	key := fmt.Sprint(*acct)
	if shared, ok := d.accounts[key]; ok {
		acct = shared // jobs running as one account share it (read-only)
	} else {
		d.accounts[key] = acct
	}
	j.RunAs = acct
}

// refuseSwitch reports a user or group other than this process's own:
// changing them takes root (CAP_SETUID, CAP_SETGID).
func (d *decoder) refuseSwitch(acct *Account, ue, ge entry) {
	self := strconv.Itoa(d.euid)
	if u, err := user.LookupId(self); err == nil {
		self = fmt.Sprintf("%s (%s)", self, u.Username)
	}
	switch {
	case int(acct.UID) != d.euid && ue.has():
		d.errorf(ue.val, "user: only a root supervisor can run a job as another user; cronvisor runs as uid %s", self)
	case int(acct.GID) != d.egid && ge.has():
		d.errorf(ge.val, "group: only a root supervisor can run a job as another group; cronvisor runs as uid %s, gid %d", self, d.egid)
	case int(acct.GID) != d.egid:
		d.errorf(ue.val, "user: the user's group (gid %d) is not cronvisor's own (gid %d); only a root supervisor can switch groups", acct.GID, d.egid)
	}
}

// scalarText is the text of a written scalar value.
func scalarText(e entry) (string, bool) {
	if !e.has() {
		return "", false
	}
	n := resolve(e.val)
	if n.Kind != yaml.ScalarNode || isNull(n) || n.Value == "" {
		return "", false
	}
	return n.Value, true
}

// lookup finds a user (with its home and supplementary groups) or a group
// by name or numeric id.
func (d *decoder) lookup(kind, name string) lookedUp {
	key := kind + ":" + name
	if l, ok := d.lookups[key]; ok {
		return l
	}
	var l lookedUp
	if kind == "user" {
		l = lookupUser(name)
	} else {
		l = lookupGroup(name)
	}
	d.lookups[key] = l
	return l
}

func lookupUser(name string) lookedUp {
	var u *user.User
	var err error
	if isNumeric(name) {
		u, err = user.LookupId(name)
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return lookedUp{err: lookupError("user", name, err)}
	}
	uid, err1 := parseID(u.Uid)
	gid, err2 := parseID(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return lookedUp{err: fmt.Sprintf("%q: %v", name, err)}
	}
	acct := &Account{User: u.Username, Home: u.HomeDir, UID: uid, GID: gid}
	gids, err := u.GroupIds()
	if err != nil {
		return lookedUp{err: fmt.Sprintf("cannot list the groups of %q: %v", name, err)}
	}
	for _, g := range gids {
		if id, err := parseID(g); err == nil {
			acct.Groups = append(acct.Groups, id)
		}
	}
	return lookedUp{acct: acct}
}

func lookupGroup(name string) lookedUp {
	var g *user.Group
	var err error
	if isNumeric(name) {
		g, err = user.LookupGroupId(name)
	} else {
		g, err = user.LookupGroup(name)
	}
	if err != nil {
		return lookedUp{err: lookupError("group", name, err)}
	}
	gid, err := parseID(g.Gid)
	if err != nil {
		return lookedUp{err: fmt.Sprintf("%q: %v", name, err)}
	}
	return lookedUp{acct: &Account{GID: gid}}
}

// lookupError says that the user or group is unknown, or why it could not
// be looked up.
func lookupError(kind, name string, err error) string {
	var (
		uu  user.UnknownUserError
		uid user.UnknownUserIdError
		ug  user.UnknownGroupError
		gid user.UnknownGroupIdError
	)
	if errors.As(err, &uu) || errors.As(err, &uid) || errors.As(err, &ug) || errors.As(err, &gid) {
		return fmt.Sprintf("no %s %q on this machine", kind, name)
	}
	return fmt.Sprintf("cannot look up %s %q: %v", kind, name, err)
}

func isNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func parseID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err
}
