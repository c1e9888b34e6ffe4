package metrics

import (
	"maps"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"cronvisor/internal/base/run"
)

// resourceMetrics are the resources' (jobs.yaml resources:) series, from
// the runs' events of this daemon: the slots its runs hold, its fires
// waiting for one, how their waits ended, the fires skipped for a full
// resource. The sizes are read at scrape time (Sources.Resources), and so
// are the slots of the runs it adopted (Sources.AdoptedSlots), which it
// saw no start of.
type resourceMetrics struct {
	mu      sync.Mutex
	holding map[string][]string // run id -> the resource of each slot it holds
	waiting map[string]string   // run id -> the resource it waits for
	held    map[string]int      // resource -> slots its runs hold (the started ones)
	adopted func() map[string]int

	waiters   *prometheus.GaugeVec
	waits     *prometheus.CounterVec
	fullSkips *prometheus.CounterVec
}

func newResourceMetrics(adopted func() map[string]int) *resourceMetrics {
	return &resourceMetrics{holding: map[string][]string{}, waiting: map[string]string{}, held: map[string]int{}, adopted: adopted,
		waiters: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_resource_waiters",
			Help: "Fires of this daemon waiting for a slot of the resource (on_full: wait)."}, []string{"resource"}),
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_resource_waits_total",
			Help: "Waits for a slot of the resource that ended, by result: took (the run started), gave_up (skipped after max_wait or at a stop) or killed (by an operator)."},
			[]string{"resource", "result"}),
		fullSkips: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_resource_full_skips_total",
			Help: "Fires skipped because the resource had no free slot."}, []string{"resource"})}
}

func (r *resourceMetrics) collectors() []prometheus.Collector {
	held := heldCollector{r: r, desc: prometheus.NewDesc("cronvisor_resource_slots_held",
		"Slots of the resource this daemon's runs hold (its adopted runs' too).", []string{"resource"}, nil)}
	return []prometheus.Collector{held, r.waiters, r.waits, r.fullSkips}
}

// heldCollector is cronvisor_resource_slots_held: the slots of the runs
// this daemon started, from their events, and of those it adopted.
type heldCollector struct {
	r    *resourceMetrics
	desc *prometheus.Desc
}

func (c heldCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c heldCollector) Collect(ch chan<- prometheus.Metric) {
	for res, n := range c.r.heldNow() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), res)
	}
}

// heldNow is the slots held by resource: every resource a run of this
// daemon ever held (0 once let go), and any an adopted run holds.
func (r *resourceMetrics) heldNow() map[string]int {
	r.mu.Lock()
	out := maps.Clone(r.held)
	r.mu.Unlock()
	if r.adopted != nil {
		for res, n := range r.adopted() {
			out[res] += n
		}
	}
	return out
}

// handle follows one event.
func (r *resourceMetrics) handle(ev run.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := ev.(type) {
	case run.Waiting:
		r.waiting[e.RunID] = e.Resource
		r.waiters.WithLabelValues(e.Resource).Inc()
	case run.Start:
		r.waitEnded(e.RunID, "took")
		for _, slot := range e.Resources {
			res, _, _ := strings.Cut(slot, "/")
			r.holding[e.RunID] = append(r.holding[e.RunID], res)
			r.held[res]++
		}
	case run.End:
		for _, res := range r.holding[e.RunID] {
			r.held[res]--
		}
		delete(r.holding, e.RunID)
	case run.Skip:
		waited := r.waiting[e.RunID]
		result := "gave_up"
		if e.Class == run.ClassKilled {
			result = "killed"
		}
		r.waitEnded(e.RunID, result)
		if e.Class == run.ClassResourceFull {
			r.fullSkips.WithLabelValues(skippedFor(e, waited)).Inc()
		}
	}
}

// waitEnded ends run id's wait, if it waited.
func (r *resourceMetrics) waitEnded(runID, result string) {
	res, ok := r.waiting[runID]
	if !ok {
		return
	}
	delete(r.waiting, runID)
	r.waiters.WithLabelValues(res).Dec()
	r.waits.WithLabelValues(res, result).Inc()
}

// skippedFor is the full resource a resource_full skip names: the
// event's, else the one its fire waited for, else the one its reason
// names ("resource db full: held by ...") for an engine that sets none.
func skippedFor(e run.Skip, waited string) string {
	switch {
	case e.Resource != "":
		return e.Resource
	case waited != "":
		return waited
	}
	rest, ok := strings.CutPrefix(e.Reason, "resource ")
	if !ok {
		return "unknown"
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// resourceSizes is cronvisor_resource_slots, read at scrape time.
func resourceSizes(read func() map[string]int) prometheus.Collector {
	return sizesCollector{read: read, desc: prometheus.NewDesc("cronvisor_resource_slots",
		"Slots of the resource (jobs.yaml resources:).", []string{"resource"}, nil)}
}

type sizesCollector struct {
	read func() map[string]int
	desc *prometheus.Desc
}

func (c sizesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c sizesCollector) Collect(ch chan<- prometheus.Metric) {
	for name, n := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), name)
	}
}
