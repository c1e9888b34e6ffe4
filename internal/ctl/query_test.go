package ctl

import (
	"errors"
	"net/url"
	"reflect"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

func TestDecodeQuery(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    HistoryQuery
		wantErr bool
	}{
		{"empty", "", HistoryQuery{}, false},
		{"all", "job=sync&outcome=ok&outcome=skipped&since=2026-03-14T09:26:53Z&limit=10",
			HistoryQuery{Job: "sync", Outcomes: []run.Outcome{"ok", "skipped"}, Since: ref(0), Limit: 10}, false},
		{"since with offset and fraction", "since=2026-03-14T17:26:53.5%2B08:00",
			HistoryQuery{Since: ref(500 * time.Millisecond)}, false},
		{"limit 0 is the default", "limit=0", HistoryQuery{}, false},
		{"unknown outcome", "outcome=fine", HistoryQuery{}, true},
		{"unknown parameter", "jobs=sync", HistoryQuery{}, true},
		{"since not RFC 3339", "since=1h", HistoryQuery{}, true},
		{"negative limit", "limit=-1", HistoryQuery{}, true},
		{"limit not a number", "limit=ten", HistoryQuery{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeQuery(v)
			if tt.wantErr {
				if !errors.Is(err, ErrBadRequest) {
					t.Errorf("error %v, want ErrBadRequest", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Since.Equal(tt.want.Since) {
				t.Errorf("since %v, want %v", got.Since, tt.want.Since)
			}
			got.Since, tt.want.Since = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
