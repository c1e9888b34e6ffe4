package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// streamingBackend is the fake backend giving its jobs as a JobStreamer,
// size at a time, in one reused slice (as the service does).
type streamingBackend struct {
	*fakeBackend
	size int
}

func (s streamingBackend) EachJobs(ctx context.Context, yield func([]JobStatus) error) error {
	buf := make([]JobStatus, 0, s.size)
	for from := 0; from < len(s.jobs); from += s.size {
		buf = append(buf[:0], s.jobs[from:min(from+s.size, len(s.jobs))]...)
		if err := yield(buf); err != nil {
			return err
		}
		clear(buf) // a server that kept the part would now hold zeros
	}
	return nil
}

// TestJobsStreamedAsOneList (issue 39): GET /v1/jobs from a JobStreamer
// writes, a part at a time, the very bytes the whole list would have
// been, and the client reads the same jobs.
func TestJobsStreamedAsOneList(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs int // of the fake's five; 0: none
		size int
	}{
		{"parts of one", 5, 1},
		{"parts of two", 5, 2},
		{"one part", 5, 10},
		{"no jobs", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeBackend()
			f.jobs = f.jobs[:tc.jobs]
			srv := startServer(t, streamingBackend{f, tc.size}, nil)
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(nonNil(f.jobs)); err != nil {
				t.Fatal(err)
			}
			ctx := within(t, 10*time.Second)
			resp, err := srv.client.send(ctx, http.MethodGet, "/v1/jobs", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("status %d, %v; body\n%s\nwant\n%s", resp.StatusCode, err, got, want.Bytes())
			}
			jobs, err := srv.client.Jobs(ctx)
			if err != nil || len(jobs) != tc.jobs || tc.jobs > 0 && !reflect.DeepEqual(jobs, f.jobs) {
				t.Fatalf("Jobs = %+v, %v; want %+v", jobs, err, f.jobs)
			}
		})
	}
}

// pacedBackend yields its jobs one part at a time, each when the test
// sends on more; a closed more ends the list.
type pacedBackend struct {
	*fakeBackend
	more chan bool
}

func (p pacedBackend) EachJobs(ctx context.Context, yield func([]JobStatus) error) error {
	for i := 0; ; i++ {
		select {
		case again := <-p.more:
			if !again {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := yield(p.jobs[i%len(p.jobs) : i%len(p.jobs)+1]); err != nil {
			return err
		}
	}
}

// TestJobsReadWhileTheyFlow (issue 39): Jobs reads a list that takes
// longer than the client's Timeout as long as it keeps coming, and gives
// up one Timeout after it stops coming.
func TestJobsReadWhileTheyFlow(t *testing.T) {
	const timeout = time.Second
	t.Run("flowing for twice the timeout", func(t *testing.T) {
		p := pacedBackend{newFakeBackend(), make(chan bool)}
		srv := startServer(t, p, nil)
		srv.client.Timeout = timeout
		stop := make(chan struct{})
		fed := make(chan struct{})
		t.Cleanup(func() { close(stop); <-fed })
		go func() { // one part every timeout/5, ten in all
			defer close(fed)
			tick := time.NewTicker(timeout / 5)
			defer tick.Stop()
			for range 10 {
				<-tick.C
				select {
				case p.more <- true:
				case <-stop:
					return
				}
			}
			close(p.more)
		}()
		start := time.Now()
		jobs, err := srv.client.Jobs(within(t, 30*time.Second))
		if err != nil || len(jobs) != 10 || time.Since(start) < timeout {
			t.Fatalf("Jobs after %v: %d jobs, %v; want 10 after more than %v", time.Since(start), len(jobs), err, timeout)
		}
	})
	t.Run("stalled", func(t *testing.T) {
		p := pacedBackend{newFakeBackend(), make(chan bool, 1)}
		srv := startServer(t, p, nil)
		srv.client.Timeout = timeout
		p.more <- true // one part, then nothing
		start := time.Now()
		_, err := srv.client.Jobs(within(t, 30*time.Second))
		took := time.Since(start)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "nothing came for 1s") ||
			took < timeout || took > 10*timeout {
			t.Fatalf("Jobs after %v: %v; want nothing came for 1s, after 1-10s", took, err)
		}
	})
}
