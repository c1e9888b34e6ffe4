package config

import (
	"slices"
	"strings"
)

// historyTypes are the history_backend types, in the order messages list
// them.
var historyTypes = []string{HistoryLocal, HistoryPostgres}

// historyBackendOf decodes history_backend into cfg: the backend, its
// variables unset in this shell, its secrets beside lock_backend's.
func (d *decoder) historyBackendOf(cfg *Config, e entry) {
	var secrets []string
	secrets, cfg.HistoryUnsetEnv = d.historyBackend(&cfg.HistoryBackend, e)
	for _, s := range secrets {
		if !slices.Contains(cfg.SecretEnv, s) {
			cfg.SecretEnv = append(cfg.SecretEnv, s)
		}
	}
}

// historyBackend decodes history_backend. Its url is expanded and checked
// as lock_backend's is (messages quote it as written, a reading command
// leaves it empty when a variable it names is not set), and it returns the
// names of the variables expanded: secrets of the supervisor's.
func (d *decoder) historyBackend(hb *HistoryBackend, e entry) (secrets, unset []string) {
	hb.Line, hb.Col = e.key.Line, e.key.Column
	known := historyBackendKeys
	f := make([]entry, len(known))
	d.keyed(e.val, "history_backend", known, nil, f)
	if t, ok := lookup(known, f, "type"); ok {
		if s, ok := d.text("history_backend.type", t.val); ok {
			hb.Type = s
			if !slices.Contains(historyTypes, s) {
				d.errorf(t.val, "history_backend.type: %q is not one of %s", s, strings.Join(historyTypes, ", "))
				return nil, nil
			}
		}
	}
	u, hasURL := lookup(known, f, "url")
	if hb.Type != HistoryPostgres {
		if hasURL {
			d.errorf(u.key, "history_backend.url: the sqlite history is this host's own store and takes no url (type: postgres shares one)")
		}
		return nil, nil
	}
	if !hasURL {
		d.errorf(e.key, "history_backend: the postgres backend needs a url")
		return nil, nil
	}
	before := len(d.unsetEnv)
	hb.URL, secrets = d.backendAddr("history_backend.url", u.val, checkPgxURL)
	// The variables this url lacks are its own (HistoryUnsetEnv), not the
	// lock backend's: a shell may reach one and not the other.
	unset = slices.Clone(d.unsetEnv[before:])
	d.unsetEnv = d.unsetEnv[:before]
	return secrets, unset
}
