package schedule

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cronieRow is one row of testdata/cronie/syntax.tsv: how cronie's own
// parser (entry.c) read an expression.
type cronieRow struct {
	line                          int
	expr                          string
	ok                            bool
	minute, hour, dom, month, dow uint64
	flags                         string
}

func readSyntaxTable(t *testing.T) []cronieRow {
	t.Helper()
	f, err := os.Open("testdata/cronie/syntax.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []cronieRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		r := cronieRow{line: n, expr: cols[0], ok: cols[1] == "ok"}
		if r.ok {
			for _, kv := range strings.Fields(cols[2]) {
				k, v, _ := strings.Cut(kv, "=")
				if k == "flags" {
					r.flags = v
					continue
				}
				bits, err := strconv.ParseUint(v, 16, 64)
				if err != nil {
					t.Fatalf("syntax.tsv:%d: %s: %v", n, kv, err)
				}
				switch k {
				case "min":
					r.minute = bits
				case "hour":
					r.hour = bits
				case "dom":
					r.dom = bits
				case "month":
					r.month = bits
				case "dow":
					r.dow = bits
				}
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// syntaxDifference is a class of expressions on which cronvisor departs
// from cronie on purpose; docs/schedules.md lists each with its reason.
type syntaxDifference struct {
	name  string
	match func(r cronieRow, err error) bool
}

var syntaxDifferences = []syntaxDifference{
	{"? is accepted as * (Quartz users write it)", func(r cronieRow, err error) bool {
		return !r.ok && err == nil && strings.Contains(r.expr, "?")
	}},
	{"@every is accepted", func(r cronieRow, err error) bool {
		return !r.ok && err == nil && strings.HasPrefix(r.expr, "@every ")
	}},
	{"a backwards range is refused (cron reads it as no value and never runs)", func(r cronieRow, err error) bool {
		return r.ok && err != nil && strings.Contains(err.Error(), "runs backwards")
	}},
	{"a Sunday-as-0 range with a step is refused (cron reads no day)", func(r cronieRow, err error) bool {
		return r.ok && err != nil && strings.Contains(err.Error(), "ends on Sunday as 0 with a step")
	}},
	{"N-0 in day-of-month or month is refused (cron reads N-7)", func(r cronieRow, err error) bool {
		return r.ok && err != nil && strings.Contains(err.Error(), "0 is below 1")
	}},
	{"H (Jenkins) is accepted: a value drawn from the job's name", func(r cronieRow, err error) bool {
		return !r.ok && err == nil && strings.Contains(r.expr, "H")
	}},
	{"L, W and # (Quartz) are accepted in the day fields", func(r cronieRow, err error) bool {
		f := strings.Fields(r.expr)
		return !r.ok && err == nil && len(f) == 5 && strings.ContainsAny(strings.ToUpper(f[2]+f[4]), "LW#")
	}},
	{"@reboot is refused", func(r cronieRow, err error) bool {
		return r.ok && err != nil && r.expr == "@reboot"
	}},
}

// TestSyntaxAgainstCronie replays how cronie's entry.c read every row of
// testdata/cronie/syntax.tsv: the same verdict, the same value sets and
// the same star flags, except for the deliberate differences above.
func TestSyntaxAgainstCronie(t *testing.T) {
	counts := map[string]int{}
	compared := 0
	for _, r := range readSyntaxTable(t) {
		f := strings.Fields(r.expr)
		if len(f) != 5 && !(len(f) == 1 || f[0] == "@every") {
			continue // cronie reads a sixth field as the command
		}
		compared++
		s, err := Parse(r.expr, time.UTC)
		if d := differenceOf(r, err); d != "" {
			counts[d]++
			continue
		}
		switch {
		case !r.ok && err == nil:
			t.Errorf("syntax.tsv:%d: %q: cronie rejects it, Parse accepts it", r.line, r.expr)
		case r.ok && err != nil:
			t.Errorf("syntax.tsv:%d: %q: cronie accepts it, Parse says %v", r.line, r.expr, err)
		case r.ok:
			cs := s.(*cronSchedule)
			if got := [5]uint64{cs.minute, cs.hour, cs.dom, cs.month, cs.dow}; got != [5]uint64{r.minute, r.hour, r.dom, r.month, r.dow} {
				t.Errorf("syntax.tsv:%d: %q: value sets %x, cronie %x", r.line, r.expr, got, [5]uint64{r.minute, r.hour, r.dom, r.month, r.dow})
			}
			fixed := !strings.Contains(r.flags, "MIN_STAR") && !strings.Contains(r.flags, "HR_STAR")
			if cs.fixed != fixed || cs.domStar != strings.Contains(r.flags, "DOM_STAR") || cs.dowStar != strings.Contains(r.flags, "DOW_STAR") {
				t.Errorf("syntax.tsv:%d: %q: fixed=%v dom*=%v dow*=%v, cronie flags %s", r.line, r.expr, cs.fixed, cs.domStar, cs.dowStar, r.flags)
			}
		}
	}
	if compared < 500 {
		t.Fatalf("only %d rows compared", compared)
	}
	t.Logf("%d rows compared; deliberate differences: %v", compared, counts)
}

func differenceOf(r cronieRow, err error) string {
	for _, d := range syntaxDifferences {
		if d.match(r, err) {
			return d.name
		}
	}
	return ""
}
