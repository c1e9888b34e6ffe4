package ctl

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"cronvisor/internal/base/run"
)

// encodeQuery is the URL query of GET /v1/history.
func encodeQuery(q HistoryQuery) url.Values {
	v := url.Values{}
	if q.Job != "" {
		v.Set("job", q.Job)
	}
	for _, o := range q.Outcomes {
		v.Add("outcome", string(o))
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// decodeQuery parses GET /v1/history's query. It is as strict as
// jobs.yaml: an unknown parameter or outcome is an error wrapping
// ErrBadRequest, never silently ignored.
func decodeQuery(v url.Values) (HistoryQuery, error) {
	for k := range v {
		if !slices.Contains([]string{"job", "outcome", "since", "limit"}, k) {
			return HistoryQuery{}, fmt.Errorf("%w: unknown parameter %q (want job, outcome, since, limit)", ErrBadRequest, k)
		}
	}
	q := HistoryQuery{Job: v.Get("job")}
	for _, s := range v["outcome"] {
		o := run.Outcome(s)
		if !o.Final() {
			return HistoryQuery{}, fmt.Errorf("%w: outcome %q: want one of %v", ErrBadRequest, o, run.Finals())
		}
		q.Outcomes = append(q.Outcomes, o)
	}
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return HistoryQuery{}, fmt.Errorf("%w: since %q: want an RFC 3339 time", ErrBadRequest, s)
		}
		q.Since = t
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return HistoryQuery{}, fmt.Errorf("%w: limit %q: want a whole number, 0 or more", ErrBadRequest, s)
		}
		q.Limit = n
	}
	return q, nil
}

// decodeLogQuery parses GET /v1/logs's query: job and run, both required,
// nothing else.
func decodeLogQuery(v url.Values) (job, run string, err error) {
	for k, vals := range v {
		if k != "job" && k != "run" {
			return "", "", fmt.Errorf("%w: unknown parameter %q (want job, run)", ErrBadRequest, k)
		}
		if len(vals) != 1 {
			return "", "", fmt.Errorf("%w: %s given %d times", ErrBadRequest, k, len(vals))
		}
	}
	job, run = v.Get("job"), v.Get("run")
	if job == "" || run == "" {
		return "", "", fmt.Errorf("%w: want both job and run, got job %q run %q", ErrBadRequest, job, run)
	}
	return job, run, nil
}
