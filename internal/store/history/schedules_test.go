package history

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// sv is job's version with expression expr, as a daemon hands it over.
func sv(job, expr string) run.ScheduleVersion {
	return run.ScheduleVersion{Job: job, Schedule: expr, Zone: "UTC", Enabled: true}
}

// versionLines reads versions as "JOB CHANGE EXPR @MINUTE HOST".
func versionLines(vs []run.ScheduleVersion) string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s %s %s @%d %s", v.Job, v.Change, v.Schedule, int(v.Since.Sub(base())/time.Minute), v.Host))
	}
	return strings.Join(out, "\n")
}

// TestRecordSchedules: each start-up or reload records only what changed
// how a job's slots are owed, and how.
func TestRecordSchedules(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	disabled := sv("b", "@daily")
	disabled.Enabled = false
	jittered := sv("b", "@daily")
	jittered.Jitter = time.Minute
	otherZone := sv("a", "*/5 * * * *")
	otherZone.Zone = "Europe/Berlin"
	steps := []struct {
		name string
		jobs []run.ScheduleVersion
		want string // recorded at this step
	}{
		{"the first start-up knows every job", []run.ScheduleVersion{sv("a", "*/5 * * * *"), sv("b", "@daily")},
			"a known */5 * * * * @0 h1\nb known @daily @0 h1"},
		{"a start-up that changes nothing records nothing", []run.ScheduleVersion{sv("a", "*/5 * * * *"), sv("b", "@daily")}, ""},
		{"an edit", []run.ScheduleVersion{sv("a", "*/10 * * * *"), sv("b", "@daily")}, "a changed */10 * * * * @2 h1"},
		{"enabled: false", []run.ScheduleVersion{sv("a", "*/10 * * * *"), disabled}, "b changed @daily @3 h1"},
		{"enabled again, with a jitter", []run.ScheduleVersion{sv("a", "*/10 * * * *"), jittered}, "b changed @daily @4 h1"},
		{"another zone", []run.ScheduleVersion{otherZone, jittered}, "a changed */5 * * * * @5 h1"},
		{"a job added, another removed", []run.ScheduleVersion{otherZone, sv("c", "@hourly")}, "b removed  @6 h1\nc added @hourly @6 h1"},
		{"a removed job back", []run.ScheduleVersion{otherZone, sv("b", "@daily"), sv("c", "@hourly")}, "b added @daily @7 h1"},
	}
	for i, st := range steps {
		got, err := s.RecordSchedules(ctx, minute(i), "h1", st.jobs)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if versionLines(got) != st.want {
			t.Errorf("%s: recorded\n%s\nwant\n%s", st.name, versionLines(got), st.want)
		}
	}
	all, err := s.Schedules(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := "b known @daily @0 h1\nb changed @daily @3 h1\nb changed @daily @4 h1\nb removed  @6 h1\nb added @daily @7 h1"
	if versionLines(all) != want {
		t.Errorf("Schedules(b):\n%s\nwant\n%s", versionLines(all), want)
	}
	if all[1].Enabled || all[2].Jitter != time.Minute || !all[2].Enabled || all[0].Zone != "UTC" || !all[0].Since.Equal(base()) {
		t.Errorf("versions read back: %+v", all)
	}
}

// TestSchedulesShipping: the shipper gets every version once, and asks
// the database again only after a new one was recorded.
func TestSchedulesShipping(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	if _, err := s.RecordSchedules(ctx, minute(0), "h1", []run.ScheduleVersion{sv("a", "@daily"), sv("b", "@hourly"), sv("c", "@weekly")}); err != nil {
		t.Fatal(err)
	}
	vs, last, err := s.UnshippedSchedules(ctx, 2)
	if err != nil || len(vs) != 2 || last == 0 || vs[0].Job != "a" || vs[1].Job != "b" {
		t.Fatalf("first batch: %v, last %d, err %v", versionLines(vs), last, err)
	}
	if err := s.SchedulesShipped(ctx, last); err != nil {
		t.Fatal(err)
	}
	vs, last2, err := s.UnshippedSchedules(ctx, 2)
	if err != nil || len(vs) != 1 || vs[0].Job != "c" || last2 <= last {
		t.Fatalf("second batch: %v, last %d, err %v", versionLines(vs), last2, err)
	}
	if err := s.SchedulesShipped(ctx, last2); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the first finds none; the second answers from memory
		if vs, last, err := s.UnshippedSchedules(ctx, 2); err != nil || len(vs) != 0 || last != 0 {
			t.Fatalf("round %d after shipping all: %v, last %d, err %v", i, versionLines(vs), last, err)
		}
	}
	if _, err := s.RecordSchedules(ctx, minute(1), "h1", []run.ScheduleVersion{sv("a", "@weekly"), sv("b", "@hourly"), sv("c", "@weekly")}); err != nil {
		t.Fatal(err)
	}
	if vs, _, err := s.UnshippedSchedules(ctx, 2); err != nil || versionLines(vs) != "a changed @weekly @1 h1" {
		t.Fatalf("after an edit: %v, err %v", versionLines(vs), err)
	}
}

// TestPruneKeepsTheScheduleInForce: keep_age prunes the versions older
// than the window but each job's newest of them, in force at its start.
func TestPruneKeepsTheScheduleInForce(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	for i, expr := range []string{"@daily", "@hourly", "@weekly", "@monthly"} {
		if _, err := s.RecordSchedules(ctx, minute(10*i), "h1", []run.ScheduleVersion{sv("a", expr), sv("b", "@daily")}); err != nil {
			t.Fatal(err)
		}
	}
	// now is minute 45, keep_age 30m: the window begins at minute 15.
	if _, err := s.Prune(ctx, 0, 30*time.Minute, minute(45)); err != nil {
		t.Fatal(err)
	}
	all, err := s.Schedules(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "b known @daily @0 h1\na changed @hourly @10 h1\na changed @weekly @20 h1\na changed @monthly @30 h1"
	if versionLines(all) != want {
		t.Errorf("after the prune:\n%s\nwant\n%s", versionLines(all), want)
	}
}

// TestRecordSchedulesInBatches records more versions than a statement
// carries (two whole batches and a part): each job's version is there,
// and recording them again adds none.
func TestRecordSchedulesInBatches(t *testing.T) {
	s, _ := openTemp(t)
	ctx := testCtx(t)
	n := 2*scheduleBatch + 7
	current := make([]run.ScheduleVersion, n)
	for i := range current {
		current[i] = sv(fmt.Sprintf("job-%04d", i), "@hourly")
	}
	got, err := s.RecordSchedules(ctx, minute(0), "h1", current)
	if err != nil || len(got) != n {
		t.Fatalf("RecordSchedules: %d recorded, %v; want %d", len(got), err, n)
	}
	for _, job := range []string{"job-0000", fmt.Sprintf("job-%04d", scheduleBatch), fmt.Sprintf("job-%04d", n-1)} {
		vs, err := s.Schedules(ctx, job)
		if err != nil || len(vs) != 1 || vs[0].Schedule != "@hourly" || vs[0].Change != run.ScheduleKnown {
			t.Errorf("Schedules(%s) = %+v, %v; want its one version", job, vs, err)
		}
	}
	if again, err := s.RecordSchedules(ctx, minute(1), "h1", current); err != nil || len(again) != 0 {
		t.Errorf("recorded again: %d, %v; want none", len(again), err)
	}
}
