package config

import (
	"fmt"
	"strings"
	"testing"
)

// placed writes key under the mapping a Section's Path names.
func placed(path, key string) string {
	switch path {
	case "":
		return key + ": x\n"
	case "jobs[]":
		return "jobs:\n  - " + key + ": x\n"
	case "notify[]":
		return "defaults:\n  notify:\n    - " + key + ": x\n"
	}
	return path + ":\n  " + key + ": x\n"
}

// refused reports the problem that says key is not accepted, or "".
func refused(ps []Problem, key string) string {
	for _, p := range ps {
		if strings.Contains(p.Message, fmt.Sprintf("%q", key)) &&
			(strings.Contains(p.Message, "unknown key") || strings.Contains(p.Message, "not built") ||
				strings.Contains(p.Message, "belongs at the top level") || strings.Contains(p.Message, "cannot set")) {
			return p.String()
		}
	}
	return ""
}

// TestReferenceMatchesDecoder checks the help's key table against what the
// decoder does: every key in it is accepted where it is listed, and the
// same spot refuses a key that is not in it.
func TestReferenceMatchesDecoder(t *testing.T) {
	for _, sec := range Reference() {
		for _, k := range sec.Keys {
			t.Run(sec.Path+"/"+k.Name, func(t *testing.T) {
				if k.Doc == "" || strings.Contains(k.Doc, "\n") {
					t.Errorf("doc %q: want one line", k.Doc)
				}
				_, ps := Parse("/nonexistent/jobs.yaml", []byte(placed(sec.Path, k.Name)))
				if msg := refused(ps, k.Name); msg != "" {
					t.Errorf("listed in the reference but refused: %s", msg)
				}
				other := k.Name + "_not_a_key"
				_, ps = Parse("/nonexistent/jobs.yaml", []byte(placed(sec.Path, other)))
				if refused(ps, other) == "" {
					t.Errorf("%q not refused where %q is accepted: the check proves nothing", other, k.Name)
				}
			})
		}
	}
}

// TestReferenceCoversKnownKeys checks the other way: each list the decoder
// matches keys against is exactly a section of the reference.
func TestReferenceCoversKnownKeys(t *testing.T) {
	byPath := map[string][]string{}
	for _, sec := range Reference() {
		byPath[sec.Path] = keyNames(sec.Keys)
	}
	for path, known := range map[string][]string{
		"": topKeys, "defaults": defaultKeys, "jobs[]": jobKeys,
		"lock_backend": backendKeys, "history": historyKeys,
		"metrics": metricsKeys, "console": consoleKeys, "notify[]": targetKeys,
	} {
		if got := strings.Join(byPath[path], " "); got != strings.Join(known, " ") {
			t.Errorf("section %q lists %s; the decoder knows %s", path, got, strings.Join(known, " "))
		}
		for _, k := range known {
			if k == "" {
				t.Errorf("section %q: a key index without an entry in its table", path)
			}
		}
	}
}
