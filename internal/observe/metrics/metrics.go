// Package metrics exports what the runner's events say as Prometheus
// metrics, and serves them at /metrics beside a liveness check at
// /healthz. Handle updates counters on the emitting goroutine: a
// Prometheus counter is an atomic add, cheaper than queueing the event,
// and a scrape then sees exact counts. Labels are bounded: job names from
// jobs.yaml, outcomes and skip classes, never reason strings.
package metrics

import (
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"cronvisor/internal/base/durations"
	"cronvisor/internal/base/run"
)

// Sources are the readings taken at scrape time rather than from events.
type Sources struct {
	NextFires     func() map[string]time.Time // the scheduler's next fire per job
	HistoryFailed func() int64                // failed history writes so far
	// LeftToOwner counts the scheduled slots this host left to the
	// job's owner (a fleet's slot ownership); nil without one.
	LeftToOwner func() int64
	// Durations are the figures learned from each job's successful runs
	// (package durations); nil: none.
	Durations func() map[string]durations.Stats
	// Resources are the declared resources' sizes; nil: none.
	Resources func() map[string]int
	// AdoptedSlots are the slots the runs this daemon adopted (a dead
	// supervisor's, still going) hold, by resource; nil: none.
	AdoptedSlots func() map[string]int
}

// Metrics holds cronvisor's collectors in their own registry.
type Metrics struct {
	reg         *prometheus.Registry
	runs        *prometheus.CounterVec
	skips       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	running     *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	lastFailure *prometheus.GaugeVec
	failStreak  *prometheus.GaugeVec
	reloadOK    prometheus.Gauge
	reloadAt    prometheus.Gauge
	lateness    prometheus.Histogram
	lockErrors  prometheus.Counter
	deliveries  *prometheus.CounterVec
	cpu         *prometheus.CounterVec
	memoryPeak  *prometheus.GaugeVec
	oomKilled   *prometheus.CounterVec
	slow        *prometheus.CounterVec
	fast        *prometheus.CounterVec
	res         *resourceMetrics
}

// New registers cronvisor's metrics, Go's and the process's.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), res: newResourceMetrics(src.AdoptedSlots)}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_runs_total",
		Help: "Runs (attempts) that ended, by job and outcome."}, []string{"job", "outcome"})
	m.skips = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_skips_total",
		Help: "Fires that did not run, by job and reason class (lock_held, slot_already_run, paused, missed, backend_unreachable, queued, dropped, disabled)."},
		[]string{"job", "reason"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cronvisor_run_duration_seconds",
		Help: "How long runs took, from exec to exit.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, []string{"job"})
	m.running = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_running",
		Help: "Runs of the job in flight under this supervisor."}, []string{"job"})
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_last_success_timestamp_seconds",
		Help: "When the job's last successful run ended (Unix time)."}, []string{"job"})
	m.lastFailure = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_job_last_failure_timestamp_seconds",
		Help: "When the job's last slot that ended failed, timeout or error ended (Unix time)."}, []string{"job"})
	m.failStreak = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_job_consecutive_failures",
		Help: "The job's slots that ended failed, timeout or error in a row (0 after a success)."}, []string{"job"})
	m.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cronvisor_config_last_reload_successful",
		Help: "Whether the last load of jobs.yaml (start-up or reload) applied: 1, or 0 when it was refused."})
	m.reloadAt = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cronvisor_config_last_reload_success_timestamp_seconds",
		Help: "When jobs.yaml last loaded (start-up or reload) and applied (Unix time)."})
	m.lateness = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cronvisor_start_lateness_seconds",
		Help:    "From a scheduled fire's slot to its run's exec (jitter included).",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30}})
	m.lockErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "cronvisor_lock_backend_errors_total",
		Help: "Fires the lock backend failed (unreachable, or an error taking the lock)."})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_notifications_total",
		Help: "Notification and ping deliveries, by kind (webhook, command, ping) and result (ok, failed, dropped)."},
		[]string{"kind", "result"})
	m.slow = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_runs_slow_total",
		Help: "Runs that passed their job's warn_after (or its learned bound, warn_after: auto)."}, []string{"job"})
	m.fast = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_runs_fast_total",
		Help: "Runs that ended ok in less than their job's warn_fast (or its learned bound, warn_fast: auto)."}, []string{"job"})
	m.cost()
	m.reloadOK.Set(1) // the daemon serves metrics once jobs.yaml has loaded
	m.reloadAt.Set(float64(time.Now().UnixNano()) / 1e9)
	m.reg.MustRegister(m.own()...)
	m.reg.MustRegister(buildInfo())
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.NextFires != nil {
		m.reg.MustRegister(nextFires(src.NextFires))
	}
	if src.HistoryFailed != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cronvisor_history_write_failures_total",
			Help: "History writes that failed (records kept in memory to retry count each failure)."},
			func() float64 { return float64(src.HistoryFailed()) }))
	}
	if src.LeftToOwner != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cronvisor_slots_left_to_owner_total",
			Help: "Scheduled slots this host left to the job's owner in the fleet (no lock, no record here)."},
			func() float64 { return float64(src.LeftToOwner()) }))
	}
	if src.Durations != nil {
		m.reg.MustRegister(learned(src.Durations))
	}
	if src.Resources != nil {
		m.reg.MustRegister(resourceSizes(src.Resources))
	}
	return m
}

// own lists cronvisor's own collectors (not Go's or the process's).
func (m *Metrics) own() []prometheus.Collector {
	return append([]prometheus.Collector{m.runs, m.skips, m.duration, m.running, m.lastSuccess, m.lastFailure,
		m.failStreak, m.reloadOK, m.reloadAt, m.lateness, m.lockErrors, m.deliveries, m.cpu, m.memoryPeak, m.oomKilled,
		m.slow, m.fast}, m.res.collectors()...)
}

// cost makes the collectors of what runs cost. The peak memory is a gauge
// of the job's last measured run (with a limit, memory_max, to compare
// it to), not a histogram: one series per job.
func (m *Metrics) cost() {
	m.cpu = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_run_cpu_seconds_total",
		Help: "CPU time the job's runs used, by mode (user, system); runs outside a cgroup are not measured."},
		[]string{"job", "mode"})
	m.memoryPeak = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cronvisor_run_memory_peak_bytes",
		Help: "Peak memory of the job's last run whose peak was measured (the memory controller is on)."}, []string{"job"})
	m.oomKilled = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronvisor_runs_oom_killed_total",
		Help: "Runs of the job in which the kernel's OOM killer killed a process."}, []string{"job"})
}

// ranCost counts what an ended run cost, when it was measured.
func (m *Metrics) ranCost(e run.End) {
	u := e.Usage
	if !u.Measured {
		return
	}
	m.cpu.WithLabelValues(e.Job, "user").Add(u.CPUUser.Seconds())
	m.cpu.WithLabelValues(e.Job, "system").Add(u.CPUSystem.Seconds())
	if u.MemoryPeak > 0 {
		m.memoryPeak.WithLabelValues(e.Job).Set(float64(u.MemoryPeak))
	}
	if u.OOMKilled {
		m.oomKilled.WithLabelValues(e.Job).Inc()
	}
}

// Registry is where the metrics live (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Delivered counts one notification or ping delivery; notify's counter.
func (m *Metrics) Delivered(kind, result string) { m.deliveries.WithLabelValues(kind, result).Inc() }

// Handle is the fan-out listener.
func (m *Metrics) Handle(ev run.Event) {
	m.res.handle(ev)
	switch e := ev.(type) {
	case run.Start:
		m.running.WithLabelValues(e.Job).Inc()
		if !e.Manual && e.Attempt <= 1 && !e.Slot.IsZero() {
			m.lateness.Observe(max(e.Started.Sub(e.Slot), 0).Seconds())
		}
	case run.End:
		if !e.Amends { // an amended end is the same attempt, counted already
			m.runs.WithLabelValues(e.Job, string(e.Outcome)).Inc()
			if !e.Started.IsZero() {
				if !e.Recovered { // counted running by its dead supervisor, not here
					m.running.WithLabelValues(e.Job).Dec()
				}
				m.duration.WithLabelValues(e.Job).Observe(e.Ended.Sub(e.Started).Seconds())
			}
			m.ranCost(e)
		}
		m.slotEnded(e)
		if e.Class == run.ClassBackendUnreachable {
			m.lockErrors.Inc()
		}
	case run.Slow:
		m.slow.WithLabelValues(e.Job).Inc()
	case run.Fast:
		m.fast.WithLabelValues(e.Job).Inc()
	case run.HostLost: // a lost host's run, closed here: counted once across the fleet
		m.runs.WithLabelValues(e.Job, string(run.Interrupted)).Inc()
	case run.Reload:
		if len(e.Problems) > 0 {
			m.reloadOK.Set(0)
			break
		}
		m.reloadOK.Set(1)
		m.reloadAt.Set(float64(e.Time.UnixNano()) / 1e9)
	case run.Skip:
		class := e.Class
		if class == "" {
			class = "other"
		}
		m.skips.WithLabelValues(e.Job, string(class)).Inc()
		if class == run.ClassBackendUnreachable {
			m.lockErrors.Inc()
		}
	}
}

// slotEnded updates the last success, the last failure and the failure
// streak from a slot's end; an attempt that a retry follows is not one.
func (m *Metrics) slotEnded(e run.End) {
	if e.Retrying {
		return
	}
	at := float64(e.Ended.UnixNano()) / 1e9
	switch e.Outcome {
	case run.OK:
		m.lastSuccess.WithLabelValues(e.Job).Set(at)
		m.failStreak.WithLabelValues(e.Job).Set(0)
	case run.Failed, run.Timeout, run.Error:
		m.lastFailure.WithLabelValues(e.Job).Set(at)
		m.failStreak.WithLabelValues(e.Job).Inc()
	}
}

// buildInfo is cronvisor_build_info: always 1, the build in its labels,
// as Prometheus' own exporters have it.
func buildInfo() prometheus.Collector {
	version, revision := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cronvisor_build_info",
		Help:        "The build of this cronvisor: version, VCS revision and Go version, in its labels; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()}})
	g.Set(1)
	return g
}

// nextFires reads the scheduler's next fires at scrape time: they change
// with every fire, and a gauge per job kept current would cost the loop.
type nextFireCollector struct {
	desc *prometheus.Desc
	read func() map[string]time.Time
}

func nextFires(read func() map[string]time.Time) prometheus.Collector {
	return nextFireCollector{read: read, desc: prometheus.NewDesc("cronvisor_next_fire_timestamp_seconds",
		"When the job fires next (Unix time, jitter included).", []string{"job"}, nil)}
}

func (c nextFireCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c nextFireCollector) Collect(ch chan<- prometheus.Metric) {
	for job, t := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(t.UnixNano())/1e9, job)
	}
}

// learnedCollector reads the learned figures at scrape time: they are the
// window's, which the learner keeps, not a series of observations.
type learnedCollector struct {
	seconds, runs *prometheus.Desc
	read          func() map[string]durations.Stats
}

func learned(read func() map[string]durations.Stats) prometheus.Collector {
	return learnedCollector{read: read,
		seconds: prometheus.NewDesc("cronvisor_job_duration_learned_seconds",
			"Quantiles of the job's last successful runs (at most 50, within keep_age): 0.05, 0.5, 0.95, 0.99 and 1 (the longest).",
			[]string{"job", "quantile"}, nil),
		runs: prometheus.NewDesc("cronvisor_job_duration_learned_runs",
			"Successful runs behind cronvisor_job_duration_learned_seconds (nothing is judged below 10).", []string{"job"}, nil)}
}

func (c learnedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.seconds; ch <- c.runs }

func (c learnedCollector) Collect(ch chan<- prometheus.Metric) {
	for job, st := range c.read() {
		if st.Runs == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(st.Runs), job)
		for _, q := range []struct {
			label string
			d     time.Duration
		}{{"0.05", st.P5}, {"0.5", st.P50}, {"0.95", st.P95}, {"0.99", st.P99}, {"1", st.Max}} {
			ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.GaugeValue, q.d.Seconds(), job, q.label)
		}
	}
}
