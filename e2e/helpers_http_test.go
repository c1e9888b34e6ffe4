package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a local HTTP server keeping every request, by path; it
// answers its first requests with codes, in turn, and 200 after them.
type receiver struct {
	mu    sync.Mutex
	codes []int
	reqs  []received
}

type received struct {
	path string // with the query
	body map[string]any
	raw  string
}

func newReceiver(t *testing.T, codes ...int) (*receiver, string) {
	r := &receiver{codes: codes}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		r.mu.Lock()
		code := http.StatusOK
		if n := len(r.reqs); n < len(r.codes) {
			code = r.codes[n]
		}
		r.reqs = append(r.reqs, received{path: req.URL.RequestURI(), body: m, raw: string(b)})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// under returns the requests whose path starts with prefix, in arrival order.
func (r *receiver) under(prefix string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, q := range r.reqs {
		if strings.HasPrefix(q.path, prefix) {
			out = append(out, q)
		}
	}
	return out
}

// silent is a target that never answers, until the test ends.
func silent(t *testing.T) string {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL
}

var metricsAddrLog = regexp.MustCompile(`"msg":"serving metrics","addr":"([^"]+)"`)

// firesAt is a six-field schedule (UTC) that fires at each of ts, at
// whole seconds, once a day: a fire at a chosen instant of the test.
func firesAt(ts ...time.Time) string {
	var secs, mins, hours []string
	add := func(l *[]string, v int) {
		if s := strconv.Itoa(v); !slices.Contains(*l, s) {
			*l = append(*l, s)
		}
	}
	for _, t := range ts {
		t = t.Truncate(time.Second)
		add(&secs, t.Second())
		add(&mins, t.Minute())
		add(&hours, t.Hour())
	}
	return strings.Join(secs, ",") + " " + strings.Join(mins, ",") + " " + strings.Join(hours, ",") + " * * *"
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
