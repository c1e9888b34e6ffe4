package schedule

import (
	"time"
)

// crond replays cronie's main loop (cron.c) for one 5-field entry, minute by
// minute, as the reference that Next is held against. It keeps crond's own
// variables: clockTime is the wall-clock minute count set_time computes,
// timeRunning and virtualTime as in main(); it sleeps to the next wall
// minute at the offset it last saw (cron_sleep) and, on waking, classifies
// the jump of its minute count exactly as the main loop does. Every
// find_jobs call that would add the entry is a fire at the wake-up's
// instant; several in one wake-up are listed in the order crond adds them.
// Fires are returned with second precision; Next's burst slots a
// nanosecond apart compare equal once truncated.
func crond(s *cronSchedule, from time.Time, n int, until time.Time) []time.Time {
	gmtoff := func(u int64) int64 { return int64(offsetAt(s.loc, time.Unix(u, 0))) }
	clockTime := func(u int64) int64 { return floorDiv(u+gmtoff(u), 60) }
	now := from.Unix()
	off := gmtoff(now)
	timeRunning := clockTime(now)
	virtualTime := timeRunning
	var fires []time.Time
	findJobs := func(vtime int64, doWild, doNonWild bool) {
		wall := time.Unix(vtime*60, 0).UTC()
		if !crondMatches(s, wall) {
			return
		}
		if (doNonWild && s.fixed) || (doWild && !s.fixed) {
			fires = append(fires, time.Unix(now, 0).UTC())
		}
	}
	for len(fires) < n && now < until.Unix() {
		// cron_sleep(timeRunning + 1), then set_time, until the minute moves.
		for clockTime(now) == timeRunning {
			wake := (timeRunning+1)*60 - off
			if wake <= now { // cron_sleep returns at once; set_time again
				wake = now + 1
			}
			now, off = wake, gmtoff(wake)
		}
		if now >= until.Unix() {
			break
		}
		timeRunning = clockTime(now)
		switch timeDiff := timeRunning - virtualTime; {
		case timeDiff == 1:
			virtualTime = timeRunning
			findJobs(virtualTime, true, true)
		case timeDiff > 3*60 || timeDiff < -3*60: // large
			virtualTime = timeRunning
			findJobs(timeRunning, true, true)
		case timeDiff > 5: // medium
			findJobs(timeRunning, true, false)
			for virtualTime < timeRunning {
				virtualTime++
				findJobs(virtualTime, false, true)
			}
		case timeDiff > 0: // small
			for virtualTime < timeRunning {
				virtualTime++
				findJobs(virtualTime, true, true)
			}
		default: // negative
			findJobs(timeRunning, true, false)
		}
	}
	if len(fires) > n {
		fires = fires[:n]
	}
	return fires
}

// crondMatches is find_jobs' test of one wall-clock minute, written from
// cron.c rather than from the code under test.
func crondMatches(s *cronSchedule, wall time.Time) bool {
	bit := func(mask uint64, v int) bool { return mask>>uint(v)&1 == 1 }
	dom, dow := bit(s.dom, wall.Day()), bit(s.dow, int(wall.Weekday()))
	day := dom || dow
	if s.domStar || s.dowStar {
		day = dom && dow
	}
	return bit(s.minute, wall.Minute()) && bit(s.hour, wall.Hour()) &&
		bit(s.month, int(wall.Month())) && day
}
