package config

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/run"
)

// Console is the top-level console block: how `cronvisor` and
// `cronvisor ui` open on this file.
type Console struct {
	// ReadOnly opens every console read-only, as --read-only does: no key
	// or command that changes anything. The flag cannot turn it off.
	ReadOnly bool
}

// console decodes the top-level console block.
func (d *decoder) console(c *Console, n *yaml.Node) {
	f := make([]entry, len(consoleKeys))
	d.keyed(n, "console", consoleKeys, nil, f)
	if e, ok := lookup(consoleKeys, f, "read_only"); ok {
		if v, ok := d.boolean("console.read_only", e.val); ok {
			c.ReadOnly = v
		}
	}
}

// durability decodes the top-level durability key.
func (d *decoder) durability(cfg *Config, n *yaml.Node) {
	s, ok := d.text("durability", n)
	if !ok {
		return
	}
	all := run.Durabilities()
	if i := slices.Index(all, run.Durability(s)); i >= 0 {
		cfg.Durability = all[i]
		return
	}
	names := make([]string, len(all))
	for i, v := range all {
		names[i] = string(v)
	}
	hint := ""
	if lower := strings.ToLower(s); slices.Contains(names, lower) {
		hint = fmt.Sprintf(" (did you mean %q?)", lower)
	}
	d.errorf(n, "durability: %q is not one of %s%s", s, strings.Join(names, ", "), hint)
}
