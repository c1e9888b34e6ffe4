package config

import (
	"fmt"
	"regexp"
	"strings"
)

// indentMessages are yaml.v3's words for a line at the wrong depth, which
// say nothing of indentation themselves.
var indentMessages = regexp.MustCompile(`^(mapping values are not allowed in this context|did not find expected key|did not find expected '-' indicator|block sequence entries are not allowed in this context)$`)

// indentHint turns such a message into something to do: a line indented
// unlike the line above it is named, with both depths; a value holding
// ": " (the syntax error's column past the key's colon) needs quotes.
// It returns "" when neither explains the error.
func indentHint(data []byte, line, col int) string {
	lines := strings.Split(string(data), "\n")
	if line > len(lines) {
		return ""
	}
	text := lines[line-1]
	indent := len(text) - len(strings.TrimLeft(text, " "))
	if strings.HasPrefix(strings.TrimSpace(text), "- ") || strings.TrimSpace(text) == "-" {
		indent += 2 // the keys of a list item start after its dash
	}
	if col > indent+1 && strings.Contains(text[:min(col-1, len(text))], ": ") {
		return "; a value with \": \" in it needs quotes"
	}
	for above := line - 1; above >= 1; above-- {
		prev := lines[above-1]
		trimmed := strings.TrimSpace(prev)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		pi := len(prev) - len(strings.TrimLeft(prev, " "))
		if strings.HasPrefix(trimmed, "- ") {
			pi += 2
		}
		if pi == indent {
			return ""
		}
		return fmt.Sprintf("; check the indentation of line %d: %d spaces, where line %d above has %d", line, indent, above, pi)
	}
	return ""
}
