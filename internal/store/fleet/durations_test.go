package fleet

import (
	"fmt"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// OKSamples gives each host's newest successful runs of each job, at
// most limit a host, newest first, and leaves out failures, runs not
// ended and runs before since.
func TestOKSamples(t *testing.T) {
	url, _ := newDB(t)
	s := openStore(t, url, "a")
	var recs []run.Record
	for i := range 4 {
		for _, host := range []string{"a", "b"} {
			r := rec("j", fmt.Sprintf("%s%d", host, i), host, run.OK, 10*i)
			r.EndedAt = r.StartedAt.Add(time.Duration(i+1) * time.Second)
			recs = append(recs, r)
		}
	}
	recs = append(recs, rec("j", "failed", "a", run.Failed, 45), rec("j", "running", "b", run.Running, 46),
		rec("k", "k0", "a", run.OK, 47))
	if err := s.Upsert(ctxOf(t), recs); err != nil {
		t.Fatal(err)
	}
	got, err := s.OKSamples(ctxOf(t), []string{"j", "none"}, minute(5), 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, smp := range got["j"] {
		ids = append(ids, fmt.Sprintf("%s:%s:%v", smp.Host, smp.RunID, smp.Took))
	}
	want := "[a:a3:4s b:b3:4s a:a2:3s b:b2:3s]"
	if fmt.Sprint(ids) != want || len(got) != 1 {
		t.Errorf("OKSamples = %v (%d jobs), want %s", ids, len(got), want)
	}
}
