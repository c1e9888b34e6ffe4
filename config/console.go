package config

import "gopkg.in/yaml.v3"

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
